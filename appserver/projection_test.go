package appserver

import (
	"testing"

	"github.com/codexd/codexd/agent"
)

// A moved file's diff ends with where it went, as Codex 0.169 words it
// (its fileChange items say "\n\nMoved to: <destination>" after the hunks);
// the other changes' diffs are as they are.
func TestWireChangesMovedTo(t *testing.T) {
	got := wireChanges([]agent.FileUpdate{
		{Path: "/w/a", Kind: "update", MovePath: "/w/b", Diff: "@@ -1 +1 @@\n-x\n+y\n"},
		{Path: "/w/c", Kind: "update", Diff: "@@ -1 +1 @@\n-x\n+y\n"},
		{Path: "/w/new", Kind: "add", Diff: "x\n"},
	})
	want := []string{"@@ -1 +1 @@\n-x\n+y\n\n\nMoved to: /w/b", "@@ -1 +1 @@\n-x\n+y\n", "x\n"}
	for i, w := range want {
		if got[i].Diff != w {
			t.Errorf("change %d: diff %q, want %q", i, got[i].Diff, w)
		}
	}
}
