package core

import (
	"testing"

	"github.com/codexd/codexd/agent"
)

// A configured model_context_window is used as a model's own window is:
// its effective part (Codex 0.169, side by side, reports 95,000 for a
// configured 100,000 on gpt-5.5, in turn/started and the token counts).
func TestConfiguredWindowIsEffective(t *testing.T) {
	m := newFakeModel(fakeResponse{events: append(textEvents("msg_1", "ok"), completed(10, 5))})
	h := newHarness(t, m, func(c *Config) { c.Compaction.ContextWindow = 100_000 })
	th := h.start(agent.Overrides{Model: strp("gpt-5.5")})
	h.submit(th, agent.UserInput{Input: text("hi")})
	evs := until(t, th, isTurnCompleted)
	if ts := msgs[agent.TurnStarted](evs); len(ts) != 1 || ts[0].ModelContextWindow != 95_000 {
		t.Fatalf("turn started %+v", ts)
	}
	tc := msgs[agent.TokenCount](evs)
	if len(tc) == 0 || tc[len(tc)-1].Info.ModelContextWindow != 95_000 {
		t.Fatalf("token counts %+v", tc)
	}
}
