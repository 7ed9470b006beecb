package planblock

import (
	"strings"
	"testing"
)

// The message and deltas MOCK:proposeplan sent, and what Codex 0.169's
// app-server made of them: agent message deltas without the tag lines, a
// plan with the block's lines.
const msg = "Here is what I would do.\n<proposed_plan>\n# Rename the flag\n\n1. Change the definition.\n2. Update the two callers.\n</proposed_plan>\nSay the word and I start."

func run(deltas []string) (prose, plan string, starts, ends int) {
	p := New()
	var chunks []Chunk
	for _, d := range deltas {
		chunks = append(chunks, p.Feed(d)...)
	}
	chunks = append(chunks, p.Finish()...)
	var a, b strings.Builder
	for _, c := range chunks {
		switch {
		case c.Start:
			starts++
		case c.End:
			ends++
		case c.Plan:
			b.WriteString(c.Text)
		default:
			a.WriteString(c.Text)
		}
	}
	return a.String(), b.String(), starts, ends
}

func split(s string, n int) []string {
	var out []string
	size := (len(s) + n - 1) / n
	for len(s) > size {
		out = append(out, s[:size])
		s = s[size:]
	}
	return append(out, s)
}

func TestAsCodexShowsIt(t *testing.T) {
	for _, n := range []int{1, 3, 17, len(msg)} {
		prose, plan, starts, ends := run(split(msg, n))
		if prose != "Here is what I would do.\nSay the word and I start." {
			t.Errorf("%d deltas: prose %q", n, prose)
		}
		if plan != "# Rename the flag\n\n1. Change the definition.\n2. Update the two callers.\n" {
			t.Errorf("%d deltas: plan %q", n, plan)
		}
		if starts != 1 || ends != 1 {
			t.Errorf("%d deltas: %d starts, %d ends", n, starts, ends)
		}
	}
}

// TestDeltasAreNotHeld: text that cannot be a tag line goes out with the
// delta that brought it.
func TestDeltasAreNotHeld(t *testing.T) {
	p := New()
	if c := p.Feed("Here is wh"); len(c) != 1 || c[0].Text != "Here is wh" {
		t.Fatalf("%+v", c)
	}
	if c := p.Feed(" <propo"); len(c) != 1 || c[0].Text != " <propo" {
		t.Fatalf("mid-line text held: %+v", c)
	}
	if c := p.Feed("\n<propo"); len(c) != 1 || c[0].Text != "\n" {
		t.Fatalf("a possible tag line went out: %+v", c)
	}
	if c := p.Feed("sal"); len(c) != 1 || c[0].Text != "<proposal" {
		t.Fatalf("a line that is no tag was held: %+v", c)
	}
}

func TestEdges(t *testing.T) {
	for _, tc := range []struct{ in, prose, plan string }{
		{"no plan here", "no plan here", ""},
		{"<proposed_plan>\nunclosed", "", "unclosed"},
		{"text <proposed_plan> inline\n", "text <proposed_plan> inline\n", ""},
		{"  <proposed_plan>  \nindented\n</proposed_plan>", "", "indented\n"},
		{"</proposed_plan>\nstray close", "</proposed_plan>\nstray close", ""},
		{"<proposed_plan>x", "<proposed_plan>x", ""},
		{"<proposed_plan>\na\n</proposed_plan>\nb\n<proposed_plan>\nc\n</proposed_plan>\n", "b\n", "a\nc\n"},
		{"<proposed_plan>", "", ""},
		{"", "", ""},
	} {
		prose, plan, _ := Strip(tc.in)
		if prose != tc.prose || plan != tc.plan {
			t.Errorf("%q: prose %q plan %q, want %q %q", tc.in, prose, plan, tc.prose, tc.plan)
		}
	}
}

// FuzzParser: however the answer is cut into deltas, the parse is the same,
// and nothing is lost but the tag lines.
func FuzzParser(f *testing.F) {
	f.Add(msg, 5)
	f.Add("<proposed_plan>\n\n</proposed_plan>\n<proposed_plan>", 2)
	f.Add("a\r\n<proposed_plan>\r\nb", 1)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n <= 0 || n > 64 {
			n = 7
		}
		p1, q1, _ := Strip(s)
		p2, q2, _, _ := run(split(s, n))
		if p1 != p2 || q1 != q2 {
			t.Fatalf("split in %d: %q %q vs whole %q %q", n, p2, q2, p1, q1)
		}
		if len(p1)+len(q1) > len(s) {
			t.Fatalf("more out than in")
		}
	})
}
