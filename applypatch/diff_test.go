package applypatch

import (
	"fmt"
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	cases := []struct{ name, old, new, want string }{
		{"identical", "a\nb\n", "a\nb\n", ""},
		{"last line replaced", "foo\nbar\nbaz\n", "foo\nbar\nBAZ\n", "@@ -2,2 +2,2 @@\n bar\n-baz\n+BAZ\n"},
		{"insert at end", "foo\nbar\nbaz\n", "foo\nbar\nbaz\nquux\n", "@@ -3 +3,2 @@\n baz\n+quux\n"},
		{"one line", "session directory content\n", "updated session directory content\n",
			"@@ -1 +1 @@\n-session directory content\n+updated session directory content\n"},
		{"from empty", "", "a\nb\n", "@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"to empty", "a\n", "", "@@ -1 +0,0 @@\n-a\n"},
		{"insert in the middle", "a\nb\nc\nd\n", "a\nb\nX\nc\nd\n", "@@ -2,2 +2,3 @@\n b\n+X\n c\n"},
		{"two distant hunks", "1\n2\n3\n4\n5\n6\n7\n8\n", "1\nTWO\n3\n4\n5\n6\nSEVEN\n8\n",
			"@@ -1,3 +1,3 @@\n 1\n-2\n+TWO\n 3\n@@ -6,3 +6,3 @@\n 6\n-7\n+SEVEN\n 8\n"},
		{"close hunks merge", "1\n2\n3\n4\n5\n", "1\nB\n3\nD\n5\n", "@@ -1,5 +1,5 @@\n 1\n-2\n+B\n 3\n-4\n+D\n 5\n"},
		{"missing final newline", "a\nb", "a\nb\n", "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"},
		{"CRLF lines differ from LF ones", "a\r\n", "a\n", "@@ -1 +1 @@\n-a\r\n+a\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := UnifiedDiff(c.old, c.new, 1); got != c.want {
				t.Fatalf("got\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}

// applyUnified replays a diff's hunks on old, to check that a diff is
// correct whatever alignment it chose.
func applyUnified(t *testing.T, old, diff string) string {
	t.Helper()
	a := splitKeepEnds(old)
	var out []string
	next := 0
	lines := strings.SplitAfter(diff, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l == "" {
			continue
		}
		if strings.HasPrefix(l, "@@ ") {
			var s1, s2 int
			var rng string
			fmt.Sscanf(l, "@@ -%s", &rng)
			if n, _ := fmt.Sscanf(rng, "%d,%d", &s1, &s2); n == 2 && s2 == 0 {
				s1++ // an empty range names the line before
			}
			for ; next < s1-1; next++ {
				out = append(out, a[next])
			}
			continue
		}
		text := l[1:]
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\\ No newline") {
			text = strings.TrimSuffix(text, "\n")
			i++
		}
		switch l[0] {
		case ' ':
			if a[next] != text {
				t.Fatalf("context %q does not match %q", text, a[next])
			}
			out = append(out, text)
			next++
		case '-':
			if a[next] != text {
				t.Fatalf("removed %q does not match %q", text, a[next])
			}
			next++
		case '+':
			out = append(out, text)
		}
	}
	out = append(out, a[next:]...)
	return strings.Join(out, "")
}

func TestUnifiedDiffRoundTrip(t *testing.T) {
	texts := []string{"", "a\n", "a\nb\nc\n", "c\nb\na\n", "a\nb\na\nb\na\n", "x\ny", "a\n\n\nb\n", "1\n2\n3\n4\n5\n6\n7\n8\n9\n"}
	for _, old := range texts {
		for _, new := range texts {
			for _, ctx := range []int{0, 1, 3} {
				d := UnifiedDiff(old, new, ctx)
				if got := applyUnified(t, old, d); got != new {
					t.Fatalf("old %q new %q ctx %d: diff\n%s\nreplays to %q", old, new, ctx, d, got)
				}
			}
		}
	}
}

func TestUnifiedDiffLargeFallback(t *testing.T) {
	var a, b strings.Builder
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&a, "old %d\n", i)
		fmt.Fprintf(&b, "new %d\n", i)
	}
	d := UnifiedDiff(a.String(), b.String(), 1)
	if !strings.HasPrefix(d, "@@ -1,5000 +1,5000 @@\n-old 0\n") {
		t.Fatalf("diff starts %q", d[:40])
	}
	if got := applyUnified(t, a.String(), d); got != b.String() {
		t.Fatal("fallback diff does not replay")
	}
}

func BenchmarkUnifiedDiff(b *testing.B) {
	var old, new strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&old, "line %d\n", i)
		if i%100 == 0 {
			fmt.Fprintf(&new, "changed %d\n", i)
		} else {
			fmt.Fprintf(&new, "line %d\n", i)
		}
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		UnifiedDiff(old.String(), new.String(), 1)
	}
}
