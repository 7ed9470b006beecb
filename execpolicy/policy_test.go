package execpolicy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseCodexRules(t *testing.T) {
	src := `# Codex's rules
prefix_rule(pattern=["git", "status"], decision="allow")
prefix_rule(
    pattern = ["git", ["push", "reset"]],
    decision = "forbidden",
    justification = "not on this machine",
    match = [["git", "push"]],
    not_match = ["git status"],
)
prefix_rule(pattern=["git"], decision="prompt")
host_executable(name = "git", paths = ["/usr/bin/git"])
prefix_rule(pattern=['echo', "Hello, \"world\"!"])
`
	rules, err := Parse("default.rules", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 4 || rules[1].Justification != "not on this machine" || rules[3].Decision != Allow || rules[1].Source != "default.rules:3" {
		t.Fatalf("rules %+v", rules)
	}
	p := &Policy{Rules: rules}
	for cmd, want := range map[string]Decision{
		"git status --short":   Prompt, // the broader prompt rule is stricter
		"git push origin":      Forbidden,
		"git reset --hard":     Forbidden,
		"git log":              Prompt,
		`echo Hello, "world"!`: "",
	} {
		d, _, _ := p.Check(strings.Fields(cmd))
		if d != want {
			t.Errorf("%s: %q, want %q", cmd, d, want)
		}
	}
	if d, _, ok := p.Check([]string{"echo", `Hello, "world"!`}); !ok || d != Allow {
		t.Errorf("echo: %q %v", d, ok)
	}
	if _, _, ok := p.Check([]string{"ls"}); ok {
		t.Error("ls matched")
	}
}

func TestParseErrors(t *testing.T) {
	for src, want := range map[string]string{
		`prefix_rule(pattern=[])`:                      "non-empty list",
		`prefix_rule(pattern=["a"], decision="maybe")`: "unknown decision",
		`prefix_rule(decision="allow")`:                "missing pattern",
		`prefix_rule(pattern=["a"]`:                    "expected , or ) after pattern",
		`prefix_rule(pattern=["a], decision="allow")`:  "expected , or ] in a list",
		"prefix_rule(pattern=[\"a\n\"])":               "newline in a string",
		`prefix_rule(pattern=["a"], pattern=["b"])`:    "given twice",
		`prefix_rule(["a"])`:                           "by keyword",
		"prefix_rule(pattern=[\"a\"], bogus=1)":        "unknown argument",
		strings.Repeat("[", 100):                       "unexpected",
		"x(y=" + strings.Repeat("[", 100):              "nested too deep",
	} {
		if _, err := Parse("f.rules", []byte(src+"\n")); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}

func TestAppendAsCodexDoes(t *testing.T) {
	home := t.TempDir()
	if err := AppendPrefixRule(home, []string{"echo", "Hello, world!"}, Allow); err != nil {
		t.Fatal(err)
	}
	if err := AppendPrefixRule(home, []string{"echo", "Hello, world!"}, Allow); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, Dir, DefaultFile)
	os.WriteFile(path, []byte(strings.TrimSuffix(mustRead(t, path), "\n")), 0o644) // no final newline
	if err := AppendPrefixRule(home, []string{"npm", "test"}, Forbidden); err != nil {
		t.Fatal(err)
	}
	want := "prefix_rule(pattern=[\"echo\", \"Hello, world!\"], decision=\"allow\")\nprefix_rule(pattern=[\"npm\", \"test\"], decision=\"forbidden\")\n"
	if got := mustRead(t, path); got != want {
		t.Fatalf("default.rules:\n%s\nwant:\n%s", got, want)
	}
	p, err := Load(home)
	if err != nil {
		t.Fatal(err)
	}
	if d, _, _ := p.Check([]string{"npm", "test", "--watch"}); d != Forbidden {
		t.Fatalf("npm test: %q", d)
	}
	if err := AppendPrefixRule(home, nil, Allow); err == nil {
		t.Fatal("empty prefix accepted")
	}
	if p, err := Load(t.TempDir()); err != nil || len(p.Rules) != 0 {
		t.Fatalf("no rules dir: %v %v", p, err)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// FuzzParse: no input panics; a rule's canonical line parses back to the
// same pattern and decision.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, src []byte) {
		rules, err := Parse("f", src)
		if err != nil {
			return
		}
		for _, r := range rules {
			if len(r.Pattern) == 0 {
				t.Fatal("empty pattern accepted")
			}
			prefix := make([]string, len(r.Pattern))
			for i, alts := range r.Pattern {
				prefix[i] = alts[0]
			}
			line, err := FormatPrefixRule(prefix, r.Decision)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Parse("canonical", []byte(line))
			if err != nil || len(back) != 1 || back[0].Decision != r.Decision || !back[0].Matches(prefix) {
				t.Fatalf("canonical %s: %v %+v", line, err, back)
			}
		}
	})
}
