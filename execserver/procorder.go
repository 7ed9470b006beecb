package execserver

import (
	"context"
	"sync"

	"github.com/go-json-experiment/json"

	"github.com/codexd/codexd/execproto"
	"github.com/codexd/codexd/jsonrpc"
)

// procOrder makes the requests about one process take effect in the order
// they arrive on a connection, as they do in Codex, which runs a
// connection's requests one at a time, while codexd runs them side by side
// (a long-polling process/read must not hold up the rest).
//
// The order that matters is the one of the requests that change what a
// process is: process/start and process/terminate, its controls. Every
// request naming a process waits, before it runs, for the controls of
// that process that arrived before it. So a terminate pipelined behind a
// start kills what the start started, and a write pipelined behind a
// terminate is refused. Nothing waits for a write or a read: a terminate
// must get through even when writes to a child that never reads its stdin
// are parked.
//
// Invariant: no control waits for a handler slot (both are unbounded, see
// unbounded), so whatever waits on one is released however many slots
// its waiters hold.
type procOrder struct {
	mu sync.Mutex
	// last is, per process id, the control admitted last and not done.
	last map[string]chan struct{}
	// admitted holds, per request id, what its handler must wait for and
	// what it must close when it is done; taken by the handler.
	admitted map[jsonrpc.ID]procTurn
}

type procTurn struct {
	pid   string
	after chan struct{} // the previous control of pid; nil when none
	done  chan struct{} // a control's own; nil for the others
}

// procMethod reports whether method names a process, and whether it is a
// control.
func procMethod(method string) (names, control bool) {
	switch method {
	case execproto.MethodProcessStart, execproto.MethodProcessTerminate:
		return true, true
	case execproto.MethodProcessWrite, execproto.MethodProcessRead, execproto.MethodProcessSignal:
		return true, false
	}
	return false, false
}

// admit runs on the reader, in arrival order, for every request.
func (o *procOrder) admit(req *jsonrpc.Request) {
	names, control := procMethod(req.Method)
	if !names {
		return
	}
	if !control {
		// The common case, a write or read with no control in flight, is
		// decided without decoding its params (a write's may be large).
		o.mu.Lock()
		idle := len(o.last) == 0
		o.mu.Unlock()
		if idle {
			return
		}
	}
	var p struct {
		ProcessID string `json:"processId"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return // the handler refuses the params
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.last == nil {
		o.last = make(map[string]chan struct{})
		o.admitted = make(map[jsonrpc.ID]procTurn)
	}
	turn := procTurn{pid: p.ProcessID, after: o.last[p.ProcessID]}
	if control {
		turn.done = make(chan struct{})
		o.last[p.ProcessID] = turn.done
	}
	if turn.after == nil && turn.done == nil {
		return // nothing to wait for, nothing to tell
	}
	o.admitted[req.ID] = turn
}

// wrap returns h, with each request waiting for its turn.
func (o *procOrder) wrap(h jsonrpc.Handler) jsonrpc.Handler {
	return jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if names, _ := procMethod(req.Method); !names {
			return h.Handle(ctx, req) // admit recorded nothing
		}
		o.mu.Lock()
		turn, ok := o.admitted[req.ID]
		delete(o.admitted, req.ID)
		o.mu.Unlock()
		if !ok {
			return h.Handle(ctx, req)
		}
		if turn.done != nil {
			defer o.finish(turn)
		}
		if turn.after != nil {
			select {
			case <-turn.after:
			case <-ctx.Done(): // the connection is closing: the handler says so
			}
		}
		return h.Handle(ctx, req)
	})
}

// finish marks a control done.
func (o *procOrder) finish(turn procTurn) {
	o.mu.Lock()
	if o.last[turn.pid] == turn.done {
		delete(o.last, turn.pid)
	}
	o.mu.Unlock()
	close(turn.done)
}
