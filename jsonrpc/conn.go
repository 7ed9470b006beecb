package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Stream carries whole messages. Read returns one message in a buffer that
// the stream never touches again (the decoder aliases it). Write sends one
// message; the Conn serialises calls to Write. Close unblocks a pending Read
// or Write.
//
// Neither Read nor Write takes a context: cancelling one call must not tear
// down a transport that other calls share, so the Conn ends blocked I/O only
// by closing the stream.
type Stream interface {
	Read() ([]byte, error)
	Write(msg []byte) error
	Close() error
}

// Defaults of Options.
const (
	DefaultMaxPending        = 1024
	DefaultMaxServerRequests = 256
	DefaultMaxInbound        = 1024
	DefaultMaxConcurrency    = 64
	DefaultDrainTimeout      = 5 * time.Second
)

// Options configure a Conn. The zero value is usable.
type Options struct {
	// Handler answers inbound requests and notifications. When nil, every
	// request gets -32601.
	Handler Handler
	// Limits bound the decoding of each inbound message.
	Limits Limits

	// MaxPending caps regular outbound calls in flight (default 1024). One
	// more slot is always kept for calls made with CallOptions.Cleanup.
	MaxPending int
	// MaxServerRequests caps calls made with CallOptions.ServerRequest
	// (default 256). They have a table of their own, so that a server's
	// requests to its client never starve the client's requests, or the
	// reverse.
	MaxServerRequests int
	// CallTimeout is the default timeout of outbound calls; 0 means none
	// beyond the caller's context.
	CallTimeout time.Duration

	// MaxInbound caps inbound requests admitted and not yet answered,
	// whether running, waiting for a worker or deferred (default 1024).
	// Beyond it, requests get -32001 "Server overloaded; retry later.".
	MaxInbound int
	// MaxConcurrency caps handlers running at once (default 64).
	MaxConcurrency int
	// IDPolicy, when set, vets the id of each inbound request; an error
	// rejects the request (an *Error is sent as is, others as -32600).
	IDPolicy func(ID) error
	// Unbounded, when set, picks requests that run without taking one of the
	// MaxConcurrency slots (they still count against MaxInbound): short
	// control requests, such as a terminate, that must get through even
	// when every slot is held by handlers waiting on something.
	Unbounded func(*Request) bool
	// OrderKey, when set, names an ordering key for a request: requests with
	// the same non-empty key run one at a time, in arrival order.
	OrderKey func(*Request) string
	// Admit, when set, runs on the reader for every request and notification
	// in arrival order, before the handler is scheduled. An error rejects a
	// request with that error; for a notification, it closes the connection.
	// ErrAsyncResponse means Admit has taken the request on itself and
	// answers it with Respond (possibly before returning): a server uses it
	// for a request that must finish before the next message is read, such
	// as a handshake. It must not block.
	Admit func(ctx context.Context, req *Request) error
	// OnUnknownResponse, when set, receives responses whose id matches no
	// pending call. A non-nil error closes the connection. When nil, such
	// responses are logged and dropped.
	OnUnknownResponse func(ctx context.Context, resp *Response) error
	// OnInvalid, when set, receives messages that failed to decode. It may
	// return a response to send (nil sends nothing) and an error to close the
	// connection. When nil, a request whose id was read gets -32600 with the
	// reason, and anything else gets it with a null id.
	OnInvalid func(ctx context.Context, err *DecodeError) (*Response, error)
	// MaxQueuedBytes bounds the outbound queue: the bytes of small messages
	// waiting behind the batch being written (default 1 MiB). A message
	// larger than it is a large message and goes through OutboundBudget.
	MaxQueuedBytes int
	// OnFullQueue says what a write that finds the queue full does:
	// FullQueueWait (the default) waits for room, honouring the writer's
	// context; FullQueueClose closes the connection at once.
	OnFullQueue FullQueuePolicy
	// OutboundBudget bounds the bytes of large outbound messages a
	// connection holds at once, from the moment they are reserved
	// (ReserveResponse) or encoded until they are written (default
	// DefaultOutboundBudget). A writer waits for its share as long as its
	// context allows; a message larger than the whole budget is refused
	// with a *TooLargeError, and a response that large is replaced by a
	// -32603 error naming the limit.
	OutboundBudget int64
	// DrainTimeout bounds how long Close waits for running handlers to
	// answer before it closes the stream under them (default 5s).
	DrainTimeout time.Duration
	// Logger receives what the connection cannot tell its peer. Default:
	// slog.Default().
	Logger *slog.Logger
}

// Conn is one side of a JSON-RPC connection; both clients and servers use it.
//
// All in-flight state lives in the state struct and changes only under mu:
// the pending table of outbound calls, the inbound requests in flight (which
// both guards against duplicate ids and holds deferred responses), the
// per-key queues, and whether the connection is closing. Three kinds of
// goroutine touch it: the reader (one per Conn), handler runners (at most
// MaxConcurrency at once) and callers. Writes go through the write queue
// (wq), so a message is never interleaved with another.
type Conn struct {
	stream Stream
	opts   Options
	log    *slog.Logger

	ctx    context.Context // cancelled when the connection starts to close
	cancel context.CancelFunc

	wq     writeQueue
	budget budget        // for large outbound messages; see write.go
	sem    chan struct{} // one token per running handler

	mu    sync.Mutex
	state connState

	handlers sync.WaitGroup // handler runners and inline work
	readDone chan struct{}
	done     chan struct{}
}

type connState struct {
	nextID   int64
	pending  map[ID]*pendingCall
	regular  int // regular calls in pending
	cleanup  int // calls in the reserved cleanup slot (0 or 1)
	serverRq int // calls in the server-to-client table

	// inbound holds every admitted request until both its handler has
	// returned and it is answered (its id stays taken that long);
	// unanswered counts those in it not answered yet, which is what
	// MaxInbound caps: a client cannot tell an answered request whose
	// handler is still finishing from one that is done.
	inbound    map[ID]*inboundCall
	unanswered int
	queues     map[string][]*inboundCall // waiting requests per order key

	closing bool
	// drained: closing, and every handler has returned; until then a
	// handler's notifications still go out with its responses.
	drained     bool
	closeErr    error        // why the connection ended
	closeStatus *closeStatus // what to tell a StatusCloser stream, if anything
}

type slotKind uint8

const (
	slotRegular slotKind = iota
	slotCleanup
	slotServer
)

type inboundCall struct {
	req       *Request
	ctx       context.Context
	returned  bool  // the handler has returned
	unbounded bool  // runs outside MaxConcurrency (Options.Unbounded)
	answered  bool  // the response has been written (or dropped on close)
	reserved  int64 // budget held for the response (ReserveResponse)
}

// NewConn starts serving stream: it reads until the stream ends or Close is
// called. Handlers find the Conn with [ConnFrom].
func NewConn(stream Stream, opts Options) *Conn {
	if opts.MaxPending <= 0 {
		opts.MaxPending = DefaultMaxPending
	}
	if opts.MaxServerRequests <= 0 {
		opts.MaxServerRequests = DefaultMaxServerRequests
	}
	if opts.MaxInbound <= 0 {
		opts.MaxInbound = DefaultMaxInbound
	}
	if opts.MaxConcurrency <= 0 {
		opts.MaxConcurrency = DefaultMaxConcurrency
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = DefaultDrainTimeout
	}
	if opts.MaxQueuedBytes <= 0 {
		opts.MaxQueuedBytes = DefaultMaxQueuedBytes
	}
	if opts.OutboundBudget <= 0 {
		opts.OutboundBudget = DefaultOutboundBudget
	}
	if opts.Handler == nil {
		opts.Handler = NewMux()
	}
	c := &Conn{
		stream:   stream,
		opts:     opts,
		log:      opts.Logger,
		sem:      make(chan struct{}, opts.MaxConcurrency),
		readDone: make(chan struct{}),
		done:     make(chan struct{}),
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.state.pending = make(map[ID]*pendingCall)
	c.state.inbound = make(map[ID]*inboundCall)
	c.state.queues = make(map[string][]*inboundCall)
	c.budget.limit = opts.OutboundBudget
	if ls, ok := stream.(interface{ setLimits(Limits) }); ok {
		ls.setLimits(opts.Limits)
	}
	go c.readLoop()
	return c
}

type ctxKey struct{}

type ctxVal struct {
	conn *Conn
	req  *Request
	in   *inboundCall // nil for notifications
}

// ConnFrom returns the connection that delivered the request being handled
// in ctx, or nil.
func ConnFrom(ctx context.Context) *Conn {
	if v, ok := ctx.Value(ctxKey{}).(*ctxVal); ok {
		return v.conn
	}
	return nil
}

// RequestFrom returns the request being handled in ctx, or nil.
func RequestFrom(ctx context.Context) *Request {
	if v, ok := ctx.Value(ctxKey{}).(*ctxVal); ok {
		return v.req
	}
	return nil
}

type traceKey struct{}

// WithTrace returns a context whose outgoing calls carry t.
func WithTrace(ctx context.Context, t *Trace) context.Context {
	return context.WithValue(ctx, traceKey{}, t)
}

// TraceFrom returns the trace context of ctx: the one set by WithTrace, or
// that of the request being handled.
func TraceFrom(ctx context.Context) *Trace {
	if t, ok := ctx.Value(traceKey{}).(*Trace); ok {
		return t
	}
	if r := RequestFrom(ctx); r != nil {
		return r.Trace
	}
	return nil
}

// Done is closed when the connection has ended and every handler returned,
// or, for a handler that ignores its cancelled context, once DrainTimeout
// has passed twice after Close: shutdown is always bounded.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err reports why the connection ended: nil after Close, or the error of
// the transport or of the protocol that ended it.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state.closeErr
}

// Close ends the connection gracefully and waits until it has ended: it
// stops admitting requests, cancels the contexts of running handlers and lets
// them write their responses (for up to DrainTimeout), fails pending outbound
// calls with ErrClosed, closes the stream and waits for every goroutine of
// the connection to end. A handler must not call Close on its own connection,
// as Close would wait for it: it calls Shutdown.
func (c *Conn) Close() error {
	c.shutdown(nil)
	<-c.done
	return nil
}

// Shutdown starts the same graceful close as Close but does not wait for it.
// Handlers use it to end their own connection.
func (c *Conn) Shutdown() { c.shutdown(nil) }

func (c *Conn) shutdown(reason error) {
	c.mu.Lock()
	if c.state.closing {
		c.mu.Unlock()
		return
	}
	c.state.closing = true
	c.state.closeErr = reason
	c.mu.Unlock()
	c.cancel()
	go c.finish()
}

// finish runs once: it waits for the handlers to drain, fails what is still
// pending, and releases the stream.
func (c *Conn) finish() {
	// Handlers see their context cancelled and return; their responses
	// still go out while the stream is open, unless a handler is stuck (a
	// peer that stopped reading can block a write forever).
	drained := make(chan struct{})
	go func() {
		c.handlers.Wait()
		c.mu.Lock()
		c.state.drained = true
		c.mu.Unlock()
		// Handlers may return with their responses still queued.
		q := &c.wq
		for {
			q.mu.Lock()
			if q.err != nil || !q.flushing && len(q.pending) == 0 {
				q.mu.Unlock()
				break
			}
			room := q.waitLocked()
			q.mu.Unlock()
			<-room
		}
		close(drained)
	}()
	t := time.NewTimer(c.opts.DrainTimeout)
	select {
	case <-drained:
	case <-t.C:
		c.log.Warn("jsonrpc: handlers did not drain in time; closing under them")
	}
	t.Stop()
	c.closeStream()
	// A Stream's Close must unblock its Read; one that does not (a reader
	// nobody can close) must not hold the shutdown forever.
	rt := time.NewTimer(c.opts.DrainTimeout)
	select {
	case <-c.readDone:
	case <-rt.C:
		c.log.Warn("jsonrpc: the stream's Read did not return after Close; leaving it")
	}
	rt.Stop()
	// A handler that ignores its cancelled context must not hold the
	// shutdown forever either: after one more DrainTimeout the connection
	// ends without it (its late response finds the stream closed).
	lt := time.NewTimer(c.opts.DrainTimeout)
	select {
	case <-drained:
	case <-lt.C:
		c.log.Error("jsonrpc: handlers still running after the connection closed; ending without them")
	}
	lt.Stop()
	c.budget.fail(ErrClosed)
	c.mu.Lock()
	pending := c.state.pending
	c.state.pending = map[ID]*pendingCall{}
	c.state.regular, c.state.cleanup, c.state.serverRq = 0, 0, 0
	c.state.inbound = map[ID]*inboundCall{}
	c.state.unanswered = 0
	c.state.queues = map[string][]*inboundCall{}
	c.mu.Unlock()
	for _, p := range pending {
		p.err = ErrClosed
		close(p.done)
	}
	close(c.done)
}

func (c *Conn) readLoop() {
	defer close(c.readDone)
	for {
		data, err := c.stream.Read()
		if refused, ok := err.(*DecodeError); ok {
			// The stream skipped the message; tell the peer and go on.
			if err := c.handleInvalid(refused); err != nil {
				c.failPendingNow()
				c.shutdown(err)
				return
			}
			continue
		}
		if err != nil {
			c.mu.Lock()
			closing := c.state.closing
			c.mu.Unlock()
			if !closing {
				c.failPendingNow()
				c.shutdown(fmt.Errorf("read: %w", err))
			}
			return
		}
		if err := c.handleMessage(data); err != nil {
			c.failPendingNow()
			c.shutdown(err)
			return
		}
	}
}

// handleMessage routes one inbound message. Only a fatal protocol error is
// returned; it ends the connection.
func (c *Conn) handleMessage(data []byte) error {
	msg, err := Decode(data, c.opts.Limits)
	if err != nil {
		var de *DecodeError
		if !errors.As(err, &de) {
			return err
		}
		return c.handleInvalid(de)
	}
	switch m := msg.(type) {
	case *Response:
		return c.handleResponse(m)
	case *Request:
		if m.IsCall() {
			c.handleCall(m)
			return nil
		}
		return c.handleNotification(m)
	}
	return nil
}

func (c *Conn) handleInvalid(de *DecodeError) error {
	if c.opts.OnInvalid != nil {
		resp, err := c.opts.OnInvalid(context.WithValue(c.ctx, ctxKey{}, &ctxVal{conn: c}), de)
		if resp != nil {
			c.writeResponse(resp)
		}
		return err
	}
	// A request whose id was read is answered to that id; anything else
	// gets the error with a null id, as JSON-RPC prescribes, so that the
	// peer learns what was wrong and where.
	id := ID{}
	if de.Request && de.ID.IsValid() {
		id = de.ID
	}
	c.writeResponse(&Response{ID: id, Error: &Error{Code: CodeInvalidRequest, Message: de.Error()}})
	return nil
}

func (c *Conn) handleNotification(req *Request) error {
	ctx := context.WithValue(c.ctx, ctxKey{}, &ctxVal{conn: c, req: req})
	if c.opts.Admit != nil {
		if err := c.opts.Admit(ctx, req); err != nil {
			return err
		}
	}
	_, err := c.opts.Handler.Handle(ctx, req)
	return err
}

func (c *Conn) handleCall(req *Request) {
	if c.opts.IDPolicy != nil {
		if err := c.opts.IDPolicy(req.ID); err != nil {
			we := toWireError(err)
			if !errors.As(err, new(*Error)) {
				we = &Error{Code: CodeInvalidRequest, Message: err.Error()}
			}
			c.writeResponse(&Response{ID: req.ID, Error: we})
			return
		}
	}
	cv := &ctxVal{conn: c, req: req}
	ctx := context.WithValue(c.ctx, ctxKey{}, cv)
	in := &inboundCall{req: req, ctx: ctx}
	cv.in = in
	c.mu.Lock()
	switch {
	case c.state.closing:
		c.mu.Unlock()
		return
	case c.state.inbound[req.ID] != nil:
		c.mu.Unlock()
		c.writeResponse(&Response{ID: req.ID, Error: &Error{Code: CodeInvalidRequest,
			Message: fmt.Sprintf("request id %s is already in flight", req.ID)}})
		return
	case c.state.unanswered >= c.opts.MaxInbound:
		c.mu.Unlock()
		c.writeResponse(&Response{ID: req.ID, Error: &Error{Code: CodeOverloaded, Message: OverloadedMessage}})
		return
	}
	c.state.inbound[req.ID] = in
	c.state.unanswered++
	// Counted while closing is known to be false, so that the drain in
	// finish (which starts after closing is set) waits for this request.
	c.handlers.Add(1)
	c.mu.Unlock()

	if c.opts.Admit != nil {
		if err := c.opts.Admit(ctx, req); err != nil {
			// ErrAsyncResponse: Admit took the request on itself (and may
			// already have answered it with Respond).
			if !errors.Is(err, ErrAsyncResponse) {
				c.answer(in, nil, err)
			}
			c.handlerReturned(in)
			c.handlers.Done()
			return
		}
	}
	in.unbounded = c.opts.Unbounded != nil && c.opts.Unbounded(req)
	key := ""
	if c.opts.OrderKey != nil {
		key = c.opts.OrderKey(req)
	}
	if key == "" {
		go c.run(in, "")
		return
	}
	c.mu.Lock()
	q, busy := c.state.queues[key]
	if busy {
		// The runner of this key picks it up when the ones before it end,
		// and is already counted.
		c.state.queues[key] = append(q, in)
		c.mu.Unlock()
		c.handlers.Done()
		return
	}
	c.state.queues[key] = q[:0]
	c.mu.Unlock()
	go c.run(in, key)
}

// run executes in, then, for an ordered key, every request queued behind it.
func (c *Conn) run(in *inboundCall, key string) {
	defer c.handlers.Done()
	for in != nil {
		// A request admitted before the connection started closing still
		// runs (with a cancelled context), so that what was asked before a
		// client hung up is answered while the stream drains.
		if !in.unbounded {
			c.sem <- struct{}{}
		}
		result, err := c.opts.Handler.Handle(in.ctx, in.req)
		if !in.unbounded {
			<-c.sem
		}
		// The id is released before the response is written, so a client
		// may reuse it as soon as it sees the answer.
		c.handlerReturned(in)
		if !errors.Is(err, ErrAsyncResponse) {
			c.answer(in, result, err)
		}
		in = nil
		if key != "" {
			c.mu.Lock()
			q := c.state.queues[key]
			if len(q) == 0 {
				delete(c.state.queues, key)
			} else {
				in = q[0]
				c.state.queues[key] = q[1:]
			}
			c.mu.Unlock()
		}
	}
}

// handlerReturned releases the id of in once both its handler returned and
// its response went out; until then a request with the same id is refused.
func (c *Conn) handlerReturned(in *inboundCall) {
	c.mu.Lock()
	in.returned = true
	if in.answered && c.state.inbound[in.req.ID] == in {
		delete(c.state.inbound, in.req.ID)
	}
	c.mu.Unlock()
}

// InFlight reports the number of inbound requests not yet answered.
func (c *Conn) InFlight() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state.unanswered
}
