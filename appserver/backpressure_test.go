package appserver

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/jsonrpc"
)

// stallConn is the server's end of a pipe whose writes can be held, as a
// client that stops reading holds a stdio server's writes.
type stallConn struct {
	net.Conn
	mu   sync.Mutex
	gate chan struct{}
}

// stall holds every write from now until the returned func is called.
func (s *stallConn) stall() (resume func()) {
	ch := make(chan struct{})
	s.mu.Lock()
	s.gate = ch
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.gate = nil
		s.mu.Unlock()
		close(ch)
	}
}

func (s *stallConn) Write(b []byte) (int, error) {
	s.mu.Lock()
	gate := s.gate
	s.mu.Unlock()
	if gate != nil {
		<-gate
	}
	return s.Conn.Write(b)
}

// dialStalled is dial, with the server's writes under the test's control.
func (e *env) dialStalled(name string) (*jclient, *stallConn) {
	e.t.Helper()
	srvPipe, cliSide := net.Pipe()
	srvSide := &stallConn{Conn: srvPipe}
	return e.dialOn(name, srvSide, cliSide, e.srv.ServeStream, nil), srvSide
}

// deltaCounter's threads count the agent-message deltas the app-server's
// listener has taken from them, and close reached once it took n.
type deltaCounter struct {
	*agenttest.Core
	n       int64
	took    atomic.Int64
	reached chan struct{}
}

func (d *deltaCounter) StartThread(ctx context.Context, o agent.StartOptions) (*agent.Loaded, error) {
	l, err := d.Core.StartThread(ctx, o)
	if err != nil {
		return nil, err
	}
	inner := l.Thread
	out := make(chan agent.Event)
	go func() {
		defer close(out)
		for ev := range inner.Events() {
			out <- ev // unbuffered: the listener has taken it
			if _, ok := ev.Msg.(agent.AgentMessageDelta); ok && d.took.Add(1) == d.n {
				close(d.reached)
			}
		}
	}()
	l.Thread = &gatedThread{Thread: inner, out: out}
	return l, nil
}

// On stdio (any stream of its own) a client that stops reading holds the
// server back instead of being cut: with its reader parked, the server has
// far more to send than its outbound queue holds, and once the client reads
// again every message arrives, in order, and the connection is still there.
func TestStdioBackpressure(t *testing.T) {
	const deltas, size, queue = 200, 16 << 10, 64 << 10
	chunk := strings.Repeat("y", size)
	core := &deltaCounter{Core: agenttest.New(agenttest.Options{Turn: func(tn *agenttest.Turn) {
		tn.Emit(agent.ItemStarted{Item: &agent.AgentMessage{ID: "big"}})
		for i := 0; i < deltas; i++ {
			if !tn.Emit(agent.AgentMessageDelta{ItemID: "big", Delta: chunk}) {
				return
			}
		}
		tn.Emit(agent.ItemCompleted{Item: &agent.AgentMessage{ID: "big", Text: "done"}})
	}}), reached: make(chan struct{})}
	// Past this many deltas the outbound queue (and the batch being
	// written, which the pipe does not take) is full.
	core.n = int64(queue/size) + 0
	cut := make(chan struct{}, 1)
	e := newEnvWith(t, core, Config{MaxQueuedBytes: queue, Logger: slog.New(cutSignal{cut})})
	c, stalled := e.dialStalled("stdio")
	c.initialize(nil)
	thread := c.startThread(nil)
	c.barrier()
	// The client stops reading: the server's next write blocks in the
	// stream, as it would on a full pipe.
	resume := stalled.stall()
	c.requestID("50", appproto.MethodTurnStart, map[string]any{"threadId": thread, "input": text("big")})
	select {
	case <-core.reached:
	case <-time.After(wait):
		t.Fatalf("the listener took only %d deltas", core.took.Load())
	}
	resume()
	c.response("50")
	got := 0
	for got < deltas {
		d := c.note("item/agentMessage/delta")
		if len(d.str(t, "/delta")) != size {
			t.Fatalf("delta %d: %d bytes", got, len(d.str(t, "/delta")))
		}
		got++
	}
	if done := c.note("turn/completed"); done.str(t, "/turn/status") != "completed" {
		t.Fatalf("turn: %s", done)
	}
	select {
	case <-cut:
		t.Fatal("the server cut a stdio client for reading slowly")
	default:
	}
	c.barrier() // still connected
}

// dialStalledAs is dialStalled served as transport (the WebSocket policy
// for "websocket": a client too slow to read is cut).
func (e *env) dialStalledAs(name, transport string) (*jclient, *stallConn) {
	e.t.Helper()
	srvPipe, cliSide := net.Pipe()
	srvSide := &stallConn{Conn: srvPipe}
	serve := func(s jsonrpc.Stream) error { return e.srv.ServeStreamFrom(s, transport, name) }
	// The server's writes may be parked at the gate: open it, so that the
	// server can end.
	release := func() {
		srvSide.mu.Lock()
		gate := srvSide.gate
		srvSide.mu.Unlock()
		if gate != nil {
			select {
			case <-gate:
			default:
				close(gate)
			}
		}
	}
	return e.dialOn(name, srvSide, cliSide, serve, release), srvSide
}

// A network client whose socket is full and that asks something answered
// under the thread's lock (here turn/steer) must not hold the thread back:
// its answer waits in its own queue, and the other subscribers still see
// the turn through to the end.
func TestStalledClientAnswerDoesNotHoldTheThread(t *testing.T) {
	gate := agenttest.NewGate()
	e := newEnv(t, agenttest.Options{Turn: plainFirst(blockedTurn(gate))}, Config{})
	stuck, stalled := e.dialStalledAs("stuck", "websocket")
	other := e.dial("other")
	stuck.initialize(nil)
	other.initialize(nil)
	thread := other.startThread(nil)
	join(other, stuck, thread)
	turn := other.startTurn(thread, "go")
	stuck.note("item/agentMessage/delta")
	stuck.barrier()
	stalled.stall() // released at cleanup
	stuck.request(appproto.MethodTurnSteer, map[string]any{"threadId": thread, "expectedTurnId": turn, "input": text("more")})
	// The steer reached the core once the steered message is projected.
	other.next("the steered message", func(m *wmsg) bool {
		return m.Method == "item/completed" && strings.Contains(string(m.Params), `"more"`)
	})
	gate.Open()
	if done := other.note("turn/completed"); done.str(t, "/turn/status") != "completed" {
		t.Fatalf("turn: %s", done)
	}
}

// A Unix-socket client that stops reading is cut, as a WebSocket one is:
// the socket serves many clients, and one that does not read must not hold
// back the thread the others watch.
func TestUnixSlowClientCut(t *testing.T) {
	const deltas, size = 200, 16 << 10
	chunk := strings.Repeat("z", size)
	cut := make(chan struct{}, 1)
	e := newEnv(t, agenttest.Options{Turn: plainFirst(func(tn *agenttest.Turn) {
		tn.Emit(agent.ItemStarted{Item: &agent.AgentMessage{ID: "big"}})
		for i := 0; i < deltas; i++ {
			if !tn.Emit(agent.AgentMessageDelta{ItemID: "big", Delta: chunk}) {
				return
			}
		}
		tn.Emit(agent.ItemCompleted{Item: &agent.AgentMessage{ID: "big", Text: "done"}})
	})}, Config{MaxQueuedBytes: 64 << 10, Logger: slog.New(cutSignal{cut})})
	slow, stalled := e.dialStalledAs("slow", "unix")
	fast := e.dial("fast")
	slow.initialize(nil)
	fast.initialize(nil)
	thread := fast.startThread(nil)
	join(fast, slow, thread)
	stalled.stall() // released at cleanup
	fast.startTurn(thread, "big")
	for i := 0; i < deltas; i++ {
		fast.note("item/agentMessage/delta")
	}
	if done := fast.note("turn/completed"); done.str(t, "/turn/status") != "completed" {
		t.Fatalf("turn: %s", done)
	}
	select {
	case <-cut:
	case <-time.After(wait):
		t.Fatal("the slow Unix-socket client was not cut")
	}
	select {
	case <-slow.done:
	case <-time.After(wait):
		t.Fatal("the slow client's connection is still open")
	}
}
