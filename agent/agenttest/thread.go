package agenttest

import (
	"context"
	"errors"
	"sync"

	"github.com/codexd/codexd/agent"
)

// Thread is a loaded scripted thread.
//
// Its events wait in an unbounded queue that one pump goroutine delivers,
// so that Submit never blocks on a slow reader (the contract's promise).
// Every state change happens under mu; the order of the queue is the order
// in which they happened.
type Thread struct {
	core   *Core
	store  *stored
	events chan agent.Event
	done   chan struct{} // closed when the pump has closed events

	mu        sync.Mutex
	cond      *sync.Cond
	queue     []agent.Event
	seq       uint64
	settings  agent.Settings
	active    *Turn
	waiters   map[string]*waiter // pending approvals by call key
	decisions []agent.Op         // decision ops received, for tests
	shutdown  bool               // ShutdownComplete queued
}

type waiter struct {
	turn *Turn
	ch   chan agent.Op // buffered 1
}

func newThread(c *Core, s *stored, settings agent.Settings) *Thread {
	t := &Thread{
		core:     c,
		store:    s,
		events:   make(chan agent.Event),
		done:     make(chan struct{}),
		settings: settings,
		waiters:  make(map[string]*waiter),
	}
	t.cond = sync.NewCond(&t.mu)
	go t.pump()
	return t
}

func (t *Thread) ID() string                 { return t.store.info.ID }
func (t *Thread) Events() <-chan agent.Event { return t.events }
func (t *Thread) Settings() agent.Settings   { t.mu.Lock(); defer t.mu.Unlock(); return t.settings }
func (t *Thread) Done() <-chan struct{}      { return t.done }

// CheckInput finds nothing to refuse: a scripted thread reads no files.
func (t *Thread) CheckInput(context.Context, agent.Op) error { return nil }

// Decisions returns the decision ops (ExecDecision, PatchDecision,
// UserInputAnswer) the thread received, in order.
func (t *Thread) Decisions() []agent.Op {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]agent.Op(nil), t.decisions...)
}

// ActiveTurn returns the running turn, or nil.
func (t *Thread) ActiveTurn() *Turn {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.active
}

func (t *Thread) pump() {
	defer close(t.done)
	for {
		t.mu.Lock()
		for len(t.queue) == 0 {
			t.cond.Wait()
		}
		ev := t.queue[0]
		t.queue[0] = agent.Event{}
		t.queue = t.queue[1:]
		t.mu.Unlock()
		select {
		case t.events <- ev:
		case <-t.core.abandon:
			// Core.Close gave up on a consumer that stopped reading.
			close(t.events)
			return
		}
		if _, last := ev.Msg.(agent.ShutdownComplete); last {
			close(t.events)
			return
		}
	}
}

// emitLocked queues an event; mu is held.
func (t *Thread) emitLocked(turnID string, msg agent.EventMsg) {
	if t.shutdown {
		return
	}
	t.seq++
	t.queue = append(t.queue, agent.Event{Seq: t.seq, TurnID: turnID, Time: t.core.opts.Now(), Msg: msg})
	if _, last := msg.(agent.ShutdownComplete); last {
		t.shutdown = true
	}
	t.cond.Signal()
}

func (t *Thread) emit(turnID string, msg agent.EventMsg) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.emitLocked(turnID, msg)
}

func (t *Thread) Submit(ctx context.Context, op agent.Op) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.shutdown {
		return "", agent.ErrThreadClosed
	}
	switch op := op.(type) {
	case agent.UserInput:
		if len(op.Input) == 0 {
			return "", agent.ErrEmptyInput
		}
		t.settings = op.Overrides.Apply(t.settings)
		if t.active != nil {
			t.active.userMessageLocked(op.Input, op.ClientID)
			return t.active.id, nil
		}
		return t.startTurnLocked(op), nil
	case agent.Steer:
		if len(op.Input) == 0 {
			return "", agent.ErrEmptyInput
		}
		if t.active == nil {
			return "", agent.ErrNoActiveTurn
		}
		if op.ExpectedTurnID != t.active.id {
			return "", &agent.TurnMismatchError{Expected: op.ExpectedTurnID, Active: t.active.id}
		}
		if t.active.kind != "regular" {
			return "", &agent.NotSteerableError{TurnKind: t.active.kind}
		}
		t.active.userMessageLocked(op.Input, op.ClientID)
		return t.active.id, nil
	case agent.Interrupt:
		if t.active == nil {
			return "", agent.ErrNoActiveTurn
		}
		if op.TurnID != "" && op.TurnID != t.active.id {
			return "", &agent.TurnMismatchError{Expected: op.TurnID, Active: t.active.id}
		}
		id := t.active.id
		t.endTurnLocked(t.active, agent.TurnStatusInterrupted)
		return id, nil
	case agent.UpdateSettings:
		t.settings = op.Overrides.Apply(t.settings)
		t.emitLocked("", agent.SettingsUpdated{Settings: t.settings})
		return t.core.NewID(), nil
	case agent.ExecDecision:
		return "", t.decideLocked("exec:"+op.CallID+"/"+op.ApprovalID, op)
	case agent.PatchDecision:
		return "", t.decideLocked("patch:"+op.CallID, op)
	case agent.UserInputAnswer:
		return "", t.decideLocked("input:"+op.CallID, op)
	case agent.MCPToolApprovalDecision:
		return "", t.decideLocked("mcp:"+op.CallID, op)
	case agent.MCPElicitationAnswer:
		return "", t.decideLocked("elicit:"+op.ID, op)
	case agent.Shutdown:
		if t.active != nil {
			t.endTurnLocked(t.active, agent.TurnStatusInterrupted)
		}
		t.emitLocked("", agent.ShutdownComplete{})
		t.core.unloaded(t)
		return "", nil
	}
	return "", errors.New("agenttest: unknown op")
}

func (t *Thread) decideLocked(key string, op agent.Op) error {
	w := t.waiters[key]
	if w == nil {
		return agent.ErrUnknownCall
	}
	delete(t.waiters, key)
	t.decisions = append(t.decisions, op)
	switch d := op.(type) {
	case agent.ExecDecision:
		w.turn.cancelled = w.turn.cancelled || d.Decision == agent.Cancel
	case agent.PatchDecision:
		w.turn.cancelled = w.turn.cancelled || d.Decision == agent.Cancel
	}
	w.ch <- op
	return nil
}

// startTurnLocked opens a turn for in and starts its script.
func (t *Thread) startTurnLocked(in agent.UserInput) string {
	turn := &Turn{
		thread: t, id: t.core.NewID(), kind: t.core.nextTurnKind(), input: in.Input,
		startedAt: t.core.opts.Now(),
	}
	turn.ctx, turn.cancel = context.WithCancel(context.Background())
	t.active = turn
	t.emitLocked(turn.id, agent.TurnStarted{StartedAt: turn.startedAt, Kind: turn.kind, ModelContextWindow: 258400})
	turn.userMessageLocked(in.Input, in.ClientID)
	t.core.firstInput(t.store, in.Input)
	if t.core.opts.Instant {
		instantTurnLocked(turn)
		t.endTurnLocked(turn, agent.TurnStatusCompleted)
		return turn.id
	}
	f := t.core.turnFunc()
	go func() {
		f(turn)
		t.mu.Lock()
		defer t.mu.Unlock()
		status := agent.TurnStatusCompleted
		switch {
		case turn.cancelled:
			status = agent.TurnStatusInterrupted
		case turn.failure != nil:
			status = agent.TurnStatusFailed
		}
		t.endTurnLocked(turn, status)
	}()
	return turn.id
}

// endTurnLocked ends turn (once): pending approvals are dropped, the turn is
// stored, and TurnCompleted is its last event.
func (t *Thread) endTurnLocked(turn *Turn, status agent.TurnStatus) {
	if turn.ended {
		return
	}
	turn.ended = true
	turn.cancel()
	for k, w := range t.waiters {
		if w.turn == turn {
			delete(t.waiters, k)
		}
	}
	if t.active == turn {
		t.active = nil
	}
	now := t.core.opts.Now()
	tc := agent.TurnCompleted{Status: status, CompletedAt: now, Duration: now.Sub(turn.startedAt)}
	if status == agent.TurnStatusFailed {
		tc.Error = turn.failure
	}
	if status != agent.TurnStatusInterrupted && turn.lastAgent != nil {
		tc.LastAgentMessage, tc.LastAgentMessageID = turn.lastAgent.Text, turn.lastAgent.ID
	}
	t.emitLocked(turn.id, tc)
	t.core.recordTurn(t.store, agent.Turn{
		ID: turn.id, Status: status, Items: turn.items, Error: tc.Error,
		StartedAt: turn.startedAt, CompletedAt: now,
	}, turn.usage)
}
