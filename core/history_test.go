package core

import (
	"slices"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
)

// A history snapshot is a view of the history (no copy), and stays what it
// was: appends to the thread's history land past it, even in the same
// backing array, a compaction replaces the slice, and an append to the
// snapshot copies rather than writing into the thread's history.
func TestHistorySnapshotIsStable(t *testing.T) {
	h := newHarness(t, newFakeModel(), nil)
	th := h.core.loaded(h.start(agent.Overrides{}).ID())
	th.appendHistory("t1", prompt.Message("user", "one"), prompt.Message("assistant", "two"))
	snap := th.historySnapshot()
	want := slices.Clone(snap)

	// Room in the backing array: the next append writes into it.
	th.mu.Lock()
	th.history = slices.Grow(th.history, 8)
	th.mu.Unlock()
	th.appendHistory("t2", prompt.Message("user", "three"))
	grown := append(snap, prompt.Message("user", "mine"))
	if got := th.historySnapshot(); len(got) != 3 || got[2].Text() != "three" {
		t.Fatalf("history %+v", got)
	}
	if grown[2].Text() != "mine" {
		t.Fatalf("append to the snapshot: %+v", grown)
	}
	th.replaceHistory("t3", "summary", []prompt.Item{prompt.Message("user", "rebuilt")})
	if !slices.EqualFunc(snap, want, func(a, b prompt.Item) bool { return a.Text() == b.Text() && a.Role == b.Role }) {
		t.Fatalf("snapshot changed: %+v, want %+v", snap, want)
	}
	if got := th.historySnapshot(); len(got) != 1 || got[0].Text() != "rebuilt" {
		t.Fatalf("history after replace %+v", got)
	}
}
