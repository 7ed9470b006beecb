package core

import (
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
)

func TestForkThread(t *testing.T) {
	for _, stored := range []bool{false, true} {
		name := "memory"
		if stored {
			name = "store"
		}
		t.Run(name, func(t *testing.T) {
			m := newFakeModel(textResponse("msg_1", "original"), textResponse("msg_2", "forked"))
			var mod func(*Config)
			if stored {
				mod = withStore(t.TempDir())
			}
			h := newHarness(t, m, mod)
			th := h.start(agent.Overrides{})
			h.submit(th, agent.UserInput{Input: text("base question")})
			until(t, th, isTurnCompleted)
			l, err := h.core.ForkThread(t.Context(), th.ID(), agent.StartOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if l.Thread.ID() == th.ID() || l.Info.ForkedFromID != th.ID() || len(l.History) != 1 {
				t.Fatalf("fork %+v history %d", l.Info, len(l.History))
			}
			h.submit(l.Thread, agent.UserInput{Input: text("follow-up")})
			until(t, l.Thread, isTurnCompleted)
			m.request(t)
			req := m.request(t)
			var texts []string
			for _, it := range req.Input {
				if it.Role == "user" && !strings.HasPrefix(it.Text(), "<environment") || it.Role == "assistant" {
					texts = append(texts, it.Text())
				}
			}
			if strings.Join(texts, "|") != "base question|original|follow-up" {
				t.Fatalf("forked history %q", texts)
			}
		})
	}
}

func TestModelsAndConfig(t *testing.T) {
	h := newHarness(t, newFakeModel(), nil)
	ms, err := h.core.Models(t.Context())
	// Codex 0.169's catalogue, whatever the configured model: gpt-6.1-sol
	// (priority 1) first and the default; a window is the usable part.
	if err != nil || len(ms) != 12 || ms[0].ID != "gpt-6.1-sol" || !ms[0].IsDefault || ms[1].IsDefault ||
		ms[0].ContextWindow != 258400 || ms[5].ID != "gpt-6.1-terra" || ms[5].ContextWindow != 475000 {
		t.Fatalf("models %+v %v", ms, err)
	}
	if w := h.core.contextWindow("gpt-6.1-terra"); w != 475000 {
		t.Fatalf("gpt-6.1-terra's turn window %d, want 475000 (95%% of 500000)", w)
	}
	if w := h.core.contextWindow("mystery"); w != 258400 {
		t.Fatalf("the fallback's turn window %d, want 258400", w)
	}
	cfg := h.core.Config()
	if cfg.Settings.Model != "mock-model" || len(cfg.Providers) != 1 || cfg.Providers[0] != "mock" {
		t.Fatalf("config %+v", cfg)
	}
}

func TestWarningWhenTheSandboxIsUnavailable(t *testing.T) {
	h := newHarness(t, newFakeModel(), func(c *Config) { c.Sandbox = nil })
	th := h.start(agent.Overrides{Sandbox: sandboxMode(agent.SandboxReadOnly)})
	evs := until(t, th, func(ev agent.Event) bool { _, ok := ev.Msg.(agent.Warning); return ok })
	if w := evs[0].Msg.(agent.Warning); !strings.Contains(w.Message, "cannot be enforced") {
		t.Fatalf("warning %+v", w)
	}
}
