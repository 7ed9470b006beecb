package core

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/config"
	"github.com/codexd/codexd/modelinfo"
)

// The compaction and review keys are read as every other key is: from the
// profile in use when it sets them, else from the top level.
func TestCompactionAndReviewKeysFromAProfile(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "profile-prompt.md"), []byte("PROFILE PROMPT FILE"), 0o600); err != nil {
		t.Fatal(err)
	}
	toml := `model_provider = "mock"
model_context_window = 100000
model_auto_compact_token_limit = 90000
compact_prompt = "TOP PROMPT"
review_model = "top-reviewer"

[profiles.small]
model_context_window = 32000
model_auto_compact_token_limit = 20000
compact_prompt = "PROFILE PROMPT"
review_model = "profile-reviewer"

[profiles.file]
experimental_compact_prompt_file = "profile-prompt.md"
`
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	load := func(profile string) Config {
		t.Helper()
		cfg, err := config.Load(config.LoadOptions{CodexHome: home, Profile: profile})
		if err != nil {
			t.Fatal(err)
		}
		cc, err := ConfigFrom(Setup{Config: cfg, Cwd: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return cc
	}
	cases := []struct {
		profile        string
		window, limit  int64
		prompt, review string
	}{
		{"", 100000, 90000, "TOP PROMPT", "top-reviewer"},
		{"small", 32000, 20000, "PROFILE PROMPT", "profile-reviewer"},
		{"file", 100000, 90000, "PROFILE PROMPT FILE", "top-reviewer"},
	}
	for _, c := range cases {
		cc := load(c.profile)
		o := cc.Compaction
		if o.ContextWindow != c.window || o.AutoCompactTokenLimit != c.limit || o.PromptOr() != c.prompt || cc.ReviewModel != c.review {
			t.Errorf("profile %q: %+v, review model %q; want window %d, limit %d, prompt %q, review model %q",
				c.profile, o, cc.ReviewModel, c.window, c.limit, c.prompt, c.review)
		}
	}
}

// With no model_context_window, the window is the model's own (its
// metadata's effective window, as Codex reports it), and the trigger
// follows it; a configured window never passes the model's maximum.
func TestCompactionUsesTheModelsWindow(t *testing.T) {
	const window = 24_000
	cat := &modelinfo.Catalog{Models: []modelinfo.Info{{
		Slug: "mock-model", ContextWindow: window * 2, MaxContextWindow: window * 4, EffectiveContextWindowPercent: 50,
		Truncation: modelinfo.TruncationPolicy{Mode: modelinfo.TruncateBytes, Limit: 10_000},
	}}}
	m := summaryModel(window, 1)
	h := newHarness(t, m, func(c *Config) { c.Catalog = cat })
	th := h.start(agent.Overrides{})
	compactions := 0
	for i := range 12 {
		h.submit(th, agent.UserInput{Input: text(big("turn"+string(rune('A'+i)), 3000))})
		evs := until(t, th, isTurnCompleted)
		if done := evs[len(evs)-1].Msg.(agent.TurnCompleted); done.Status != agent.TurnStatusCompleted {
			t.Fatalf("turn %d: %+v", i, done)
		}
		if ts := msgs[agent.TurnStarted](evs); len(ts) != 1 || ts[0].ModelContextWindow != window {
			t.Fatalf("turn started %+v, want the model's effective window %d", ts, window)
		}
		compactions += len(itemsCompleted[*agent.ContextCompaction](evs))
	}
	if compactions == 0 {
		t.Fatal("no compaction at the model's own window")
	}

	// model_context_window past the model's max_context_window is capped
	// (and its effective part is the window).
	h2 := newHarness(t, newFakeModel(textResponse("msg_1", "ok")), func(c *Config) {
		c.Catalog = cat
		c.Compaction.ContextWindow = window * 100
	})
	th2 := h2.start(agent.Overrides{})
	h2.submit(th2, agent.UserInput{Input: text("hi")})
	evs := until(t, th2, isTurnCompleted)
	if ts := msgs[agent.TurnStarted](evs); len(ts) != 1 || ts[0].ModelContextWindow != window*2 {
		t.Fatalf("turn started %+v, want half the model's max window %d", ts, window*4)
	}
}
