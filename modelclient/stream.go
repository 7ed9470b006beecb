package modelclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3/packages/ssestream"
)

// Stream is one response being streamed. Next is for one goroutine; Close
// may be called from any, at any time, also while Next waits.
type Stream struct {
	parent context.Context // the caller's: its end is reported as is
	ctx    context.Context // the request's: the idle timer and Close end it
	cancel context.CancelCauseFunc
	timer  *time.Timer
	idle   time.Duration
	res    *http.Response
	lim    *eventLimit
	dec    ssestream.Decoder

	err     error // sticky: what every later Next returns
	closed  atomic.Bool
	release sync.Once
}

func newStream(parent, ctx context.Context, cancel context.CancelCauseFunc, timer *time.Timer, idle time.Duration, res *http.Response) *Stream {
	// The decoder reads the body through the limit; Header still sees res.
	lim := &eventLimit{rc: res.Body, max: MaxEventBytes}
	framed := *res
	framed.Body = lim
	return &Stream{
		parent: parent, ctx: ctx, cancel: cancel, timer: timer, idle: idle, res: res,
		lim: lim, dec: ssestream.NewDecoder(&framed),
	}
}

// eventLimit bounds what the SSE decoder reads for one event. The decoder
// has no bound of its own on an event (it joins any number of data lines),
// so the body is read through this, which fails once more than max bytes
// were read since the last event was delivered. Each read is at most
// readChunk bytes, so what the decoder reads ahead of an event's end, and
// counts against it, stays small.
type eventLimit struct {
	rc   io.ReadCloser
	max  int
	used int
}

const readChunk = 1 << 20

func (l *eventLimit) Read(p []byte) (int, error) {
	if l.used >= l.max {
		return 0, fmt.Errorf("%w: an event is over %d bytes", ErrEventTooLarge, l.max)
	}
	p = p[:min(len(p), readChunk, l.max-l.used)]
	n, err := l.rc.Read(p)
	l.used += n
	return n, err
}

func (l *eventLimit) Close() error { return l.rc.Close() }

// next starts counting for the next event.
func (l *eventLimit) next() { l.used = 0 }

// Header is the response's HTTP header (x-request-id, rate limits, ...).
func (s *Stream) Header() http.Header { return s.res.Header }

// Next returns the next event. After Completed it returns io.EOF. A stream
// that ends otherwise returns, from then on, one of: a *ResponseError
// (response.failed, response.incomplete, error event), an error wrapping
// ErrStreamIdle, ErrStreamCut or ErrEventTooLarge, the caller's context
// error, or ErrClosed.
func (s *Stream) Next() (Event, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if s.err != nil {
		return nil, s.err
	}
	for {
		if !s.dec.Next() {
			s.finish(s.endError(s.dec.Err()))
			return nil, s.err
		}
		s.lim.next()
		// Any event, known or not, shows the stream is alive.
		s.timer.Reset(s.idle)
		ev, err := decodeEvent(s.dec.Event().Data)
		if err != nil {
			s.finish(err)
			return nil, err
		}
		if ev == nil {
			continue
		}
		if _, ok := ev.(Completed); ok {
			// Codex stops reading at response.completed; so does this.
			s.finish(io.EOF)
		}
		return ev, nil
	}
}

// endError names why the decoder stopped: err is nil for a clean end of
// the body, else the read error.
func (s *Stream) endError(err error) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if perr := s.parent.Err(); perr != nil {
		return perr
	}
	if errors.Is(context.Cause(s.ctx), errIdleTimer) {
		return fmt.Errorf("%w: no event for %v", ErrStreamIdle, s.idle)
	}
	if err == nil {
		return fmt.Errorf("%w: the stream ended without response.completed", ErrStreamCut)
	}
	if errors.Is(err, ErrEventTooLarge) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrStreamCut, err)
}

func (s *Stream) finish(err error) {
	s.err = err
	s.free()
}

// free stops the timer and closes the connection, once.
func (s *Stream) free() {
	s.release.Do(func() {
		s.timer.Stop()
		s.cancel(ErrClosed)
		s.dec.Close()
	})
}

// Close abandons the stream: the HTTP connection is closed at once, and a
// Next waiting on it returns ErrClosed.
func (s *Stream) Close() error {
	s.closed.Store(true)
	s.free()
	return nil
}
