package core

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckRules: CODEX_HOME's rules judge each plain command of a script,
// the most restrictive winning, with Codex 0.169's reasons; an accepted
// amendment holds at once and is in rules/default.rules for the next core.
func TestCheckRules(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "rules"), 0o755); err != nil {
		t.Fatal(err)
	}
	rules := `prefix_rule(pattern=["git", ["status", "log"]], decision="allow")
prefix_rule(pattern=["rm"], decision="forbidden", justification="no rm")
prefix_rule(pattern=["curl"], decision="forbidden")
prefix_rule(pattern=["make"], decision="prompt")
`
	if err := os.WriteFile(filepath.Join(home, "rules", "a.rules"), []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &Core{cfg: Config{CodexHome: home}, log: slog.New(slog.DiscardHandler)}
	sh := func(s string) []string { return []string{"/bin/bash", "-c", s} }
	for _, tc := range []struct {
		script string
		want   ruleVerdict
	}{
		{"git status", ruleVerdict{allowed: true, matched: true}},
		{"git status && git log -1", ruleVerdict{allowed: true, matched: true}},
		{"git status && ls", ruleVerdict{matched: true}},
		{"git push", ruleVerdict{}},
		{"git status && rm -rf x", ruleVerdict{forbidden: "`CMD` rejected: no rm", matched: true}},
		{"curl -s example.com", ruleVerdict{forbidden: "`CMD` rejected: policy forbids commands starting with `curl`", matched: true}},
		{"make all", ruleVerdict{prompt: "`CMD` requires approval by policy", matched: true}},
	} {
		got := c.checkRules(sh(tc.script), "CMD")
		if got != tc.want {
			t.Errorf("%q: %+v, want %+v", tc.script, got, tc.want)
		}
	}

	c.acceptAmendment([]string{"npm", "test"})
	if got := c.checkRules(sh("npm test --watch"), "CMD"); !got.allowed {
		t.Errorf("after the amendment: %+v", got)
	}
	b, err := os.ReadFile(filepath.Join(home, "rules", "default.rules"))
	if err != nil || !strings.Contains(string(b), `prefix_rule(pattern=["npm", "test"], decision="allow")`) {
		t.Fatalf("default.rules: %q, %v", b, err)
	}
	next := &Core{cfg: Config{CodexHome: home}, log: slog.New(slog.DiscardHandler)}
	if got := next.checkRules(sh("npm test"), "CMD"); !got.allowed {
		t.Errorf("a new core does not allow the saved amendment: %+v", got)
	}
	if got := (&Core{log: slog.New(slog.DiscardHandler)}).checkRules(sh("rm x"), "CMD"); got != (ruleVerdict{}) {
		t.Errorf("without a CODEX_HOME: %+v", got)
	}
}
