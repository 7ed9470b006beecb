package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/skills"
)

// turn is one turn of a thread. Fields below mu are guarded by the
// thread's mu; the rest belong to the actor running the turn.
type turn struct {
	t            *thread
	id           string
	kind         string
	settings     agent.Settings
	outputSchema []byte
	// mcpTools are the MCP tools the last request offered, for its calls.
	mcpTools []agent.MCPTool
	ctx      context.Context
	cancel   context.CancelFunc
	started  time.Time

	// Guarded by t.mu.
	inputs       []queuedInput
	requests     map[string]chan agent.Op // approvals and questions by call id
	streamCancel context.CancelFunc       // cancels the model response in flight
	ending       bool                     // decided to end; takes no more input
	// pendingItems are records of user shell commands that ran beside
	// the turn, for its next request.
	pendingItems []prompt.Item

	aux   sync.WaitGroup // user shell commands running beside the turn
	shell *shellJob      // what a "userShell" turn runs

	// Actor-owned.
	contextDone bool // the turn's context blocks are recorded
	// skills are the skills found for the turn's cwd (turnSkills).
	skillsOnce sync.Once
	skills     []skills.Skill
	// skillRules are the [[skills.config]] rules read with the skills.
	skillRules []skills.Rule
	// prefix is what the last request held besides the conversation: the
	// base instructions first, a code-mode model's tools item, and the
	// history's context messages (compaction and review reuse it).
	prefix        []prompt.Item
	lastMessage   string
	lastMessageID string
	diff          *turnDiff
	review        *agent.Review // what a review turn reviews
	plans         planSplit     // a plan-mode turn's plan (planmode.go)
}

type queuedInput struct {
	input    []agent.Input
	clientID string
}

var errSteered = errors.New("steered")

func (t *thread) newTurn(s agent.Settings, outputSchema []byte) *turn {
	ctx, cancel := context.WithCancel(withTurnEnvironment(t.core.ctx, s.Environments))
	s.Cwd = turnCwd(s) // the tools work in the current environment's cwd
	return &turn{
		t: t, id: newUUIDv7(), kind: "regular", settings: s, outputSchema: outputSchema,
		ctx: ctx, cancel: cancel, requests: map[string]chan agent.Op{}, diff: newTurnDiff(),
	}
}

// addInput queues input for the turn's next model request, cutting short a
// response in flight so that the model sees it at once (mu held).
func (tr *turn) addInput(in []agent.Input, clientID string) {
	tr.inputs = append(tr.inputs, queuedInput{input: in, clientID: clientID})
	if tr.streamCancel != nil {
		tr.streamCancel()
	}
}

// interrupt cancels the turn: the model response, running commands and
// waiting approvals all watch its context (mu held).
func (tr *turn) interrupt() {
	tr.cancel()
	tr.t.q.wake()
}

func (tr *turn) emit(msg agent.EventMsg) { tr.t.q.push(tr.id, msg) }

// emitStream emits an event of a stream, first waiting for a slow consumer.
func (tr *turn) emitStream(msg agent.EventMsg) {
	tr.t.q.wait(tr.ctx.Done())
	tr.t.q.push(tr.id, msg)
}

// request registers a request for a decision and returns its channel (the
// caller emits the request event after this, so that a quick answer finds
// it).
func (tr *turn) request(key string) chan agent.Op {
	ch := make(chan agent.Op, 1)
	tr.t.mu.Lock()
	tr.requests[key] = ch
	tr.t.mu.Unlock()
	return ch
}

func (tr *turn) dropRequest(key string) { tr.takeRequest(key) }

// takeRequest removes a request's waiter, reporting whether it was still
// waiting (no answer had taken it).
func (tr *turn) takeRequest(key string) bool {
	tr.t.mu.Lock()
	defer tr.t.mu.Unlock()
	_, ok := tr.requests[key]
	delete(tr.requests, key)
	return ok
}

// await waits for the answer to a request; ok is false when the turn was
// interrupted first.
func (tr *turn) await(key string, ch chan agent.Op) (agent.Op, bool) {
	select {
	case op := <-ch:
		return op, true
	case <-tr.ctx.Done():
		tr.dropRequest(key)
		return nil, false
	}
}

// runTurn runs tr to its end on the actor.
func (t *thread) runTurn(tr *turn) {
	tr.started = time.Now()
	tr.emit(agent.TurnStarted{StartedAt: tr.started, Kind: tr.kind, ModelContextWindow: t.core.contextWindow(tr.settings.Model)})
	var status agent.TurnStatus
	var terr *agent.TurnError
	switch tr.kind {
	case "compact":
		status, terr = tr.runCompact()
	case "review":
		status, terr = tr.runReview()
	case "userShell":
		status, terr = tr.runShellTurn()
	default:
		status, terr = tr.loop()
	}

	t.mu.Lock()
	tr.ending = true
	tr.requests = map[string]chan agent.Op{}
	t.mu.Unlock()
	// User commands running beside the turn end inside it (ending stops
	// new ones from joining).
	tr.aux.Wait()
	t.appendHistory(tr.id, tr.takePending()...)
	tr.cancel()

	// A turn that changed files ends with its diff once more, as Codex
	// 0.169's does.
	if status == agent.TurnStatusCompleted {
		if u := tr.diff.unified(); u != "" {
			tr.emit(agent.TurnDiff{Diff: u})
		}
	}
	if terr != nil {
		tr.emit(agent.Error{Err: *terr})
	}
	now := time.Now()
	tr.emit(agent.TurnCompleted{
		Status: status, Error: terr,
		LastAgentMessage: tr.lastMessage, LastAgentMessageID: tr.lastMessageID,
		CompletedAt: now, Duration: now.Sub(tr.started),
	})
	if err := t.rec.Sync(); err != nil {
		t.log.Warn("syncing the rollout", "err", err)
	}
	tr.notify(status)
}

// loop samples the model and runs its tool calls until it answers without
// any, the turn is interrupted, or it fails.
func (tr *turn) loop() (agent.TurnStatus, *agent.TurnError) {
	t := tr.t
	overflowed := false
	for {
		t.mu.Lock()
		inputs := tr.inputs
		tr.inputs = nil
		t.mu.Unlock()
		// The user sees the input at once; the history gets the turn's
		// context blocks first (reading AGENTS.md may wait for the
		// exec-server).
		for _, in := range inputs {
			tr.showUserMessage(in)
		}
		if !tr.contextDone {
			tr.contextDone = true
			tr.recordContext()
		}
		for _, in := range inputs {
			tr.t.appendHistory(tr.id, userMessageItem(in.input, tr.imagePrep()))
			tr.t.appendHistory(tr.id, tr.skillItems(in.input)...)
		}
		tr.t.appendHistory(tr.id, tr.takePending()...)
		if tr.ctx.Err() != nil {
			return agent.TurnStatusInterrupted, nil
		}

		req, err := tr.autoCompact()
		if err != nil && tr.ctx.Err() == nil {
			return agent.TurnStatusFailed, turnError(err)
		}
		res, err := tr.sample(req)
		switch {
		case tr.ctx.Err() != nil:
			return agent.TurnStatusInterrupted, nil
		case errors.Is(err, errSteered):
			continue
		case isContextExceeded(err) && !overflowed:
			// Once a turn: compact, then ask again.
			overflowed = true
			if cerr := tr.compact(true); cerr != nil && tr.ctx.Err() == nil {
				return agent.TurnStatusFailed, turnError(cerr)
			}
			continue
		case err != nil:
			return agent.TurnStatusFailed, turnError(err)
		}
		t.appendHistory(tr.id, res.items...)
		if res.usage != nil {
			tr.addUsage(res.usage)
		}

		if len(res.calls) == 0 {
			t.mu.Lock()
			if len(tr.inputs) > 0 {
				t.mu.Unlock()
				continue
			}
			tr.ending = true
			t.mu.Unlock()
			return agent.TurnStatusCompleted, nil
		}
		for i, call := range res.calls {
			out := tr.runTool(call)
			if tr.ctx.Err() != nil {
				// Keep the history well-formed: every call has an output,
				// the ones that never ran too (the Responses API refuses a
				// function_call without one).
				aborted := make([]prompt.Item, 0, len(res.calls)-i)
				for _, c := range res.calls[i:] {
					aborted = append(aborted, abortedOutput(c))
				}
				t.appendHistory(tr.id, aborted...)
				return agent.TurnStatusInterrupted, nil
			}
			t.appendHistory(tr.id, out)
		}
	}
}

// takePending returns the records of user commands that ran beside the
// turn since the last call.
func (tr *turn) takePending() []prompt.Item {
	tr.t.mu.Lock()
	defer tr.t.mu.Unlock()
	items := tr.pendingItems
	tr.pendingItems = nil
	return items
}

func abortedOutput(call prompt.Item) prompt.Item {
	return toolOutput(call, "aborted")
}

func (tr *turn) showUserMessage(in queuedInput) {
	item := &agent.UserMessage{ID: newUUIDv7(), ClientID: in.clientID, Content: in.input}
	// Whole when shown: it starts and completes at one instant.
	tr.t.q.pushAt(tr.id, time.Now(), agent.ItemStarted{Item: item}, agent.ItemCompleted{Item: item})
	tr.t.notePreview(in.input)
}

// userMessageItem converts user input into a model message; images are
// read and prepared with img (images.go).
func userMessageItem(in []agent.Input, img imagePrep) prompt.Item {
	it := prompt.Item{Type: prompt.TypeMessage, Role: "user", ID: newMessageID()}
	n := 0 // images so far, which numbers a local image
	for _, p := range in {
		switch p.Type {
		case "image":
			n++
			it.Content = append(it.Content, img.imageURLPart(p))
		case "localImage":
			n++
			it.Content = append(it.Content, img.localImageParts(p, n)...)
		case "skill":
			// The skill's instructions follow in a message of their own
			// (skillItems), as in Codex.
		case "mention":
			it.Content = append(it.Content, prompt.Content{Type: "input_text", Text: fmt.Sprintf("[%s %s: %s]", p.Type, p.Name, p.Path)})
		default:
			it.Content = append(it.Content, prompt.Content{Type: "input_text", Text: p.Text})
		}
	}
	if len(it.Content) == 0 {
		it.Content = []prompt.Content{{Type: "input_text", Text: ""}}
	}
	return it
}

func (tr *turn) addUsage(u *prompt.Usage) {
	last := agent.TokenUsage{
		Input: u.InputTokens, CachedInput: u.CachedInputTokens, Output: u.OutputTokens,
		ReasoningOutput: u.ReasoningOutputTokens, Total: u.TotalTokens,
	}
	t := tr.t
	t.mu.Lock()
	if t.usage == nil {
		t.usage = &agent.TokenUsageInfo{}
	}
	info := t.usage
	info.Last = last
	info.Total.Input += last.Input
	info.Total.CachedInput += last.CachedInput
	info.Total.Output += last.Output
	info.Total.ReasoningOutput += last.ReasoningOutput
	info.Total.Total += last.Total
	info.ModelContextWindow = t.core.contextWindow(tr.settings.Model)
	snapshot := *info
	t.mu.Unlock()
	tr.emit(agent.TokenCount{Info: snapshot})
}

// turnError classifies an error that fails a turn.
func turnError(err error) *agent.TurnError {
	if errors.Is(err, prompt.ErrMissingAPIKey) {
		return &agent.TurnError{Message: err.Error(), Info: "unauthorized"}
	}
	pe := prompt.AsError(err)
	te := &agent.TurnError{Message: pe.Error(), Info: pe.Info, HTTPStatus: pe.HTTPStatus}
	if te.Info == "" {
		te.Info = "other"
	}
	return te
}
