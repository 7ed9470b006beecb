package core

import (
	"sync"
	"time"

	"github.com/codexd/codexd/agent"
)

// eventQueue delivers a thread's events, in order, on a channel.
//
// Producers never wait for the consumer, with one exception: a producer
// that streams (model deltas, command output) calls wait first, which
// blocks while more than softLimit events are undelivered. So a slow
// consumer holds back the turn that streams, never a Submit, and the queue
// stays bounded by softLimit plus the few control events pushed past it.
type eventQueue struct {
	mu      sync.Mutex
	cond    *sync.Cond // signalled when events are taken or the queue closes
	pending []agent.Event
	seq     uint64
	closed  bool // no more pushes; deliver what is pending, then close out
	abort   chan struct{}

	out  chan agent.Event
	done chan struct{} // closed when the pump has exited

	// onEvent, when set, sees every event as it is pushed (persistence),
	// under the queue lock, so that it sees them in Seq order.
	onEvent func(agent.Event)
	// onDone, when set, is called once the pump has exited (after done is
	// closed).
	onDone func()
}

const softLimit = 1024

func newEventQueue(onEvent func(agent.Event), onDone func()) *eventQueue {
	q := &eventQueue{out: make(chan agent.Event), done: make(chan struct{}), abort: make(chan struct{}), onEvent: onEvent, onDone: onDone}
	q.cond = sync.NewCond(&q.mu)
	go q.pump()
	return q
}

// push appends an event; it never blocks on the consumer.
func (q *eventQueue) push(turnID string, msg agent.EventMsg) {
	q.pushAt(turnID, time.Now(), msg)
}

// pushAt queues msgs in order, each stamped with the same time: events
// that happen at one instant (an item shown whole: its start and its
// completion) must not be told apart by when the queue got to them.
func (q *eventQueue) pushAt(turnID string, at time.Time, msgs ...agent.EventMsg) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	for _, msg := range msgs {
		q.seq++
		ev := agent.Event{Seq: q.seq, TurnID: turnID, Time: at, Msg: msg}
		if q.onEvent != nil {
			q.onEvent(ev)
		}
		q.pending = append(q.pending, ev)
	}
	q.cond.Broadcast()
}

// wait blocks while the consumer is more than softLimit events behind, or
// until stop is closed.
func (q *eventQueue) wait(stop <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.pending) > softLimit && !q.closed {
		select {
		case <-stop:
			return
		default:
		}
		// A waiter must also wake when stop closes; the turn's cancel
		// broadcasts through wake.
		q.cond.Wait()
	}
}

// wake wakes waiters (after a turn was cancelled).
func (q *eventQueue) wake() {
	q.mu.Lock()
	q.cond.Broadcast()
	q.mu.Unlock()
}

// close stops pushes; the pump delivers what is pending, then closes out.
func (q *eventQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
}

// discard makes the pump drop undelivered events and close out at once
// (the consumer is gone).
func (q *eventQueue) discard() {
	q.close()
	select {
	case <-q.abort:
	default:
		close(q.abort)
	}
}

func (q *eventQueue) pump() {
	defer func() {
		close(q.out)
		close(q.done)
		if q.onDone != nil {
			q.onDone()
		}
	}()
	for {
		q.mu.Lock()
		for len(q.pending) == 0 && !q.closed {
			q.cond.Wait()
		}
		if len(q.pending) == 0 {
			q.mu.Unlock()
			return
		}
		ev := q.pending[0]
		q.pending[0] = agent.Event{}
		q.pending = q.pending[1:]
		if len(q.pending) == 0 {
			q.pending = nil
		}
		q.cond.Broadcast()
		q.mu.Unlock()
		select {
		case q.out <- ev:
		case <-q.abort:
			return
		}
	}
}
