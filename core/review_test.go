package core

import (
	"errors"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/core/review"
)

const findingsJSON = `{"findings":[{"title":"[P2] Check it","body":"Body text.","confidence_score":0.5,"priority":2,"code_location":{"absolute_file_path":"/w/a.go","line_range":{"start":1,"end":2}}}],"overall_correctness":"patch is correct","overall_explanation":"Mostly fine.","overall_confidence_score":0.6}`

func TestReviewTurn(t *testing.T) {
	gate := make(chan struct{})
	m := newFakeModel(textResponse("msg_1", "hi"),
		callResponse("call_git", "exec_command", map[string]any{"cmd": "echo M a.go"}),
		fakeResponse{gate: gate, events: append(textEvents("msg_r", findingsJSON), completed(50, 20))})
	h := newHarness(t, m, func(c *Config) { c.ReviewModel = "review-model" })
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("earlier talk")})
	until(t, th, isTurnCompleted)

	id := h.submit(th, agent.Review{Target: agent.ReviewTarget{Type: "commit", SHA: "0123456789", Title: "Add a"}})
	evs := until(t, th, func(ev agent.Event) bool {
		c, ok := ev.Msg.(agent.ItemCompleted)
		_, isCmd := c.Item.(*agent.CommandExecution)
		return ok && isCmd
	})
	if ts := msgs[agent.TurnStarted](evs); len(ts) != 1 || ts[0].Kind != "review" {
		t.Fatalf("started %s", describe(evs))
	}
	if asked := itemsCompleted[*agent.UserMessage](evs); len(asked) != 1 || !strings.Contains(asked[0].Content[0].Text, "git show 0123456789") {
		t.Fatalf("the review's user message %+v", asked)
	}
	entered := itemsCompleted[*agent.EnteredReviewMode](evs)
	if len(entered) != 1 || entered[0].Review != "commit 0123456: Add a" {
		t.Fatalf("entered %+v", entered)
	}
	var ns *agent.NotSteerableError
	if _, err := th.Submit(t.Context(), agent.Steer{ExpectedTurnID: id, Input: text("x")}); !errors.As(err, &ns) || ns.TurnKind != "review" {
		t.Fatalf("steer: %v", err)
	}
	if _, err := th.Submit(t.Context(), agent.UserInput{Input: text("x")}); !errors.As(err, &ns) {
		t.Fatalf("input: %v", err)
	}
	close(gate)
	evs = until(t, th, isTurnCompleted)
	exited := itemsCompleted[*agent.ExitedReviewMode](evs)
	want := "Mostly fine.\n\nReview comment:\n\n- [P2] Check it — /w/a.go:1-2\n  Body text."
	if len(exited) != 1 || exited[0].Review != want {
		t.Fatalf("exited %+v", exited)
	}
	if done := evs[len(evs)-1].Msg.(agent.TurnCompleted); done.Status != agent.TurnStatusCompleted || done.LastAgentMessage != want {
		t.Fatalf("completed %+v", done)
	}
	// The review is then the turn's answer, as in Codex; the reviewer's
	// own messages are not shown.
	answers := itemsCompleted[*agent.AgentMessage](evs)
	if len(answers) != 1 || answers[0].Text != want || evs[len(evs)-1].Msg.(agent.TurnCompleted).LastAgentMessageID != answers[0].ID {
		t.Fatalf("answers %+v", answers)
	}

	m.request(t)
	first := m.request(t)
	// The reviewer has its own instructions and history, the review model,
	// and only the tools that look.
	if first.Model != "review-model" || first.Input[0].Text() != review.Instructions {
		t.Fatalf("review request model %q, first input %q", first.Model, first.Input[0].Text())
	}
	for _, it := range first.Input {
		if strings.Contains(it.Text(), "earlier talk") {
			t.Fatal("the reviewer sees the thread's conversation")
		}
	}
	if last := first.Input[len(first.Input)-1].Text(); !strings.Contains(last, "git show 0123456789") {
		t.Fatalf("review prompt %q", last)
	}
	for _, spec := range first.Tools {
		if strings.Contains(string(spec), `"apply_patch"`) || strings.Contains(string(spec), `"update_plan"`) {
			t.Fatalf("a reviewer tool that changes things: %s", spec)
		}
	}
	second := m.request(t)
	if out := lastOutput(t, second, "call_git"); !strings.Contains(out, "M a.go") {
		t.Fatalf("command output %q", out)
	}
	// The thread keeps the review for what follows.
	hist := h.core.loaded(th.ID()).historySnapshot()
	if last := hist[len(hist)-1].Text(); !strings.Contains(last, want) || hist[len(hist)-1].Role != "user" {
		t.Fatalf("history %q", last)
	}
}

// Output that is not the findings format is shown as text; the turn still
// completes.
func TestReviewUnparseableOutput(t *testing.T) {
	m := newFakeModel(textResponse("msg_r", "I could not decide."))
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	h.submit(th, agent.Review{Target: agent.ReviewTarget{Type: "custom", Instructions: "look at docs"}})
	evs := until(t, th, isTurnCompleted)
	exited := itemsCompleted[*agent.ExitedReviewMode](evs)
	if len(exited) != 1 || exited[0].Review != "I could not decide." || evs[len(evs)-1].Msg.(agent.TurnCompleted).Status != agent.TurnStatusCompleted {
		t.Fatalf("%s", describe(evs))
	}
	if req := m.request(t); req.Model != "mock-model" {
		t.Fatalf("model %q without review_model", req.Model)
	}
	if _, err := th.Submit(t.Context(), agent.Review{Target: agent.ReviewTarget{Type: "baseBranch"}}); err == nil || err.Error() != "branch must not be empty" {
		t.Fatalf("bad target: %v", err)
	}
}

func TestReviewFailsWithModelError(t *testing.T) {
	m := newFakeModel(fakeResponse{startErr: &prompt.Error{Message: "boom", Info: "internalServerError", HTTPStatus: 500}})
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	h.submit(th, agent.Review{Target: agent.ReviewTarget{Type: "uncommittedChanges"}})
	evs := until(t, th, isTurnCompleted)
	done := evs[len(evs)-1].Msg.(agent.TurnCompleted)
	if done.Status != agent.TurnStatusFailed || done.Error == nil || done.Error.Info != "internalServerError" {
		t.Fatalf("%+v", done)
	}
	if x := itemsCompleted[*agent.ExitedReviewMode](evs); len(x) != 1 || x[0].Review != review.FallbackMessage {
		t.Fatalf("exited review mode on a failed review: %+v", x)
	}
}
