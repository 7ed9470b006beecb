package core

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/core/review"
	"github.com/codexd/codexd/core/tools"
)

// maxReviewSteps bounds the model requests of one review (each may run
// commands).
const maxReviewSteps = 64

// reviewTools are the tools a reviewer gets: it looks, it does not change.
var reviewTools = map[string]bool{tools.ExecCommand: true, tools.WriteStdin: true}

// runReview is the body of a review turn. The reviewer works in a history
// of its own (the review instructions, the thread's context, what to
// review), runs its git commands through the thread's tools, and its
// answer is parsed into findings: enteredReviewMode opens the turn,
// exitedReviewMode closes it with the review's text, and the thread's
// history keeps that text for what follows.
func (tr *turn) runReview() (agent.TurnStatus, *agent.TurnError) {
	t := tr.t
	target := tr.review.Target
	hint := review.Hint(target)
	entered := &agent.EnteredReviewMode{ID: newUUIDv7(), Review: hint}
	tr.emit(agent.ItemStarted{Item: entered})
	tr.emit(agent.ItemCompleted{Item: entered})
	// What the reviewer is asked shows as the user's message, as in Codex.
	asked := &agent.UserMessage{ID: newUUIDv7(), Content: []agent.Input{{Type: "text", Text: review.Prompt(target)}}}
	tr.emit(agent.ItemStarted{Item: asked})
	tr.emit(agent.ItemCompleted{Item: asked})

	text, err := tr.reviewLoop(target)
	if err != nil || tr.ctx.Err() != nil {
		// The review mode always closes, as in Codex: with no output.
		exited := &agent.ExitedReviewMode{ID: newUUIDv7(), Review: review.FallbackMessage}
		tr.emit(agent.ItemStarted{Item: exited})
		tr.emit(agent.ItemCompleted{Item: exited})
		if tr.ctx.Err() != nil {
			return agent.TurnStatusInterrupted, nil
		}
		return agent.TurnStatusFailed, turnError(err)
	}
	rendered := review.Render(review.Parse(text))
	exited := &agent.ExitedReviewMode{ID: newUUIDv7(), Review: rendered}
	tr.emit(agent.ItemStarted{Item: exited})
	tr.emit(agent.ItemCompleted{Item: exited})
	// Codex follows it with the review as the turn's answer.
	answer := &agent.AgentMessage{ID: "msg_" + newUUIDv7(), Text: rendered}
	tr.emit(agent.ItemStarted{Item: answer})
	tr.emit(agent.ItemCompleted{Item: answer})
	tr.lastMessage, tr.lastMessageID = rendered, answer.ID
	t.appendHistory(tr.id, prompt.Message("user", review.HistoryNote(hint, rendered)))
	return agent.TurnStatusCompleted, nil
}

// reviewLoop asks the reviewer until it answers without a tool call and
// returns that answer.
func (tr *turn) reviewLoop(target agent.ReviewTarget) (string, error) {
	base := tr.buildRequest()
	// The review instructions take the place of the base instructions
	// (the first developer message); the thread's context stays.
	rest := tr.prefix
	if len(rest) > 0 && rest[0].Role == "developer" {
		rest = rest[1:]
	}
	prefix := append([]prompt.Item{prompt.Message("developer", review.Instructions)}, rest...)
	var offered []json.RawMessage
	for _, spec := range base.Tools {
		var s struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(spec, &s) == nil && reviewTools[s.Name] {
			offered = append(offered, spec)
		}
	}
	hist := []prompt.Item{prompt.Message("user", review.Prompt(target))}
	for step := 0; step < maxReviewSteps; step++ {
		req := *base
		req.Tools, req.Text = offered, nil
		req.Input = append(append([]prompt.Item(nil), prefix...), hist...)
		res, err := tr.drainWithRetry(&req)
		if err != nil {
			return "", err
		}
		if res.usage != nil {
			tr.addUsage(res.usage)
		}
		hist = append(hist, res.items...)
		if len(res.calls) == 0 {
			return res.text, nil
		}
		for _, call := range res.calls {
			var out prompt.Item
			if reviewTools[call.Name] && call.Type == prompt.TypeFunctionCall {
				out = tr.runTool(call)
			} else {
				out = prompt.FunctionOutput(call.CallID, fmt.Sprintf("%s is not available during a review", call.Name))
			}
			if tr.ctx.Err() != nil {
				return "", tr.ctx.Err()
			}
			hist = append(hist, out)
		}
	}
	return "", &prompt.Error{Message: fmt.Sprintf("the review took more than %d model requests", maxReviewSteps), Info: "other"}
}

// quietResult is a response read without showing its messages: the items
// for the history, the tool calls, and the last message's text.
type quietResult struct {
	items, calls []prompt.Item
	text         string
	usage        *prompt.Usage
}

// drainWithRetry reads one response quietly, retrying a stream that is cut
// or goes idle as a turn's requests are.
func (tr *turn) drainWithRetry(req *prompt.Request) (quietResult, error) {
	prov, err := tr.t.core.provider(tr.settings)
	if err != nil {
		return quietResult{}, err
	}
	for attempt := 0; ; attempt++ {
		res, err := drainQuiet(tr.ctx, prov, req)
		if err == nil || tr.ctx.Err() != nil {
			return res, err
		}
		pe := prompt.AsError(err)
		if !pe.Stream || attempt >= prov.StreamMaxRetries {
			return quietResult{}, err
		}
		tr.emit(agent.Error{WillRetry: true, Err: agent.TurnError{
			Message: fmt.Sprintf("Reconnecting... %d/%d", attempt+1, prov.StreamMaxRetries),
			Info:    "responseStreamDisconnected", HTTPStatus: pe.HTTPStatus, AdditionalDetails: pe.Error(),
		}})
		select {
		case <-time.After(streamBackoff(attempt)):
		case <-tr.ctx.Done():
			return quietResult{}, tr.ctx.Err()
		}
	}
}

// drainQuiet reads a response to its end; nothing of it is shown.
func drainQuiet(ctx context.Context, prov *providerClient, req *prompt.Request) (quietResult, error) {
	var res quietResult
	s, err := prov.Client.Stream(ctx, req, func(prompt.Event) {})
	if err != nil {
		return res, err
	}
	defer s.Close()
	var deltas strings.Builder // a review answer comes in many deltas: += would cost quadratic time
	for {
		ev, err := nextEvent(s)
		if err != nil {
			return res, err
		}
		switch ev.Kind {
		case prompt.TextDelta:
			deltas.WriteString(ev.Delta)
		case prompt.ItemDone:
			if ev.Item == nil {
				continue
			}
			it := *ev.Item
			switch it.Type {
			case prompt.TypeMessage:
				if it.Role != "" && it.Role != "assistant" {
					continue
				}
				res.text = it.Text()
				if res.text == "" {
					res.text = deltas.String()
				}
				deltas.Reset()
			case prompt.TypeFunctionCall, prompt.TypeCustomToolCall:
				res.calls = append(res.calls, it)
			}
			res.items = append(res.items, it)
		case prompt.Completed:
			if res.text == "" {
				res.text = deltas.String()
			}
			res.usage = ev.Usage
			return res, nil
		}
	}
}

// submitReview queues a review turn on the review model (mu held).
func (t *thread) submitReview(op agent.Review) (string, error) {
	target, err := review.Validate(op.Target)
	if err != nil {
		return "", err
	}
	op.Target = target
	return t.submitSpecial("review", func(tr *turn) {
		tr.review = &op
		if m := op.Model; m != "" {
			tr.settings.Model = m
		} else if m := t.core.cfg.ReviewModel; m != "" {
			tr.settings.Model = m
		}
	}), nil
}
