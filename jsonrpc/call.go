// Outbound calls: the pending table, from reserving an id to the response,
// a timeout, a cancelled context or a cancelled scope.

package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// CallOptions adjust one outbound call.
type CallOptions struct {
	// Cleanup lets the call use the slot kept free for cleanup (terminate,
	// close), so it goes out even when the regular slots are full.
	Cleanup bool
	// ServerRequest puts the call in the server-to-client table.
	ServerRequest bool
	// Scope groups calls for CancelScope (for example, a thread id).
	Scope string
	// Timeout overrides Options.CallTimeout for this call.
	Timeout time.Duration
}

type pendingCall struct {
	slot  slotKind
	scope string
	done  chan struct{}
	resp  *Response
	err   error
}

// failPendingNow fails every pending call as soon as the reader stops, so
// callers learn of the loss without waiting for handlers to drain. Every
// response read before this point was already delivered, in order.
func (c *Conn) failPendingNow() {
	c.mu.Lock()
	pending := c.state.pending
	c.state.pending = map[ID]*pendingCall{}
	c.state.regular, c.state.cleanup, c.state.serverRq = 0, 0, 0
	c.mu.Unlock()
	for _, p := range pending {
		p.err = ErrClosed
		close(p.done)
	}
}

func (c *Conn) handleResponse(r *Response) error {
	c.mu.Lock()
	p, ok := c.state.pending[r.ID]
	if ok {
		c.removePendingLocked(r.ID, p)
	}
	c.mu.Unlock()
	if ok {
		p.resp = r
		close(p.done)
		return nil
	}
	if c.opts.OnUnknownResponse != nil {
		return c.opts.OnUnknownResponse(context.WithValue(c.ctx, ctxKey{}, &ctxVal{conn: c}), r)
	}
	c.log.Warn("jsonrpc: response to no pending call", "id", r.ID.String())
	return nil
}

func (c *Conn) removePendingLocked(id ID, p *pendingCall) {
	delete(c.state.pending, id)
	switch p.slot {
	case slotRegular:
		c.state.regular--
	case slotCleanup:
		c.state.cleanup--
	case slotServer:
		c.state.serverRq--
	}
}

// Call sends a request and decodes its result into result (which may be nil
// to discard it). It returns a remote *Error, ErrClosed, ErrTimeout,
// ErrCancelled or ErrOverCapacity.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	return c.CallWith(ctx, method, params, result, CallOptions{})
}

// CallWith is Call with options.
func (c *Conn) CallWith(ctx context.Context, method string, params, result any, opts CallOptions) error {
	raw, scratch, err := marshalValue(params)
	if err != nil {
		return err
	}
	id, p, err := c.reserve(opts)
	if err != nil {
		putScratch(scratch)
		return err
	}
	req := Request{ID: id, Method: method, Params: raw, Trace: TraceFrom(ctx)}
	msg := appendRequest(make([]byte, 0, 64+len(raw)), &req)
	putScratch(scratch)
	// One timeout covers the whole call: waiting for room in the outbound
	// queue as well as for the response.
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = c.opts.CallTimeout
	}
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	if err := c.send(ctx, timer, msg, false, false); err != nil {
		c.forget(id, p)
		return err
	}
	resp, err := c.wait(ctx, timer, id, p)
	if err != nil {
		return err
	}
	if resp.Error != nil {
		return resp.Error
	}
	if result == nil {
		return nil
	}
	if err := unmarshal(resp.Result, result); err != nil {
		return fmt.Errorf("jsonrpc: cannot decode result of %s: %w", method, err)
	}
	return nil
}

// reserve takes a slot in the pending table and allocates the call's id.
func (c *Conn) reserve(opts CallOptions) (ID, *pendingCall, error) {
	p := &pendingCall{done: make(chan struct{}), scope: opts.Scope}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state.closing {
		return ID{}, nil, ErrClosed
	}
	switch {
	case opts.ServerRequest:
		if c.state.serverRq >= c.opts.MaxServerRequests {
			return ID{}, nil, ErrOverCapacity
		}
		c.state.serverRq++
		p.slot = slotServer
	case c.state.regular < c.opts.MaxPending:
		c.state.regular++
		p.slot = slotRegular
	case opts.Cleanup && c.state.cleanup < 1:
		c.state.cleanup++
		p.slot = slotCleanup
	default:
		return ID{}, nil, ErrOverCapacity
	}
	c.state.nextID++
	id := Int64ID(c.state.nextID)
	c.state.pending[id] = p
	return id, p, nil
}

// forget removes a pending call that will never be answered.
func (c *Conn) forget(id ID, p *pendingCall) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state.pending[id] != p {
		return false
	}
	c.removePendingLocked(id, p)
	return true
}

func (c *Conn) wait(ctx context.Context, timer <-chan time.Time, id ID, p *pendingCall) (*Response, error) {
	var err error
	select {
	case <-p.done:
		return p.resp, p.err
	case <-ctx.Done():
		err = ErrCancelled
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = ErrTimeout
		}
	case <-timer:
		err = ErrTimeout
	}
	if c.forget(id, p) {
		return nil, err
	}
	// The response (or the close) won the race; it is on its way.
	<-p.done
	return p.resp, p.err
}

// Pending reports the number of outbound calls waiting for a response.
func (c *Conn) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.state.pending)
}

// CancelScope fails every pending call made with the given scope with err
// (ErrCancelled when err is nil), and returns how many it failed. The late
// responses to those calls go to OnUnknownResponse.
func (c *Conn) CancelScope(scope string, err error) int {
	if err == nil {
		err = ErrCancelled
	}
	c.mu.Lock()
	var hit []*pendingCall
	for id, p := range c.state.pending {
		if p.scope == scope {
			c.removePendingLocked(id, p)
			hit = append(hit, p)
		}
	}
	c.mu.Unlock()
	for _, p := range hit {
		p.err = err
		close(p.done)
	}
	return len(hit)
}

// CompletePending completes the pending call id as if its response had
// arrived with result (or with rerr, when non-nil). It reports whether such a
// call was pending.
func (c *Conn) CompletePending(id ID, result jsontext.Value, rerr *Error) bool {
	c.mu.Lock()
	p, ok := c.state.pending[id]
	if ok {
		c.removePendingLocked(id, p)
	}
	c.mu.Unlock()
	if !ok {
		return false
	}
	p.resp = &Response{ID: id, Result: result, Error: rerr}
	close(p.done)
	return true
}
