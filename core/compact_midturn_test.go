package core

import (
	"fmt"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/compaction"
	"github.com/codexd/codexd/core/prompt"
)

// A compaction between a tool call and the next request keeps the turn's
// progress: the next request carries the last user message, the summary
// after it (as Codex 0.169 places it mid-turn, the thread's context just
// above that message) and then the turn's call with its output, so the
// model does not run the call again. The model here runs the command
// again whenever its output is not in the request (as Codex's summary
// alone leaves it, and as the mock model does).
func TestMidTurnCompactionKeepsTheTurnsToolCall(t *testing.T) {
	const window = 40_000
	calls := 0
	m := newFakeModel()
	m.next = func(req *prompt.Request) fakeResponse {
		if isSummaryRequest(req) {
			return textResponse("msg_sum", "SUMMARY-OF-WORK")
		}
		for _, it := range req.Input {
			if it.Type == prompt.TypeFunctionCallOutput && strings.HasPrefix(it.CallID, "call_") {
				return textResponse("msg_done", "done")
			}
		}
		calls++
		if calls > 3 {
			return textResponse("msg_give_up", "gave up")
		}
		// A long output (the tool keeps about 2,500 tokens of it): past
		// the 25,000-token trigger with the message's 22,000.
		return callResponse(fmt.Sprintf("call_%d", calls), "exec_command",
			map[string]any{"cmd": "head -c 36000 /dev/zero | tr '\\0' y", "yield_time_ms": 10000})
	}
	h := newHarness(t, m, func(c *Config) {
		c.Compaction.ContextWindow = window
		c.Compaction.AutoCompactTokenLimit = 25_000
	})
	th := h.start(agent.Overrides{})
	task := big("TASK", 22_000)
	h.submit(th, agent.UserInput{Input: text(task)})
	evs := until(t, th, isTurnCompleted)
	done := evs[len(evs)-1].Msg.(agent.TurnCompleted)
	if done.Status != agent.TurnStatusCompleted || done.LastAgentMessage != "done" {
		t.Fatalf("turn %s: %+v", done.Status, done.Error)
	}
	if n := len(itemsCompleted[*agent.ContextCompaction](evs)); n != 1 {
		var sizes []int64
		for _, r := range drainRequests(m) {
			sizes = append(sizes, compaction.RequestTokens(r))
		}
		t.Fatalf("%d compactions, want 1 between the call and the next request (requests of %v tokens)", n, sizes)
	}
	if n := len(itemsCompleted[*agent.CommandExecution](evs)); n != 1 || calls != 1 {
		t.Fatalf("the command ran %d times (%d calls): the compaction lost the turn's call", n, calls)
	}

	// The request after the compaction: context, the task, the summary,
	// then the call and its output.
	reqs := drainRequests(m)
	if len(reqs) != 3 || !isSummaryRequest(reqs[1]) {
		t.Fatalf("%d requests", len(reqs))
	}
	in := reqs[2].Input
	at := func(pred func(prompt.Item) bool) int {
		for i, it := range in {
			if pred(it) {
				return i
			}
		}
		return -1
	}
	userAt := at(func(it prompt.Item) bool { return it.Role == "user" && strings.HasPrefix(it.Text(), "TASK ") })
	envAt := at(func(it prompt.Item) bool { return strings.Contains(it.Text(), "<environment_context>") })
	sumAt := at(func(it prompt.Item) bool { return compaction.IsSummary(it.Text()) })
	callAt := at(func(it prompt.Item) bool { return it.Type == prompt.TypeFunctionCall && it.CallID == "call_1" })
	outAt := at(func(it prompt.Item) bool { return it.Type == prompt.TypeFunctionCallOutput && it.CallID == "call_1" })
	if envAt < 0 || userAt < 0 || !(envAt < userAt && userAt < sumAt && sumAt < callAt && callAt < outAt && outAt == len(in)-1) {
		t.Fatalf("after the compaction: context %d, task %d, summary %d, call %d, output %d of %d items",
			envAt, userAt, sumAt, callAt, outAt, len(in))
	}
	if !strings.Contains(lastOutput(t, reqs[2], "call_1"), "yyyy") {
		t.Fatal("the kept output lost its text")
	}
	// What is kept stays well under the trigger: the next request does not
	// compact again.
	if n, limit := compaction.RequestTokens(reqs[2]), h.core.threshold("mock-model"); n >= limit {
		t.Fatalf("request after the compaction %d tokens, trigger %d", n, limit)
	}
}

// An ephemeral fork of a stored, compacted thread starts from the
// compacted history, as a resume does: not from every item before the
// compaction, and without the compaction record itself as a model item.
func TestEphemeralForkOfCompactedThread(t *testing.T) {
	home := t.TempDir()
	const window = 50_000
	m := newFakeModel(textResponse("msg_1", "ANSWER-ONE"), textResponse("msg_s", "FORKED SUMMARY"))
	h := newHarness(t, m, func(c *Config) { withStore(home)(c); withWindow(window)(c) })
	l, err := h.core.StartThread(t.Context(), agent.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.submit(l.Thread, agent.UserInput{Input: text("first question")})
	until(t, l.Thread, isTurnCompleted)
	h.submit(l.Thread, agent.Compact{})
	until(t, l.Thread, isTurnCompleted)
	id := l.Thread.ID()
	if err := h.core.Close(); err != nil {
		t.Fatal(err)
	}

	m2 := newFakeModel(textResponse("msg_2", "two"))
	h2 := newHarness(t, m2, func(c *Config) { withStore(home)(c); withWindow(window)(c) })
	fork, err := h2.core.ForkThread(t.Context(), id, agent.StartOptions{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	h2.submit(fork.Thread, agent.UserInput{Input: text("in the fork")})
	until(t, fork.Thread, isTurnCompleted)
	req := m2.request(t)
	summary := false
	for _, it := range req.Input {
		if it.Type == compaction.MarkerType {
			t.Fatalf("the compaction record went to the model as an item: %+v", it)
		}
		if strings.Contains(it.Text(), "ANSWER-ONE") {
			t.Fatal("the fork sent the history from before the compaction")
		}
		summary = summary || strings.Contains(it.Text(), "FORKED SUMMARY")
	}
	if !summary {
		t.Fatal("the fork's request has no summary")
	}
}
