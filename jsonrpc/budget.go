package jsonrpc

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// TooLargeError reports an outbound message larger than the connection's
// whole Options.OutboundBudget: it can never be sent, so it is refused at
// once instead of waiting.
type TooLargeError struct {
	Size  int64 // bytes the message needs
	Limit int64 // the connection's budget
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("jsonrpc: a message of %d bytes is over this connection's limit of %d bytes for large messages in flight", e.Size, e.Limit)
}

// budget is a connection's allowance of bytes for large outbound messages
// (see Options.OutboundBudget): a weighted semaphore whose waiters are
// served in arrival order, so that a large request is not starved by a
// stream of smaller ones.
//
// Invariant: a waiter holds nothing while it waits. A writer whose message
// outgrew its reservation gives the reservation back before asking for the
// whole size, so two writers can never each hold part of the budget while
// waiting for the rest of it.
type budget struct {
	mu      sync.Mutex
	limit   int64
	used    int64
	err     error // set once the connection can no longer write
	waiters []*budgetWaiter
	changed chan struct{} // closed at the next change; nil when nobody watches (tests)
}

// notifyLocked tells watchers that used or waiters changed.
func (b *budget) notifyLocked() {
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
}

// watchLocked returns a channel closed at the next change.
func (b *budget) watchLocked() <-chan struct{} {
	if b.changed == nil {
		b.changed = make(chan struct{})
	}
	return b.changed
}

type budgetWaiter struct {
	n     int64
	ready chan struct{} // closed when granted or failed
	err   error         // set before ready is closed, on failure
}

// acquire takes n bytes, waiting while they are held by others, until ctx
// ends or timer fires (either may be nil).
func (b *budget) acquire(ctx context.Context, timer <-chan time.Time, n int64) error {
	if n > b.limit {
		return &TooLargeError{Size: n, Limit: b.limit}
	}
	b.mu.Lock()
	if b.err != nil {
		err := b.err
		b.mu.Unlock()
		return err
	}
	if len(b.waiters) == 0 && b.used+n <= b.limit {
		b.used += n
		b.notifyLocked()
		b.mu.Unlock()
		return nil
	}
	w := &budgetWaiter{n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.notifyLocked()
	b.mu.Unlock()
	var done <-chan struct{}
	if ctx != nil {
		done = ctx.Done()
	}
	var cause error
	select {
	case <-w.ready:
		return w.err
	case <-done:
		cause = waitError(ctx)
	case <-timer:
		cause = ErrTimeout
	}
	b.mu.Lock()
	select {
	case <-w.ready:
		// Granted (or failed) meanwhile: give a grant back.
		b.mu.Unlock()
		if w.err == nil {
			b.release(n)
		}
		return cause
	default:
	}
	b.waiters = slices.DeleteFunc(b.waiters, func(x *budgetWaiter) bool { return x == w })
	b.grantLocked() // the waiter behind this one may fit now
	b.notifyLocked()
	b.mu.Unlock()
	return cause
}

// release gives n bytes back.
func (b *budget) release(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.grantLocked()
	b.notifyLocked()
	b.mu.Unlock()
}

func (b *budget) grantLocked() {
	for len(b.waiters) > 0 && b.used+b.waiters[0].n <= b.limit {
		w := b.waiters[0]
		b.waiters = b.waiters[1:]
		b.used += w.n
		close(w.ready)
	}
}

// fail ends every wait, present and future, with err.
func (b *budget) fail(err error) {
	b.mu.Lock()
	if b.err == nil {
		b.err = err
	}
	for _, w := range b.waiters {
		w.err = b.err
		close(w.ready)
	}
	b.waiters = nil
	b.mu.Unlock()
}

// waitError is the error of a wait that ctx ended.
func waitError(ctx context.Context) error {
	if ctx.Err() == context.DeadlineExceeded {
		return ErrTimeout
	}
	return ErrCancelled
}
