package jsonrpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// The write path. Every message a Conn sends goes through one queue
// (writeQueue), so that messages are never interleaved, and is written by
// whichever writer finds no flush under way (the flusher), in batches.
//
// Memory is bounded in two ways:
//
//   - Small messages (up to Options.MaxQueuedBytes) wait in the queue, which
//     holds at most MaxQueuedBytes of them beyond the batch being written.
//     A writer that finds no room waits for it, honouring its context
//     (FullQueueWait), or, with FullQueueClose, closes the connection.
//   - A large message (over MaxQueuedBytes) could never fit the queue, and an
//     empty queue is no reason to take one of any size: it first takes its
//     size from the connection's budget (Options.OutboundBudget), waiting
//     while other large messages hold it, and gives it back once written.
//     One larger than the whole budget is refused. A handler about to build
//     a large result reserves its share before building it (ReserveResponse).
//
// So a connection holds at most about 2 × MaxQueuedBytes + OutboundBudget
// of outbound messages, whatever its peer and its handlers do.

// FullQueuePolicy says what a write does when the outbound queue is full.
type FullQueuePolicy uint8

const (
	// FullQueueWait makes writers wait for room (backpressure), as long as
	// their context allows. Right for a peer that reads at its own pace,
	// such as a client on stdio.
	FullQueueWait FullQueuePolicy = iota
	// FullQueueClose closes the connection instead: a peer that does not
	// keep up with what it subscribed to must not hold back the producers
	// that serve other peers. The stream is closed with a reason when it
	// supports it (StatusCloser): a WebSocket gets close status 1008.
	FullQueueClose
)

// DefaultMaxQueuedBytes and DefaultOutboundBudget are the defaults of
// Options.MaxQueuedBytes and Options.OutboundBudget.
const (
	DefaultMaxQueuedBytes = 1 << 20
	DefaultOutboundBudget = DefaultMaxMessage
)

// ErrSlowPeer is why a connection with FullQueueClose ended: its outbound
// queue was full. Writes fail with an error that wraps both it and ErrClosed.
var ErrSlowPeer = errors.New("jsonrpc: peer too slow to read: outbound queue full")

// StatusCloser is implemented by streams that can tell the peer why they
// close. The WebSocket stream sends a close frame with status and reason.
type StatusCloser interface {
	CloseWithStatus(status int, reason string) error
}

// StatusPolicyViolation is the WebSocket close status a connection closed
// for a slow peer uses (RFC 6455: "a message that violates its policy").
const StatusPolicyViolation = 1008

// outMsg is one message in the queue.
type outMsg struct {
	b      []byte
	pooled bool  // b came from msgPool and goes back once written
	charge int64 // bytes of the budget it holds (large messages only)
}

// writeQueue is the outbound half of a Conn.
type writeQueue struct {
	mu       sync.Mutex
	room     chan struct{} // closed when the queue shrinks, fails or stops flushing; nil when nobody waits
	pending  []outMsg
	spare    []outMsg
	bytes    int // of small messages in pending
	flushing bool
	err      error

	bufs [][]byte // the flusher's scratch for writeBatch
}

// wakeLocked wakes everyone waiting for room.
func (q *writeQueue) wakeLocked() {
	if q.room != nil {
		close(q.room)
		q.room = nil
	}
}

// waitLocked returns a channel closed at the next wake-up.
func (q *writeQueue) waitLocked() <-chan struct{} {
	if q.room == nil {
		q.room = make(chan struct{})
	}
	return q.room
}

// answer writes the response of in once; later answers are dropped.
func (c *Conn) answer(in *inboundCall, result any, herr error) bool {
	return c.answerWith(in, result, herr, false)
}

// answerWith is answer; with async the caller only queues the response
// and a background flusher writes it (see writeMany).
func (c *Conn) answerWith(in *inboundCall, result any, herr error, async bool) bool {
	c.mu.Lock()
	if in.answered {
		c.mu.Unlock()
		return false
	}
	in.answered = true
	if c.state.inbound[in.req.ID] == in {
		c.state.unanswered--
	}
	reserved := in.reserved
	in.reserved = 0
	if in.returned && c.state.inbound[in.req.ID] == in {
		delete(c.state.inbound, in.req.ID)
	}
	c.mu.Unlock()
	resp := &Response{ID: in.req.ID}
	var msg []byte
	if herr != nil {
		if errors.Is(herr, ErrClosed) && c.ctx.Err() != nil {
			c.budget.release(reserved)
			return true // nobody is listening any more
		}
		resp.Error = toWireError(herr)
	} else if rb, ok := result.(*ResultBuffer); ok {
		msg = rb.response(in.req.ID)
	} else {
		raw, scratch, err := marshalValue(result)
		if err != nil {
			resp.Error = &Error{Code: CodeInternalError, Message: "cannot encode result: " + err.Error()}
		} else {
			resp.Result = raw
		}
		defer putScratch(scratch) // the response is copied out of it below
	}
	if msg == nil {
		msg = appendResponse(make([]byte, 0, 64+len(resp.Result)), resp)
	}
	m := outMsg{b: msg}
	if size := int64(len(msg)); size > int64(c.opts.MaxQueuedBytes) {
		switch {
		case size <= reserved:
			c.budget.release(reserved - size)
		default:
			// Outgrown (or never made): give it back first, then wait for
			// the whole; see budget.
			c.budget.release(reserved)
			if err := c.budget.acquire(context.Background(), nil, size); err != nil {
				var tl *TooLargeError
				if !errors.As(err, &tl) {
					return true // the connection is gone
				}
				msg = appendResponse(nil, &Response{ID: in.req.ID, Error: &Error{Code: CodeInternalError,
					Message: fmt.Sprintf("response of %d bytes is over this connection's limit of %d bytes for responses in flight", tl.Size, tl.Limit)}})
				size = 0
			}
		}
		m = outMsg{b: msg, charge: size}
	} else {
		c.budget.release(reserved)
	}
	if err := c.writeMany(context.Background(), nil, []outMsg{m}, async); err != nil {
		c.log.Debug("jsonrpc: response not sent", "id", in.req.ID.String(), "err", err)
	}
	return true
}

// ReserveResponse reserves n bytes of the connection's OutboundBudget for
// the response to the request being handled in ctx, waiting while other
// large messages hold the budget, as long as ctx allows. A handler about to
// build a large result (a file's contents) calls it first: it then learns
// before building the result whether the response can be sent, and however
// many such handlers run at once, they hold no more than the budget. A
// request whose n alone is over the budget gets a *TooLargeError at once.
//
// The reservation is held until the response has been written (the
// response is charged its real size; a smaller one gives the rest back at
// once), or the connection ends. Calls add up.
func ReserveResponse(ctx context.Context, n int64) error {
	v, ok := ctx.Value(ctxKey{}).(*ctxVal)
	if !ok || v.in == nil {
		return errors.New("jsonrpc: ReserveResponse outside a request handler")
	}
	c := v.conn
	if err := c.budget.acquire(ctx, nil, n); err != nil {
		return err
	}
	c.mu.Lock()
	if v.in.answered {
		c.mu.Unlock()
		c.budget.release(n)
		return errors.New("jsonrpc: ReserveResponse after the request was answered")
	}
	v.in.reserved += n
	c.mu.Unlock()
	return nil
}

// ResultBuffer is a result that a handler encodes itself, into a buffer
// laid out so that the response is built around it without copying it. A
// result of hundreds of megabytes (a file's contents) then costs its size
// once instead of two or three times. Append exactly one JSON value to B
// (within the capacity asked for, or the response costs a copy after all),
// and return the *ResultBuffer as the result.
type ResultBuffer struct {
	// B is the encoded result; append to it.
	B   []byte
	buf []byte // B's backing array, headroom bytes before it
}

// resultHeadroom is room for `{"id":<id>,"result":` before the result.
const resultHeadroom = 128

// NewResultBuffer returns an empty result buffer with room for sizeHint
// bytes.
func NewResultBuffer(sizeHint int) *ResultBuffer {
	buf := make([]byte, resultHeadroom, resultHeadroom+sizeHint+1)
	return &ResultBuffer{B: buf[resultHeadroom:resultHeadroom], buf: buf}
}

// MarshalJSON returns B, so that a ResultBuffer passed where the engine
// marshals (a call's params) still encodes as its value.
func (rb *ResultBuffer) MarshalJSON() ([]byte, error) { return rb.B, nil }

// response builds the response to id around B, in place when B is still in
// its buffer and the head fits before it.
func (rb *ResultBuffer) response(id ID) []byte {
	var headArr [resultHeadroom]byte
	head := append(headArr[:0], `{"id":`...)
	head = id.appendJSON(head)
	head = append(head, `,"result":`...)
	inPlace := len(rb.B) > 0 && len(head) <= resultHeadroom && cap(rb.B) == cap(rb.buf)-resultHeadroom &&
		&rb.B[:1][0] == &rb.buf[resultHeadroom : resultHeadroom+1][0]
	if !inPlace {
		return appendResponse(make([]byte, 0, 64+len(rb.B)), &Response{ID: id, Result: rb.B})
	}
	start := resultHeadroom - len(head)
	msg := rb.buf[start : resultHeadroom+len(rb.B)]
	copy(msg, head)
	rb.B, rb.buf = nil, nil // the message owns the bytes now
	return append(msg, '}')
}

// Respond sends the deferred response to the inbound request id, whose
// handler returned (or will return) ErrAsyncResponse. Exactly one of result
// and herr is used. It fails if no such request is in flight or it was
// already answered.
func (c *Conn) Respond(id ID, result any, herr error) error {
	c.mu.Lock()
	in := c.state.inbound[id]
	c.mu.Unlock()
	if in == nil {
		return fmt.Errorf("jsonrpc: no request %s in flight", id)
	}
	if !c.answer(in, result, herr) {
		return fmt.Errorf("jsonrpc: request %s was already answered", id)
	}
	return nil
}

// RespondAsync is Respond for a caller that must not write to the stream
// itself: the response is queued, in order with everything else sent on
// the connection, and a background flusher writes it, as it does for
// notifications. A caller holding a lock that other producers need (a
// server's per-topic state) uses it, so that a peer that does not read
// cannot hold that lock through a blocked write. It still waits for room
// when the queue is full and the policy is FullQueueWait.
func (c *Conn) RespondAsync(id ID, result any, herr error) error {
	c.mu.Lock()
	in := c.state.inbound[id]
	c.mu.Unlock()
	if in == nil {
		return fmt.Errorf("jsonrpc: no request %s in flight", id)
	}
	if !c.answerWith(in, result, herr, true) {
		return fmt.Errorf("jsonrpc: request %s was already answered", id)
	}
	return nil
}

// writeResponse writes a response built by the engine itself (errors of
// decoding, admission and ids): always small.
func (c *Conn) writeResponse(r *Response) {
	buf := appendResponse(make([]byte, 0, 64+len(r.Result)), r)
	if err := c.send(context.Background(), nil, buf, false, false); err != nil {
		c.log.Debug("jsonrpc: response not sent", "id", r.ID.String(), "err", err)
	}
}

// send queues one message: a large one takes its size from the budget
// first (see the top of this file). ctx and timer (either may be nil) bound
// the waits. pooled says msg came from getMsgBuf.
func (c *Conn) send(ctx context.Context, timer <-chan time.Time, msg []byte, pooled, async bool) error {
	m := outMsg{b: msg, pooled: pooled}
	if len(msg) > c.opts.MaxQueuedBytes {
		if err := c.budget.acquire(ctx, timer, int64(len(msg))); err != nil {
			return err
		}
		m.charge = int64(len(msg))
	}
	return c.writeMany(ctx, timer, []outMsg{m}, async)
}

// writeMany queues msgs, in order, for the transport. The goroutine that
// finds no flush under way becomes the flusher: it writes everything
// queued, in order, in as few transport writes as the stream allows (one
// system call for a batch on a line stream), while the others return once
// their messages are queued. With async, the writer does not flush itself:
// when no flush is under way it starts one in the background and returns.
// Notifications use it, so that a producer of many (process output)
// prepares the next while the last go out, and the flusher finds them
// batched; requests and responses flush inline, which costs no extra
// goroutine wake-up on a round trip.
//
// A small message that finds the queue full waits for room until ctx ends
// or timer fires (nil: until the connection fails), or, with FullQueueClose,
// closes the connection. Large messages hold their budget already and do
// not wait here. On error, the messages not queued are dropped. A write
// error ends the connection; callers waiting for responses then get
// ErrClosed.
func (c *Conn) writeMany(ctx context.Context, timer <-chan time.Time, msgs []outMsg, async bool) error {
	q := &c.wq
	limit := c.opts.MaxQueuedBytes
	var done <-chan struct{}
	if ctx != nil {
		done = ctx.Done()
	}
	q.mu.Lock()
	for i := 0; i < len(msgs); {
		if q.err != nil {
			err := q.err
			q.mu.Unlock()
			c.drop(msgs[i:])
			return err
		}
		m := msgs[i]
		if m.charge == 0 && q.bytes > 0 && q.bytes+len(m.b) > limit {
			if c.opts.OnFullQueue == FullQueueClose {
				err := c.slowPeerLocked()
				q.mu.Unlock()
				c.drop(msgs[i:])
				c.closeSlowPeer(err)
				return err
			}
			// What fills the queue may be this writer's own earlier
			// messages: make sure someone is writing them.
			c.startFlushLocked()
			room := q.waitLocked()
			q.mu.Unlock()
			var err error
			select {
			case <-room:
			case <-done:
				err = waitError(ctx)
			case <-timer:
				err = ErrTimeout
			}
			if err != nil {
				c.drop(msgs[i:])
				return err
			}
			q.mu.Lock()
			continue
		}
		q.pending = append(q.pending, m)
		if m.charge == 0 {
			q.bytes += len(m.b)
		}
		i++
	}
	if q.flushing {
		q.mu.Unlock()
		return nil
	}
	// This writer becomes the flusher; nobody else will while the flag is
	// set.
	q.flushing = true
	q.mu.Unlock()
	if async {
		go func() { _ = c.flush() }()
		return nil
	}
	// Before the system call, let the goroutines that are ready to run
	// (callers woken by the last read, handlers just finished) queue their
	// messages, so that one write carries them all. When nothing else is
	// runnable this returns at once; under load it turns a write per
	// message into a write per burst (64 concurrent callers over loopback
	// TCP: 1.25 → 8.6 messages per write, 2.3× the calls per second).
	runtime.Gosched()
	return c.flush()
}

// startFlushLocked starts a background flusher when messages are queued and
// nobody is writing them.
func (c *Conn) startFlushLocked() {
	q := &c.wq
	if !q.flushing && len(q.pending) > 0 {
		q.flushing = true
		go func() { _ = c.flush() }()
	}
}

// drop releases what unsent messages hold.
func (c *Conn) drop(msgs []outMsg) {
	var charge int64
	for _, m := range msgs {
		if m.pooled {
			putMsgBuf(m.b)
		}
		charge += m.charge
	}
	c.budget.release(charge)
}

// slowPeerLocked fails the queue because the peer does not keep up (with
// FullQueueClose), and returns the error writers get. q.mu is held.
func (c *Conn) slowPeerLocked() error {
	q := &c.wq
	if q.err == nil {
		q.err = fmt.Errorf("%w: %w (%d bytes)", ErrClosed, ErrSlowPeer, c.opts.MaxQueuedBytes)
		// Nothing queued will reach a peer we are about to drop.
		dropped := q.pending
		q.pending, q.bytes = nil, 0
		q.wakeLocked()
		defer c.drop(dropped)
	}
	return q.err
}

// closeSlowPeer closes the connection of a peer that does not keep up,
// telling it why when the stream can.
func (c *Conn) closeSlowPeer(err error) {
	c.budget.fail(err)
	c.mu.Lock()
	if c.state.closeStatus == nil {
		c.state.closeStatus = &closeStatus{
			code:   StatusPolicyViolation,
			reason: fmt.Sprintf("client too slow to read: outbound queue full (%d bytes)", c.opts.MaxQueuedBytes),
		}
	}
	c.mu.Unlock()
	c.shutdown(err)
}

// closeStatus is what a StatusCloser stream is closed with.
type closeStatus struct {
	code   int
	reason string
}

// closeStream closes the stream, with the close status when one was set
// and the stream can carry it.
func (c *Conn) closeStream() {
	c.mu.Lock()
	st := c.state.closeStatus
	c.mu.Unlock()
	if sc, ok := c.stream.(StatusCloser); ok && st != nil {
		_ = sc.CloseWithStatus(st.code, st.reason)
		return
	}
	_ = c.stream.Close()
}

// flush writes what is queued until the queue is empty, then clears
// q.flushing. Only the writer that set q.flushing calls it.
func (c *Conn) flush() error {
	q := &c.wq
	q.mu.Lock()
	var err error
	for len(q.pending) > 0 && err == nil {
		batch := q.pending
		q.pending, q.spare = q.spare[:0], nil
		q.bytes = 0
		q.wakeLocked()
		q.mu.Unlock()
		bufs := q.bufs[:0]
		for _, m := range batch {
			bufs = append(bufs, m.b)
		}
		err = c.writeBatch(bufs)
		clear(bufs)
		q.bufs = bufs[:0]
		c.drop(batch) // written (or failed): nothing else holds them
		clear(batch)
		q.mu.Lock()
		q.spare = batch[:0]
	}
	q.flushing = false
	var dropped []outMsg
	if err != nil && q.err == nil {
		q.err = fmt.Errorf("%w: %w", ErrClosed, err)
		dropped = q.pending
		q.pending = nil
		q.bytes = 0
	}
	q.wakeLocked()
	q.mu.Unlock()
	if err != nil {
		c.drop(dropped)
		c.budget.fail(ErrClosed)
		c.shutdown(fmt.Errorf("write: %w", err))
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return nil
}

// Streamed notifications (process output) are a few KiB each and many per
// second; their buffers are recycled once written, so that a busy stream
// does not churn the heap. Smaller messages are not worth a pool round
// trip, and larger ones are rare. Only buffers the engine took from the
// pool go back to it (outMsg.pooled): never a message whose bytes a caller
// may share (SendEncoded).
const (
	pooledMin = 4 << 10
	pooledCap = 16 << 10
)

var msgPool sync.Pool // of *[]byte, cap pooledCap

// getMsgBuf returns a buffer for a message of about size bytes, and
// whether it came from the pool.
func getMsgBuf(size int) ([]byte, bool) {
	if size < pooledMin || size > pooledCap {
		return make([]byte, 0, size), false
	}
	if p, ok := msgPool.Get().(*[]byte); ok {
		return (*p)[:0], true
	}
	return make([]byte, 0, pooledCap), true
}

func putMsgBuf(b []byte) {
	if cap(b) == pooledCap {
		b = b[:0]
		msgPool.Put(&b)
	}
}

type batchWriter interface{ writeBatch(msgs [][]byte) error }

func (c *Conn) writeBatch(msgs [][]byte) error {
	if bw, ok := c.stream.(batchWriter); ok {
		return bw.writeBatch(msgs)
	}
	for _, m := range msgs {
		if err := c.stream.Write(m); err != nil {
			return err
		}
	}
	return nil
}

// closingErr returns ErrClosed once the connection is closing and its
// handlers have returned: a handler that answers and then notifies (while
// the peer, answered, ends its input) gets both out, as the drain promises
// for its responses.
func (c *Conn) closingErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state.closing && c.state.drained {
		return ErrClosed
	}
	return nil
}

// Notify sends a notification. It waits for room in the outbound queue as
// long as ctx allows (ErrCancelled or ErrTimeout otherwise).
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	if err := c.closingErr(); err != nil {
		return err
	}
	raw, scratch, err := marshalValue(params)
	if err != nil {
		return err
	}
	req := Request{Method: method, Params: raw, Trace: TraceFrom(ctx)}
	msg := appendRequest(make([]byte, 0, 64+len(raw)), &req)
	putScratch(scratch)
	return c.send(ctx, nil, msg, false, true)
}

// NotifyAppend sends a notification whose params appendParams encodes
// itself, appending them to dst, which has room for about sizeHint bytes. It
// is for hot paths (streamed output) where marshalling and copying the
// params into the message would cost more than the rest: the message is
// built in one buffer. appendParams must append exactly one JSON value.
func (c *Conn) NotifyAppend(ctx context.Context, method string, sizeHint int, appendParams func(dst []byte) []byte) error {
	if err := c.closingErr(); err != nil {
		return err
	}
	buf := make([]byte, 0, 32+len(method)+sizeHint)
	buf = append(buf, `{"method":`...)
	buf, _ = jsontext.AppendQuote(buf, method)
	buf = append(buf, `,"params":`...)
	buf = appendParams(buf)
	if t := TraceFrom(ctx); t != nil {
		buf = appendTrace(buf, t)
	}
	return c.send(ctx, nil, append(buf, '}'), false, true)
}

// SendEncoded queues msg, a whole message already encoded (a notification,
// typically, with members of the caller's own such as a send time), as it
// is. It is for a message encoded once for many connections: the engine
// never modifies or recycles msg, so the same bytes may be handed to any
// number of Conns. msg must be one JSON object on one line (no raw newline,
// which would split it on a line stream). Like Notify, it waits for room as
// long as ctx allows.
func (c *Conn) SendEncoded(ctx context.Context, msg []byte) error {
	if err := c.closingErr(); err != nil {
		return err
	}
	if t := bytes.TrimSpace(msg); len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
		return errors.New("jsonrpc: SendEncoded needs a JSON object")
	}
	if bytes.IndexByte(msg, '\n') >= 0 {
		return errors.New("jsonrpc: SendEncoded needs a message without newlines")
	}
	return c.send(ctx, nil, msg, false, true)
}

// Batch collects notifications to send together: on a line stream they go
// out in one system call, on a WebSocket in one write of several frames.
// A streaming producer (process output) uses it to pay one write per batch
// instead of one per message.
type Batch struct {
	c    *Conn
	msgs []outMsg
}

// Batch starts an empty batch on c.
func (c *Conn) Batch() *Batch { return &Batch{c: c} }

// Len reports how many notifications the batch holds.
func (b *Batch) Len() int { return len(b.msgs) }

// NotifyAppend adds a notification built as by Conn.NotifyAppend.
func (b *Batch) NotifyAppend(method string, sizeHint int, appendParams func(dst []byte) []byte) {
	buf, pooled := getMsgBuf(32 + len(method) + sizeHint)
	buf = append(buf, `{"method":`...)
	buf, _ = jsontext.AppendQuote(buf, method)
	buf = append(buf, `,"params":`...)
	buf = appendParams(buf)
	buf = append(buf, '}')
	// A message that outgrew its pooled buffer is in a new one, which the
	// pool does not take (its capacity differs) anyway.
	b.msgs = append(b.msgs, outMsg{b: buf, pooled: pooled && cap(buf) == pooledCap})
}

// Notify adds a notification whose params are marshalled.
func (b *Batch) Notify(method string, params any) error {
	raw, scratch, err := marshalValue(params)
	if err != nil {
		return err
	}
	req := Request{Method: method, Params: raw}
	b.msgs = append(b.msgs, outMsg{b: appendRequest(make([]byte, 0, 64+len(raw)), &req)})
	putScratch(scratch)
	return nil
}

// Send writes the batch and empties it. Unlike Notify, it flushes inline
// when no flush is under way: a producer of batches (a process's output
// pump) then runs at the pace of the transport, holding no more than one
// batch in memory. It waits for room until the connection closes.
func (b *Batch) Send() error {
	if len(b.msgs) == 0 {
		return nil
	}
	msgs := b.msgs
	b.msgs = nil
	c := b.c
	if err := c.closingErr(); err != nil {
		c.drop(msgs)
		return err
	}
	// Runs of small messages go together; a large one goes alone, with its
	// budget.
	for len(msgs) > 0 {
		n := 0
		for n < len(msgs) && len(msgs[n].b) <= c.opts.MaxQueuedBytes {
			n++
		}
		var err error
		if n > 0 {
			err = c.writeMany(context.Background(), nil, msgs[:n], false)
		} else {
			err = c.send(context.Background(), nil, msgs[0].b, msgs[0].pooled, false)
			n = 1
		}
		if err != nil {
			c.drop(msgs[n:])
			return err
		}
		msgs = msgs[n:]
	}
	return nil
}
