package review

import (
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
)

const sample = `{"findings":[{"title":"[P1] Off by one","body":"The loop skips the last item.\nIt matters.","confidence_score":0.9,"priority":1,"code_location":{"absolute_file_path":"/r/a.go","line_range":{"start":3,"end":4}}}],"overall_correctness":"patch is incorrect","overall_explanation":"One bug.","overall_confidence_score":0.7}`

func TestParse(t *testing.T) {
	o := Parse(sample)
	if len(o.Findings) != 1 || o.Findings[0].Priority != 1 || o.Findings[0].CodeLocation.LineRange.End != 4 || o.OverallCorrectness != "patch is incorrect" {
		t.Fatalf("%+v", o)
	}
	// Text around the object, as models write it.
	if o := Parse("Here is my review:\n```json\n" + sample + "\n```"); len(o.Findings) != 1 {
		t.Fatalf("wrapped: %+v", o)
	}
	// Not JSON: the text is the explanation.
	if o := Parse("Looks good to me {mostly}"); o.OverallExplanation != "Looks good to me {mostly}" || len(o.Findings) != 0 {
		t.Fatalf("plain: %+v", o)
	}
}

func TestRender(t *testing.T) {
	got := Render(Parse(sample))
	want := "One bug.\n\nReview comment:\n\n- [P1] Off by one — /r/a.go:3-4\n  The loop skips the last item.\n  It matters."
	if got != want {
		t.Fatalf("render:\n%s\nwant:\n%s", got, want)
	}
	two := Parse(`{"findings":[{"title":"a"},{"title":"b"}]}`)
	if got := Render(two); !strings.HasPrefix(got, "Full review comments:\n\n- a — :0-0\n\n- b") {
		t.Fatalf("two findings: %q", got)
	}
	if got := Render(Output{}); got != FallbackMessage {
		t.Fatalf("empty: %q", got)
	}
}

func TestTargets(t *testing.T) {
	cases := []struct {
		target      agent.ReviewTarget
		hint, inMsg string
	}{
		{agent.ReviewTarget{Type: "uncommittedChanges"}, "current changes", "git diff --cached"},
		{agent.ReviewTarget{Type: "baseBranch", Branch: "main"}, "changes against 'main'", "git merge-base HEAD"},
		{agent.ReviewTarget{Type: "commit", SHA: "0123456789abcdef", Title: "Fix it"}, "commit 0123456: Fix it", "git show 0123456789abcdef"},
		{agent.ReviewTarget{Type: "commit", SHA: "abc"}, "commit abc", "git show abc"},
		{agent.ReviewTarget{Type: "custom", Instructions: "Check the docs"}, "Check the docs", "Check the docs"},
	}
	for _, c := range cases {
		if h := Hint(c.target); h != c.hint {
			t.Errorf("%s: hint %q, want %q", c.target.Type, h, c.hint)
		}
		if p := Prompt(c.target); !strings.Contains(p, c.inMsg) {
			t.Errorf("%s: prompt %q lacks %q", c.target.Type, p, c.inMsg)
		}
	}
	for _, bad := range []agent.ReviewTarget{{Type: "baseBranch", Branch: " "}, {Type: "commit"}, {Type: "custom", Instructions: "\n"}, {Type: "other"}} {
		if _, err := Validate(bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	if got, err := Validate(agent.ReviewTarget{Type: "baseBranch", Branch: " dev "}); err != nil || got.Branch != "dev" {
		t.Fatalf("%+v %v", got, err)
	}
	if !strings.Contains(Instructions, "overall_correctness") {
		t.Fatal("the instructions do not ask for the findings format")
	}
}

func TestModelFromConfig(t *testing.T) {
	tree := func(m map[string]any) func(string) (any, bool) {
		return func(k string) (any, bool) { v, ok := m[k]; return v, ok }
	}
	if m, err := ModelFromConfig(tree(map[string]any{"review_model": "gpt-review"})); err != nil || m != "gpt-review" {
		t.Fatalf("%q %v", m, err)
	}
	if m, err := ModelFromConfig(tree(nil)); err != nil || m != "" {
		t.Fatalf("%q %v", m, err)
	}
	if _, err := ModelFromConfig(tree(map[string]any{"review_model": int64(3)})); err == nil {
		t.Fatal("no error for a number")
	}
}

// FuzzParse: whatever the model writes, Parse and Render neither panic nor
// lose the text: unparseable output is shown as it came.
func FuzzParse(f *testing.F) {
	f.Add(sample)
	f.Add("{")
	f.Add(`x {"findings":7} y`)
	f.Add(`{"findings":[{"code_location":{"line_range":{"start":-1}}}]}`)
	f.Fuzz(func(t *testing.T, text string) {
		o := Parse(text)
		r := Render(o)
		if r == "" {
			t.Fatal("empty rendering")
		}
		if len(o.Findings) == 0 && o.OverallExplanation == text && strings.TrimSpace(text) != "" && !strings.Contains(r, strings.TrimSpace(text)) {
			t.Fatalf("the text is lost: %q -> %q", text, r)
		}
	})
}
