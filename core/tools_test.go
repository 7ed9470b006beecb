package core

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
)

func TestUpdatePlan(t *testing.T) {
	m := newFakeModel(
		callResponse("call_1", "update_plan", map[string]any{
			"explanation": "two steps",
			"plan":        []map[string]string{{"step": "read", "status": "completed"}, {"step": "write", "status": "in_progress"}},
		}),
		callResponse("call_2", "update_plan", map[string]any{"plan": []map[string]string{{"step": "x", "status": "bogus"}}}),
		textResponse("msg_3", "planned"),
	)
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("plan")})
	evs := until(t, th, isTurnCompleted)
	plans := msgs[agent.PlanUpdated](evs)
	if len(plans) != 1 || plans[0].Explanation != "two steps" || len(plans[0].Steps) != 2 || plans[0].Steps[1].Status != "inProgress" {
		t.Fatalf("plans %+v", plans)
	}
	m.request(t)
	if out := lastOutput(t, m.request(t), "call_1"); out != "Plan updated" {
		t.Fatalf("model got %q", out)
	}
	if out := lastOutput(t, m.request(t), "call_2"); !strings.Contains(out, "failed to parse function arguments") {
		t.Fatalf("model got %q", out)
	}
}

func TestRequestUserInput(t *testing.T) {
	m := newFakeModel(
		callResponse("call_1", "request_user_input", map[string]any{"questions": []map[string]any{
			{"id": "color", "header": "Color", "question": "Which color?", "options": []map[string]string{{"label": "red", "description": "warm"}}},
		}}),
		textResponse("msg_2", "thanks"),
	)
	h := newHarness(t, m, func(c *Config) { c.RequestUserInputTool = true })
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("ask me")})
	evs := until(t, th, func(ev agent.Event) bool { _, ok := ev.Msg.(agent.UserInputRequest); return ok })
	req := evs[len(evs)-1].Msg.(agent.UserInputRequest)
	if req.CallID != "call_1" || len(req.Questions) != 1 || req.Questions[0].Options[0].Label != "red" {
		t.Fatalf("request %+v", req)
	}
	h.submit(th, agent.UserInputAnswer{CallID: "call_1", Answers: map[string][]string{"color": {"red"}}})
	until(t, th, isTurnCompleted)
	m.request(t)
	if out := lastOutput(t, m.request(t), "call_1"); out != `{"answers":{"color":{"answers":["red"]}}}` {
		t.Fatalf("model got %q", out)
	}
}

func TestReasoningAndUnknownTool(t *testing.T) {
	enc := "opaque"
	r := prompt.Item{Type: prompt.TypeReasoning, ID: "rs_1"}
	rdone := prompt.Item{Type: prompt.TypeReasoning, ID: "rs_1", Summary: []prompt.Summary{{Type: "summary_text", Text: "thinking"}}, EncryptedContent: &enc}
	call := prompt.Item{Type: prompt.TypeFunctionCall, Name: "teleport", Arguments: "{}", CallID: "call_1"}
	m := newFakeModel(
		fakeResponse{events: []prompt.Event{
			{Kind: prompt.ItemAdded, Item: &r},
			{Kind: prompt.ReasoningSummaryPartAdded, ItemID: "rs_1"},
			{Kind: prompt.ReasoningSummaryDelta, ItemID: "rs_1", Delta: "thinking"},
			{Kind: prompt.ItemDone, Item: &rdone},
			{Kind: prompt.ItemDone, Item: &call},
			completed(1, 1),
		}},
		textResponse("msg_2", "ok"),
	)
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("think")})
	evs := until(t, th, isTurnCompleted)
	rs := itemsCompleted[*agent.Reasoning](evs)
	if len(rs) != 1 || rs[0].Summary[0] != "thinking" || len(msgs[agent.ReasoningSummaryDelta](evs)) != 1 {
		t.Fatalf("reasoning %s", describe(evs))
	}
	m.request(t)
	req := m.request(t)
	if out := lastOutput(t, req, "call_1"); out != "unsupported call: teleport" {
		t.Fatalf("model got %q", out)
	}
	found := false
	for _, it := range req.Input {
		if it.Type == prompt.TypeReasoning && it.EncryptedContent != nil && *it.EncryptedContent == "opaque" {
			found = true
		}
	}
	if !found {
		t.Fatal("reasoning item not sent back")
	}
}

func TestAgentsMDInstructions(t *testing.T) {
	m := newFakeModel(textResponse("msg_1", "ok"))
	h := newHarness(t, m, nil)
	repo := h.dir
	sub := repo + "/pkg/inner"
	if err := mkdirAll(sub); err != nil {
		t.Fatal(err)
	}
	if err := mkdirAll(repo + "/.git"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, repo+"/AGENTS.md", "root rules")
	writeFile(t, repo+"/pkg/AGENTS.md", "pkg rules")
	writeFile(t, sub+"/AGENTS.override.md", "inner override")
	writeFile(t, sub+"/AGENTS.md", "inner ignored")
	writeFile(t, h.core.cfg.CodexHome+"/AGENTS.md", "home rules")
	th := h.start(agent.Overrides{Cwd: &sub})
	h.submit(th, agent.UserInput{Input: text("hi")})
	until(t, th, isTurnCompleted)
	req := m.request(t)
	var docs string
	for _, it := range req.Input {
		for _, c := range it.Content {
			if it.Role == "user" && strings.HasPrefix(c.Text, "# AGENTS.md instructions for ") {
				docs = c.Text
			}
		}
	}
	want := "# AGENTS.md instructions for " + sub + "\n\n<INSTRUCTIONS>\nhome rules\n\n--- project-doc ---\n\nroot rules\n\npkg rules\n\ninner override\n</INSTRUCTIONS>"
	if docs != want {
		t.Fatalf("docs %q\nwant %q", docs, want)
	}
}

// TestNoToolsThread: a thread started with NoTools (the TUI's title job)
// offers the model no tool, and a call it makes anyway runs nothing; the
// title job's schema reaches the model and the thread's other turns keep
// the option. A thread started without it is offered the configured tools.
func TestNoToolsThread(t *testing.T) {
	m := newFakeModel(
		callResponse("call_1", "exec_command", map[string]any{"cmd": "touch ran"}),
		callResponse("call_2", "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: patched\n+x\n*** End Patch"}),
		textResponse("msg_3", `{"title":"Say hi"}`),
		textResponse("msg_4", "again"),
		textResponse("msg_5", "tools"),
	)
	h := newHarness(t, m, nil)
	l, err := h.core.StartThread(context.Background(), agent.StartOptions{Ephemeral: true, ThreadSource: "thread_title", NoTools: true})
	if err != nil {
		t.Fatal(err)
	}
	th := l.Thread
	schema := []byte(`{"type":"object","properties":{"title":{"type":"string","minLength":1,"maxLength":36}},"required":["title"],"additionalProperties":false}`)
	h.submit(th, agent.UserInput{Input: text("title this"), OutputSchema: schema})
	evs := until(t, th, isTurnCompleted)
	first := m.request(t)
	if len(first.Tools) != 0 {
		t.Fatalf("offered %d tools", len(first.Tools))
	}
	if first.Text == nil || first.Text.Format == nil || string(first.Text.Format.Schema) != string(schema) {
		t.Fatalf("schema not sent: %+v", first.Text)
	}
	if n := len(itemsCompleted[*agent.CommandExecution](evs)) + len(itemsCompleted[*agent.FileChange](evs)); n != 0 {
		t.Fatalf("a tool ran: %s", describe(evs))
	}
	for _, f := range []string{"ran", "patched"} {
		if _, err := os.Stat(filepath.Join(h.dir, f)); err == nil {
			t.Fatalf("%s exists", f)
		}
	}
	if out := lastOutput(t, m.request(t), "call_1"); out != "unsupported call: exec_command" {
		t.Fatalf("model got %q", out)
	}
	third := m.request(t)
	if out := lastOutput(t, third, "call_2"); out != "unsupported call: apply_patch" {
		t.Fatalf("model got %q", out)
	}
	if len(third.Tools) != 0 {
		t.Fatal("tools offered on a later request")
	}
	h.submit(th, agent.UserInput{Input: text("again")})
	until(t, th, isTurnCompleted)
	if r := m.request(t); len(r.Tools) != 0 {
		t.Fatal("tools offered on the next turn")
	}

	other := h.start(agent.Overrides{})
	h.submit(other, agent.UserInput{Input: text("tools?")})
	until(t, other, isTurnCompleted)
	if r := m.request(t); len(r.Tools) == 0 {
		t.Fatal("a regular thread was offered no tools")
	}
}
