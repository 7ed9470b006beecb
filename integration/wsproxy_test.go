//go:build linux

package integration

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// wsProxy sits between a WebSocket client and server and keeps a
// transcript of the messages each way, so that a failing end-to-end test
// can show what was said on the wire.
type wsProxy struct {
	target string
	srv    *http.Server
	URL    string
	start  time.Time

	mu    sync.Mutex
	lines []string
	wg    sync.WaitGroup
	// ctx ends every pump at Close, so that a test that fails with the
	// TUI and the server still up does not wait out its deadline here.
	ctx    context.Context
	cancel context.CancelFunc
}

func startWSProxy(target string) (*wsProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &wsProxy{target: target, URL: "ws://" + ln.Addr().String(), start: time.Now()}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

func (p *wsProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.wg.Add(1)
	defer p.wg.Done()
	up, _, err := websocket.Dial(r.Context(), p.target, nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	up.SetReadLimit(-1)
	down, err := websocket.Accept(w, r, nil)
	if err != nil {
		up.CloseNow()
		return
	}
	down.SetReadLimit(-1)
	ctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	var pumps sync.WaitGroup
	pump := func(from, to *websocket.Conn, dir string) {
		defer pumps.Done()
		defer cancel()
		for {
			typ, msg, err := from.Read(ctx)
			if err != nil {
				p.log(dir, "closed: "+err.Error())
				status := websocket.CloseStatus(err)
				if status == -1 {
					status = websocket.StatusGoingAway
				}
				_ = to.Close(status, "")
				return
			}
			p.log(dir, string(msg))
			if err := to.Write(ctx, typ, msg); err != nil {
				return
			}
		}
	}
	pumps.Add(2)
	go pump(down, up, ">>")
	go pump(up, down, "<<")
	pumps.Wait()
	up.CloseNow()
	down.CloseNow()
}

func (p *wsProxy) log(dir, msg string) {
	if len(msg) > 400 {
		msg = msg[:400] + "…"
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lines = append(p.lines, fmt.Sprintf("%7.3fs %s %s", time.Since(p.start).Seconds(), dir, msg))
}

// transcript returns the last n lines of the transcript.
func (p *wsProxy) transcript(n int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	lines := p.lines
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (p *wsProxy) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = p.srv.Shutdown(ctx)
	p.cancel()
	p.wg.Wait()
}
