package appserver

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/codexd/codexd/jsonrpc"
)

// Client is an in-process client of a Server: typed params and results,
// typed notifications and server requests, and no JSON text anywhere. Its
// requests take the same path as a network connection's (initialization,
// experimental gating, handlers, deferred answers, fan-out), so it sees
// exactly what a JSON client sees, as Go values. It is what embedders and
// `codexd exec` use.
//
// Messages must be read on their own goroutine: the server waits for a
// client whose queue is full (backpressure, as on stdio), and answering a
// server request never waits for anything.
type Client struct {
	srv      *Server
	sess     *session
	messages chan Message
	done     chan struct{}

	mu       sync.Mutex
	pending  map[int64]chan result
	nextID   int64
	inflight int
	closed   bool
}

// Message is a notification or a server request sent to a Client.
type Message struct {
	Method string
	// Params is the typed params value (an appproto type). It may be shared
	// with other clients: treat it as read-only.
	Params any
	// EmittedAtMs is set for notifications.
	EmittedAtMs int64
	// ID is set for a server request; answer it with Respond or
	// RespondError.
	ID *jsonrpc.ID
}

type result struct {
	res any
	err error
}

// NewClient connects an in-process client. Call initialize first, as any
// client must.
func (s *Server) NewClient() (*Client, error) {
	c := &Client{
		srv:      s,
		messages: make(chan Message, s.cfg.ClientQueue),
		done:     make(chan struct{}),
		pending:  make(map[int64]chan result),
	}
	sess, err := s.addSession(inprocPeer{c})
	if err != nil {
		return nil, err
	}
	c.sess = sess
	return c, nil
}

// Messages delivers notifications and server requests, in order.
func (c *Client) Messages() <-chan Message { return c.messages }

// Done is closed when the client is closed.
func (c *Client) Done() <-chan struct{} { return c.done }

// Close disconnects the client: its subscriptions end, server requests
// that nobody else can answer are cancelled, its processes are killed.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.done)
	c.mu.Unlock()
	c.sess.close()
	return nil
}

// Call makes the request m with params p through c and returns its
// result. Errors are *jsonrpc.Error values, as a JSON client would get,
// or jsonrpc.ErrClosed / jsonrpc.ErrCancelled.
func Call[P, R any](ctx context.Context, c *Client, m jsonrpc.Method[P, R], p P) (R, error) {
	var zero R
	res, err := c.call(ctx, m.Name(), p)
	if err != nil {
		return zero, err
	}
	switch r := res.(type) {
	case R:
		return r, nil
	case *R:
		return *r, nil
	}
	return zero, fmt.Errorf("app-server: %s returned %T", m.Name(), res)
}

// CallRaw makes a request whose params are any typed value, for methods
// without a typed definition (they are refused as a JSON client's would
// be).
func (c *Client) CallRaw(ctx context.Context, method string, params any) (any, error) {
	return c.call(ctx, method, params)
}

func (c *Client) call(ctx context.Context, method string, params any) (any, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, jsonrpc.ErrClosed
	}
	if c.inflight >= c.srv.cfg.MaxInbound {
		c.mu.Unlock()
		return nil, jsonrpc.NewError(jsonrpc.CodeOverloaded, jsonrpc.OverloadedMessage)
	}
	id := c.nextID
	c.nextID++
	ch := make(chan result, 1)
	c.pending[id] = ch
	c.inflight++
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.inflight--
		c.mu.Unlock()
	}()
	res, err := c.srv.dispatch(ctx, &call{sess: c.sess, id: jsonrpc.Int64ID(id)}, method, params)
	if errors.Is(err, errDeferred) {
		select {
		case r := <-ch:
			res, err = r.res, r.err
		case <-ctx.Done():
			return nil, jsonrpc.ErrCancelled
		case <-c.done:
			return nil, jsonrpc.ErrClosed
		}
	}
	if err != nil {
		return nil, wireError(err)
	}
	return res, nil
}

// wireError is err as a JSON client would receive it.
func wireError(err error) error {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// Respond answers the server request id with result (a value of the
// request's response type, or a pointer to one). Later answers, and
// answers to requests another client won, are ignored.
func (c *Client) Respond(id jsonrpc.ID, result any) {
	c.srv.answer(c.sess, id.Int(), result, nil)
}

// RespondError answers the server request id with an error.
func (c *Client) RespondError(id jsonrpc.ID, err *jsonrpc.Error) {
	c.srv.answer(c.sess, id.Int(), nil, err)
}

// inprocPeer delivers a session's messages to its Client.
type inprocPeer struct{ c *Client }

func (p inprocPeer) deliver(m Message) error {
	select {
	case <-p.c.done:
		return jsonrpc.ErrClosed
	default:
	}
	select {
	case p.c.messages <- m:
		return nil
	case <-p.c.done:
		return jsonrpc.ErrClosed
	}
}

func (p inprocPeer) notify(n *note) error {
	return p.deliver(Message{Method: n.method, Params: n.params, EmittedAtMs: n.emittedAtMs})
}

func (p inprocPeer) request(id int64, r *outRequest) error {
	rid := jsonrpc.Int64ID(id)
	return p.deliver(Message{Method: r.method, Params: r.params, ID: &rid})
}

func (p inprocPeer) respond(id jsonrpc.ID, res any, err error) error {
	p.c.mu.Lock()
	ch := p.c.pending[id.Int()]
	p.c.mu.Unlock()
	if ch == nil {
		return fmt.Errorf("app-server: no request %s in flight", id)
	}
	select {
	case ch <- result{res, err}:
		return nil
	default:
		return fmt.Errorf("app-server: request %s was already answered", id)
	}
}

func (p inprocPeer) shutdown() { _ = p.c.Close() }
