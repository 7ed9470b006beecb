package agenttest

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/codexd/codexd/agent"
)

// ErrInterrupted is what a Turn's blocking calls return once the turn has
// ended (interrupted, or the thread shut down).
var ErrInterrupted = errors.New("agenttest: turn interrupted")

// Turn is a running turn, as its TurnFunc sees it. Its methods emit
// events in the turn and block where the real core would wait.
type Turn struct {
	thread *Thread
	id     string
	kind   string
	input  []agent.Input
	ctx    context.Context
	cancel context.CancelFunc

	// Under thread.mu:
	startedAt time.Time
	items     []agent.Item
	lastAgent *agent.AgentMessage
	usage     *agent.TokenUsageInfo
	failure   *agent.TurnError
	cancelled bool // a Cancel decision interrupts the turn when its func returns
	ended     bool
}

// ID returns the turn id.
func (t *Turn) ID() string { return t.id }

// Thread returns the turn's thread.
func (t *Turn) Thread() *Thread { return t.thread }

// Input returns the input that started the turn.
func (t *Turn) Input() []agent.Input { return t.input }

// Done is closed when the turn has ended (interrupted from outside).
func (t *Turn) Done() <-chan struct{} { return t.ctx.Done() }

// NewID returns a fresh id for an item.
func (t *Turn) NewID() string { return t.thread.core.NewID() }

// Emit sends msg as an event of the turn. It reports false, and sends
// nothing, once the turn has ended.
func (t *Turn) Emit(msg agent.EventMsg) bool {
	th := t.thread
	th.mu.Lock()
	defer th.mu.Unlock()
	return t.emitLocked(msg)
}

func (t *Turn) emitLocked(msg agent.EventMsg) bool {
	if t.ended {
		return false
	}
	switch m := msg.(type) {
	case agent.ItemStarted:
		t.trackLocked(m.Item)
	case agent.ItemCompleted:
		t.trackLocked(m.Item)
		if am, ok := m.Item.(*agent.AgentMessage); ok {
			t.lastAgent = am
		}
	case agent.TokenCount:
		u := m.Info
		t.usage = &u
	case agent.Error:
		if !m.WillRetry {
			e := m.Err
			t.failure = &e
		}
	}
	t.thread.emitLocked(t.id, msg)
	return true
}

// trackLocked keeps the latest version of each item, in start order.
func (t *Turn) trackLocked(it agent.Item) {
	for i, old := range t.items {
		if old.ItemID() == it.ItemID() {
			t.items[i] = it
			return
		}
	}
	t.items = append(t.items, it)
}

func (t *Turn) userMessageLocked(in []agent.Input, clientID string) {
	m := &agent.UserMessage{ID: t.thread.core.NewID(), ClientID: clientID, Content: in}
	t.emitLocked(agent.ItemStarted{Item: m})
	t.emitLocked(agent.ItemCompleted{Item: m})
}

// AgentMessage emits an agent message item: started, one delta per part,
// completed. It reports false if the turn ended on the way.
func (t *Turn) AgentMessage(id string, parts ...string) bool {
	if !t.Emit(agent.ItemStarted{Item: &agent.AgentMessage{ID: id}}) {
		return false
	}
	text := ""
	for _, p := range parts {
		if !t.Emit(agent.AgentMessageDelta{ItemID: id, Delta: p}) {
			return false
		}
		text += p
	}
	return t.Emit(agent.ItemCompleted{Item: &agent.AgentMessage{ID: id, Text: text, Phase: "final_answer"}})
}

// Usage emits a TokenCount for one response of in input and out output
// tokens, adding it to the turn's total.
func (t *Turn) Usage(in, out int64) bool {
	th := t.thread
	th.mu.Lock()
	defer th.mu.Unlock()
	total := agent.TokenUsage{}
	if t.usage != nil {
		total = t.usage.Total
	} else if th.store.usage != nil {
		total = th.store.usage.Total
	}
	last := agent.TokenUsage{Input: in, Output: out, Total: in + out}
	total.Input += in
	total.Output += out
	total.Total += in + out
	return t.emitLocked(agent.TokenCount{Info: agent.TokenUsageInfo{Total: total, Last: last, ModelContextWindow: 258400}})
}

// Fail records err and emits it (not retried): the turn ends failed when
// its func returns.
func (t *Turn) Fail(err agent.TurnError) bool { return t.Emit(agent.Error{Err: err}) }

// wait registers a waiter for key, emits req, and blocks for the answer.
func (t *Turn) wait(key string, req agent.EventMsg) (agent.Op, error) {
	th := t.thread
	w := &waiter{turn: t, ch: make(chan agent.Op, 1)}
	th.mu.Lock()
	if t.ended {
		th.mu.Unlock()
		return nil, ErrInterrupted
	}
	th.waiters[key] = w
	t.emitLocked(req)
	th.mu.Unlock()
	select {
	case op := <-w.ch:
		return op, nil
	case <-t.ctx.Done():
		return nil, ErrInterrupted
	}
}

// ExecApproval asks to run a command and waits for the decision.
func (t *Turn) ExecApproval(req agent.ExecApprovalRequest) (agent.ExecDecision, error) {
	op, err := t.wait("exec:"+req.CallID+"/"+req.ApprovalID, req)
	if err != nil {
		return agent.ExecDecision{}, err
	}
	return op.(agent.ExecDecision), nil
}

// PatchApproval asks to apply a change and waits for the decision.
func (t *Turn) PatchApproval(req agent.PatchApprovalRequest) (agent.PatchDecision, error) {
	op, err := t.wait("patch:"+req.CallID, req)
	if err != nil {
		return agent.PatchDecision{}, err
	}
	return op.(agent.PatchDecision), nil
}

// AskUser asks questions and waits for the answers.
func (t *Turn) AskUser(req agent.UserInputRequest) (agent.UserInputAnswer, error) {
	op, err := t.wait("input:"+req.CallID, req)
	if err != nil {
		return agent.UserInputAnswer{}, err
	}
	return op.(agent.UserInputAnswer), nil
}

// MCPApproval asks whether an MCP tool call may run and waits for the
// decision.
func (t *Turn) MCPApproval(req agent.MCPToolApprovalRequest) (agent.MCPToolApprovalDecision, error) {
	op, err := t.wait("mcp:"+req.CallID, req)
	if err != nil {
		return agent.MCPToolApprovalDecision{}, err
	}
	return op.(agent.MCPToolApprovalDecision), nil
}

// Elicit puts an MCP server's elicitation to the user and waits for the
// answer.
func (t *Turn) Elicit(req agent.MCPElicitationRequest) (agent.MCPElicitationAnswer, error) {
	op, err := t.wait("elicit:"+req.ID, req)
	if err != nil {
		return agent.MCPElicitationAnswer{}, err
	}
	return op.(agent.MCPElicitationAnswer), nil
}

// Wait blocks until g is opened or the turn ends.
func (t *Turn) Wait(g *Gate) error {
	select {
	case <-g.ch:
		return nil
	case <-t.ctx.Done():
		return ErrInterrupted
	}
}

// Gate is a latch a test opens to let a script go on.
type Gate struct {
	once sync.Once
	ch   chan struct{}
}

// NewGate returns a closed gate.
func NewGate() *Gate { return &Gate{ch: make(chan struct{})} }

// Open lets every waiter through, now and later.
func (g *Gate) Open() { g.once.Do(func() { close(g.ch) }) }

// DefaultTurn answers "Hello from the mock model." in three deltas, as the
// mock model of the captures did, and reports usage.
func DefaultTurn(t *Turn) {
	if t.AgentMessage("msg_"+t.id, "Hello fro", "m the mock", " model.") {
		t.Usage(10, 5)
	}
}

// instantTurnLocked plays DefaultTurn's events without a goroutine.
func instantTurnLocked(t *Turn) {
	id := "msg_" + t.id
	t.emitLocked(agent.ItemStarted{Item: &agent.AgentMessage{ID: id}})
	text := "Hello from the mock model."
	if n := t.thread.core.opts.InstantDeltas; n > 1 {
		text = ""
		for i := 0; i < n; i++ {
			t.emitLocked(agent.AgentMessageDelta{ItemID: id, Delta: "word "})
			text += "word "
		}
	} else {
		t.emitLocked(agent.AgentMessageDelta{ItemID: id, Delta: text})
	}
	t.emitLocked(agent.ItemCompleted{Item: &agent.AgentMessage{ID: id, Text: text, Phase: "final_answer"}})
	t.emitLocked(agent.TokenCount{Info: agent.TokenUsageInfo{
		Total: agent.TokenUsage{Input: 10, Output: 5, Total: 15}, Last: agent.TokenUsage{Input: 10, Output: 5, Total: 15},
		ModelContextWindow: 258400}})
}

// ExecScript returns a TurnFunc that asks to run command (call id
// callID), then completes the command item as the decision says (running
// it prints "ran\n"), then answers with an agent message.
func ExecScript(callID, command string) TurnFunc {
	return func(t *Turn) {
		item := &agent.CommandExecution{ID: callID, Command: command, Argv: []string{"/bin/sh", "-c", command},
			Cwd: t.thread.Settings().Cwd, Source: "agent", Status: agent.ItemStatusInProgress,
			Actions: []agent.CommandAction{{Type: "unknown", Command: command}}}
		if !t.Emit(agent.ItemStarted{Item: item}) {
			return
		}
		d, err := t.ExecApproval(agent.ExecApprovalRequest{CallID: callID, Command: command, Argv: item.Argv,
			Cwd: item.Cwd, Actions: item.Actions, Decisions: []agent.Decision{agent.Accept, agent.Cancel}})
		if err != nil {
			return
		}
		done := *item
		switch d.Decision {
		case agent.Accept, agent.AcceptForSession:
			t.Emit(agent.CommandOutputDelta{ItemID: callID, Stream: "stdout", Data: []byte("ran\n")})
			out, code := "ran\n", 0
			done.Status, done.Output, done.ExitCode, done.Source = agent.ItemStatusCompleted, &out, &code, "unifiedExecStartup"
		case agent.Decline, agent.Cancel:
			done.Status = agent.ItemStatusDeclined
		default:
			done.Status = agent.ItemStatusFailed
		}
		t.Emit(agent.ItemCompleted{Item: &done})
		if d.Decision == agent.Cancel {
			return
		}
		DefaultTurn(t)
	}
}

// Done is closed once the gate is open.
func (g *Gate) Done() <-chan struct{} { return g.ch }
