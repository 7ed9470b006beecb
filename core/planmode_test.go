package core

import (
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
)

// TestPlanModeProposedPlanIsAPlanItem: in Plan mode a <proposed_plan>
// block of the answer becomes a plan item (id "<turn>-plan", streamed as
// plan deltas, completed before the message), the message keeps the
// prose, and the model's history keeps the whole text, as Codex 0.169
// shows it (observed side by side with MOCK:proposeplan). In Default mode
// the block is the message's text.
func TestPlanModeProposedPlanIsAPlanItem(t *testing.T) {
	const whole = "Here is what I would do.\n<proposed_plan>\n# Plan\n\n1. Change it.\n</proposed_plan>\nSay the word."
	deltas := []string{"Here is what I would do.\n<propo", "sed_plan>\n# Pl", "an\n\n1. Change it.\n</pro", "posed_plan>\nSay the word."}
	m := newFakeModel(textResponse("msg_1", deltas...), textResponse("msg_2", "ok"), textResponse("msg_3", deltas...))
	h := newHarness(t, m, func(c *Config) { c.NoSkills = true })
	plan, def := "plan", "default"
	th := h.start(agent.Overrides{CollaborationMode: &plan})
	h.submit(th, agent.UserInput{Input: text("plan it")})
	evs := until(t, th, isTurnCompleted)
	m.request(t) // the first turn's
	turnID := ""
	for _, ev := range evs {
		if _, ok := ev.Msg.(agent.TurnStarted); ok {
			turnID = ev.TurnID
		}
	}
	var order []string
	var prose, planText strings.Builder
	for _, ev := range evs {
		switch x := ev.Msg.(type) {
		case agent.AgentMessageDelta:
			prose.WriteString(x.Delta)
			order = append(order, "msgdelta")
		case agent.PlanDelta:
			if x.ItemID != turnID+"-plan" {
				t.Fatalf("plan delta of item %q", x.ItemID)
			}
			planText.WriteString(x.Delta)
			order = append(order, "plandelta")
		case agent.ItemStarted:
			order = append(order, "start:"+describeItem(x.Item))
		case agent.ItemCompleted:
			order = append(order, "done:"+describeItem(x.Item))
		}
	}
	if prose.String() != "Here is what I would do.\nSay the word." || planText.String() != "# Plan\n\n1. Change it.\n" {
		t.Fatalf("prose %q, plan %q", prose.String(), planText.String())
	}
	got := strings.Join(order, " ")
	if !strings.Contains(got, "msgdelta start:") || !strings.HasSuffix(got, "plandelta msgdelta done:"+describeItem(&agent.Plan{ID: turnID + "-plan", Text: "# Plan\n\n1. Change it.\n"})+" done:"+describeItem(&agent.AgentMessage{ID: "msg_1", Text: "Here is what I would do.\nSay the word."})) {
		t.Fatalf("events: %s", got)
	}
	// The model's history keeps the block.
	h.submit(th, agent.UserInput{Input: text("go on")})
	until(t, th, isTurnCompleted)
	found := false
	req := m.request(t)
	for _, it := range req.Input {
		if it.Type == prompt.TypeMessage && it.Role == "assistant" && it.Text() == whole {
			found = true
		}
	}
	if !found {
		t.Fatalf("the model's history lost the plan block")
	}
	// Default mode: no plan item, the text as it came.
	h.submit(th, agent.UserInput{Input: text("again"), Overrides: agent.Overrides{CollaborationMode: &def}})
	evs = until(t, th, isTurnCompleted)
	if ps := itemsCompleted[*agent.Plan](evs); len(ps) != 0 {
		t.Fatalf("a plan item in Default mode: %+v", ps)
	}
	if ms := itemsCompleted[*agent.AgentMessage](evs); len(ms) != 1 || ms[0].Text != whole {
		t.Fatalf("Default mode message: %+v", ms)
	}
}
