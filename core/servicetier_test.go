package core

import (
	"testing"

	"github.com/codexd/codexd/agent"
)

// The service tier "default" is no tier on the wire: Codex 0.169 sends no
// service_tier for it (side by side, a thread started with serviceTier
// "default", and every thread after a thread/revert, which records an
// unset tier as "default"), while another tier is sent as it is.
func TestDefaultServiceTierIsNotSent(t *testing.T) {
	for tier, want := range map[string]string{"default": "", "flex": "flex"} {
		m := newFakeModel(textResponse("m1", "hi"))
		h := newHarness(t, m, nil)
		th := h.start(agent.Overrides{ServiceTier: &tier})
		h.submit(th, agent.UserInput{Input: text("hello")})
		until(t, th, isTurnCompleted)
		if got := m.request(t).ServiceTier; got != want {
			t.Errorf("tier %q: service_tier %q sent, want %q", tier, got, want)
		}
	}
}
