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
