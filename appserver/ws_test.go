package appserver

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/coder/websocket"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/jsonrpc"
	"github.com/codexd/codexd/rpcserve"
)

// listen serves the env's server on a loopback WebSocket listener.
func (e *env) listen(opts rpcserve.Options) string {
	e.t.Helper()
	addr, _ := jsonrpc.ParseListenURL("ws://127.0.0.1:0")
	l, err := rpcserve.Listen(e.srv, addr, opts)
	if err != nil {
		e.t.Fatal(err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = l.Serve(nil, nil)
	}()
	e.t.Cleanup(func() {
		_ = l.Close()
		e.srv.Close() // ends the live connections
		<-served
	})
	return l.URL()
}

// dialWS connects a JSON client over a WebSocket.
func (e *env) dialWS(url, name string, header http.Header, rcvbuf int) (*jclient, *websocket.Conn) {
	e.t.Helper()
	opts := &websocket.DialOptions{HTTPHeader: header}
	if rcvbuf > 0 {
		// A small, fixed receive buffer (no autotuning) bounds what the
		// kernel holds for a client that stops reading.
		d := &net.Dialer{Control: func(network, address string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, rcvbuf) })
			return cmp.Or(err, serr)
		}}
		tr := &http.Transport{DialContext: d.DialContext}
		opts.HTTPClient = &http.Client{Transport: tr}
		e.t.Cleanup(tr.CloseIdleConnections)
	}
	ws, _, err := websocket.Dial(context.Background(), url, opts)
	if err != nil {
		e.t.Fatal(err)
	}
	ws.SetReadLimit(-1)
	c := newJClient(e.t, name, closerFunc(func() error { return ws.CloseNow() }))
	c.recv = func() ([]byte, error) {
		_, b, err := ws.Read(context.Background())
		return b, err
	}
	c.write = func(b []byte) error { return ws.Write(context.Background(), websocket.MessageText, b) }
	go c.read()
	e.t.Cleanup(func() {
		ws.CloseNow()
		<-c.done
	})
	return c, ws
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// Over WebSocket: the health probes, the refusal of browsers, the bearer
// token, and a client that stops reading is disconnected with a reason
// while another goes on unaffected.
func TestWebSocketSlowClientDisconnected(t *testing.T) {
	const deltas, size, rcvbuf = 400, 16 << 10, 64 << 10
	chunk := strings.Repeat("x", size)
	cut := make(chan struct{}, 1)
	// The script goes at the pace of the client that reads (one delta per
	// ack), so that only the one that stops reading falls behind.
	ack := make(chan struct{})
	e := newEnv(t, agenttest.Options{Turn: plainFirst(func(tn *agenttest.Turn) {
		tn.Emit(agent.ItemStarted{Item: &agent.AgentMessage{ID: "big"}})
		for i := 0; i < deltas; i++ {
			if !tn.Emit(agent.AgentMessageDelta{ItemID: "big", Delta: chunk}) {
				return
			}
			select {
			case <-ack:
			case <-tn.Done():
				return
			}
		}
		tn.Emit(agent.ItemCompleted{Item: &agent.AgentMessage{ID: "big", Text: "done"}})
	})}, Config{MaxQueuedBytes: 256 << 10, Logger: slog.New(cutSignal{cut})})
	url := e.listen(rpcserve.Options{AuthToken: "secret"})
	httpURL := "http" + strings.TrimPrefix(url, "ws")
	for _, path := range []string{"/readyz", "/healthz"} {
		resp, err := http.Get(httpURL + path)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %v %v", path, resp, err)
		}
		resp.Body.Close()
	}
	req, _ := http.NewRequest("GET", httpURL+"/readyz", nil)
	req.Header.Set("Origin", "https://evil.example")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 403 {
		t.Fatalf("Origin: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if _, _, err := websocket.Dial(context.Background(), url, nil); err == nil {
		t.Fatal("upgrade without the token accepted")
	}
	auth := http.Header{"Authorization": {"Bearer secret"}}
	slow, slowWS := e.dialWS(url, "slow", auth, rcvbuf)
	fast, _ := e.dialWS(url, "fast", auth, 0)
	slow.initialize(nil)
	fast.initialize(nil)
	thread := slow.startThread(nil)
	join(slow, fast, thread)
	// The slow client stops reading (its reader goroutine is parked by
	// taking the connection's read side away) as the turn streams.
	slowReading := slow.readPause()
	slow.requestID("99", appproto.MethodTurnStart, map[string]any{"threadId": thread, "input": text("big")})
	// Past this many deltas the slow client's kernel buffers (its receive
	// buffer, twice rcvbuf, and our send buffer, at most wmem_max) and its
	// outbound queue are full, so it is cut on the way.
	bound := (2*rcvbuf + sysctlInt(t, "/proc/sys/net/ipv4/tcp_wmem", 2) + 256<<10 + 64<<10) / size
	if bound+50 > deltas {
		t.Skipf("this machine's socket buffers (%d deltas' worth) exceed the test's stream", bound)
	}
	var resume func()
	for i := 0; i < deltas; i++ {
		fast.note("item/agentMessage/delta")
		select {
		case <-cut:
			// The server has just cut the slow client. It now reads again,
			// as a client that was slow, not dead, would: it must find the
			// close frame after what the kernel held.
			// The server closes a connection whose close frame is not read
			// within seconds; the slow client now drains what the kernel
			// holds at once. Every notification it gets is the very bytes
			// the fast client got and checked (one encoding for all).
			slow.mu.Lock()
			slow.unchecked = true
			slow.mu.Unlock()
			resume = slowReading
			resume()
		default:
		}
		ack <- struct{}{}
	}
	done := fast.note("turn/completed")
	if done.str(t, "/turn/status") != "completed" {
		t.Fatalf("fast client: %s", done)
	}
	// The slow one was disconnected, with a close frame that says why.
	<-slow.done
	var ce websocket.CloseError
	if !errors.As(slow.readErr, &ce) || ce.Code != websocket.StatusPolicyViolation || !strings.Contains(ce.Reason, "slow") {
		t.Fatalf("slow client ended with %v", slow.readErr)
	}
	if resume == nil {
		t.Fatalf("the slow client was not cut within %d deltas", deltas)
	}
	_ = slowWS
}

// cutSignal is a log handler that signals the server's warning that it is
// disconnecting a client too slow to read.
type cutSignal struct{ ch chan struct{} }

func (c cutSignal) Enabled(context.Context, slog.Level) bool { return true }
func (c cutSignal) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "too slow") {
		select {
		case c.ch <- struct{}{}:
		default:
		}
	}
	return nil
}
func (c cutSignal) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c cutSignal) WithGroup(string) slog.Handler      { return c }

// sysctlInt reads field i of a sysctl file.
func sysctlInt(t *testing.T, path string, i int) int {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("%s: %v", path, err)
	}
	f := strings.Fields(string(b))
	n, err := strconv.Atoi(f[i])
	if err != nil {
		t.Skip(err)
	}
	return n
}
