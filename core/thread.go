package core

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"slices"
	"sync"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
)

// thread is one loaded conversation.
//
// Its actor goroutine (run) runs turns, one at a time, in submission order.
// Operations that act on a running turn (steer, interrupt, decisions) or on
// the thread's settings take effect in Submit itself, under mu, in the order
// they were submitted: they are validated against the same state they
// change, so a Steer that was accepted is the Steer that was applied, and an
// Interrupt cancels the turn at once instead of queueing behind it. Submit
// never waits for the actor or for the consumer of Events.
type thread struct {
	core *Core
	id   string
	q    *eventQueue
	log  *slog.Logger
	rec  recorder
	exec *execSessions
	mcp  agent.MCPConnector // nil without MCP servers

	mu       sync.Mutex
	info     agent.ThreadInfo
	settings agent.Settings
	base     instructionsOpts
	// lastModel is the model of the last turn that recorded its context
	// (on a resumed thread, its last stored turn's); baseModel is the
	// model whose base instructions the thread is sent ("" until its first
	// turn, and on a resumed thread: the current model's). modelswitch.go.
	lastModel, baseModel string
	// queue holds the running turn first, then turns submitted after it
	// was interrupted (a new UserInput never joins a cancelled turn).
	queue   []*turn
	closing bool // Shutdown submitted
	history []prompt.Item
	turns   *turnBuilder
	usage   *agent.TokenUsageInfo
	// Approvals remembered for the session (acceptForSession, amendments).
	approvedCommands map[string]bool
	// approvedMCPTools are the MCP tools allowed for the session (by
	// server and tool; made at first use).
	approvedMCPTools map[string]bool
	allowedPrefixes  [][]string
	approvedPatches  map[string]bool

	origin  string // originator sent to the model provider
	noTools bool   // offer the model no tools (StartOptions.NoTools)

	wake chan struct{} // the actor has work (capacity 1)
	done chan struct{} // the actor has exited
}

func (t *thread) ID() string                 { return t.id }
func (t *thread) Events() <-chan agent.Event { return t.q.out }
func (t *thread) Settings() agent.Settings {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.settings
}

func (t *thread) signal() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// Submit validates op against the thread's state and applies or queues it.
// applySettingsLocked applies o to the thread's settings and, only if
// they changed, queues SettingsUpdated (mu held): Codex sends
// thread/settings/updated only for a real change, and before the
// turn/started of the turn whose overrides made it.
func (t *thread) applySettingsLocked(o agent.Overrides) {
	s := t.core.followCwd(o, o.Apply(t.settings))
	if sameSettings(s, t.settings) {
		return
	}
	t.settings = s
	t.q.push("", agent.SettingsUpdated{Settings: s})
}

// sameSettings compares two settings (a nil and an empty list of writable
// roots are the same).
func sameSettings(a, b agent.Settings) bool {
	if !slices.Equal(a.Sandbox.WritableRoots, b.Sandbox.WritableRoots) {
		return false
	}
	a.Sandbox.WritableRoots, b.Sandbox.WritableRoots = nil, nil
	return reflect.DeepEqual(a, b)
}

func (t *thread) Submit(ctx context.Context, op agent.Op) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closing {
		return "", agent.ErrThreadClosed
	}
	switch op := op.(type) {
	case agent.UserInput:
		if len(op.Input) == 0 {
			return "", agent.ErrEmptyInput
		}
		if tr := t.current(); tr != nil && tr.kind != "regular" && tr.kind != "userShell" {
			return "", &agent.NotSteerableError{TurnKind: tr.kind}
		}
		// A turn's overrides stay the thread's settings, as in Codex, and
		// a change is announced before the turn starts.
		t.applySettingsLocked(op.Overrides)
		if tr := t.current(); tr != nil && tr.kind == "regular" {
			tr.addInput(op.Input, op.ClientID)
			return tr.id, nil
		}
		tr := t.newTurn(t.settings, op.OutputSchema)
		tr.addInput(op.Input, op.ClientID)
		t.queue = append(t.queue, tr)
		t.signal()
		return tr.id, nil

	case agent.Compact:
		return t.submitSpecial("compact", nil), nil
	case agent.ShellCommand:
		return t.submitShell(op)
	case agent.Review:
		return t.submitReview(op)

	case agent.Steer:
		if len(op.Input) == 0 {
			return "", agent.ErrEmptyInput
		}
		tr := t.current()
		if tr == nil {
			return "", agent.ErrNoActiveTurn
		}
		if op.ExpectedTurnID != tr.id {
			return "", &agent.TurnMismatchError{Expected: op.ExpectedTurnID, Active: tr.id}
		}
		if tr.kind != "regular" {
			return "", &agent.NotSteerableError{TurnKind: tr.kind}
		}
		tr.addInput(op.Input, op.ClientID)
		return tr.id, nil

	case agent.Interrupt:
		tr := t.current()
		if tr == nil {
			return "", agent.ErrNoActiveTurn
		}
		if op.TurnID != "" && op.TurnID != tr.id {
			return "", &agent.TurnMismatchError{Expected: op.TurnID, Active: tr.id}
		}
		tr.interrupt()
		return newUUIDv7(), nil

	case agent.UpdateSettings:
		t.applySettingsLocked(op.Overrides)
		return newUUIDv7(), nil

	case agent.ExecDecision:
		key := op.CallID
		if op.ApprovalID != "" {
			key = op.ApprovalID
		}
		if !t.resolve(key, op) {
			return "", agent.ErrUnknownCall
		}
		return newUUIDv7(), nil
	case agent.PatchDecision:
		if !t.resolve(op.CallID, op) {
			return "", agent.ErrUnknownCall
		}
		return newUUIDv7(), nil
	case agent.UserInputAnswer:
		if !t.resolve(op.CallID, op) {
			return "", agent.ErrUnknownCall
		}
		return newUUIDv7(), nil
	case agent.MCPToolApprovalDecision:
		if !t.resolve(op.CallID, op) {
			return "", agent.ErrUnknownCall
		}
		return newUUIDv7(), nil
	case agent.MCPElicitationAnswer:
		if !t.resolve(op.ID, op) {
			return "", agent.ErrUnknownCall
		}
		return newUUIDv7(), nil

	case agent.Shutdown:
		t.closing = true
		for _, tr := range t.queue {
			tr.interrupt()
		}
		t.signal()
		return newUUIDv7(), nil
	}
	return "", errors.New("unknown operation")
}

// resolve hands a decision to the request waiting for it (mu held).
func (t *thread) resolve(key string, answer agent.Op) bool {
	if len(t.queue) == 0 {
		return false
	}
	tr := t.queue[0]
	req, ok := tr.requests[key]
	if !ok {
		return false
	}
	delete(tr.requests, key)
	req <- answer // capacity 1, and only one answer is ever delivered
	return true
}

// run is the thread's actor.
func (t *thread) run() {
	defer close(t.done)
	defer func() {
		if t.mcp != nil {
			t.mcp.Close() // its servers stop with the thread
		}
	}()
	for range t.wake {
		for {
			t.mu.Lock()
			var tr *turn
			if len(t.queue) > 0 {
				tr = t.queue[0]
			}
			closing := t.closing
			t.mu.Unlock()
			if tr == nil {
				if closing {
					t.shutdown()
					return
				}
				break
			}
			t.runTurn(tr)
			t.mu.Lock()
			t.queue = t.queue[1:]
			t.mu.Unlock()
		}
	}
}

// current is the turn that new input joins and Steer and Interrupt act on:
// the last submitted one, unless it is cancelled or ending (mu held).
func (t *thread) current() *turn {
	if n := len(t.queue); n > 0 {
		tr := t.queue[n-1]
		if !tr.ending && tr.ctx.Err() == nil {
			return tr
		}
	}
	return nil
}

// shutdown runs on the actor once no turn is left.
func (t *thread) shutdown() {
	t.exec.closeAll()
	if err := t.rec.Sync(); err != nil {
		t.log.Warn("flushing the rollout", "err", err)
	}
	t.q.push("", agent.ShutdownComplete{})
	if err := t.rec.Close(); err != nil {
		t.log.Warn("closing the rollout", "err", err)
	}
	t.q.close()
	t.core.forget(t)
}

// historySnapshot is the model history as it is now.
//
// It is a view, not a copy: the history's items are never changed in place
// (appendHistory appends, replaceHistory replaces the slice), so the items
// a view covers stay as they were, and its capacity ends at its length, so
// that an append to it copies. Callers must not write to its items. A turn
// takes several snapshots per model request, and copying the history each
// time was a cost that grew with it.
func (t *thread) historySnapshot() []prompt.Item {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.history[:len(t.history):len(t.history)]
}

func (t *thread) appendHistory(turnID string, items ...prompt.Item) {
	if len(items) == 0 {
		return
	}
	t.mu.Lock()
	t.history = append(t.history, items...)
	t.mu.Unlock()
	t.rec.Items(turnID, items)
}
