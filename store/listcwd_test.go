package store

import (
	"reflect"
	"testing"

	"github.com/codexd/codexd/agent"
)

// Codex 0.169's thread/list reports, and filters by, the cwd a thread
// started in, whatever cwd later turns or settings updates gave it; a
// read of the thread has its latest settings.
func TestListKeepsTheStartingCwd(t *testing.T) {
	e := newEnv(t)
	id := testID(1)
	w, err := e.s.Create(bg, meta(id, 0)) // in /work/a
	if err != nil {
		t.Fatal(err)
	}
	moved := Record{Time: at(5), Event: agent.SettingsUpdated{Settings: agent.Settings{Model: "m1", Cwd: "/work/b"}}}
	mustAppend(t, w, moved)
	mustAppend(t, w, turnRecords("t1", 10, "hello")...)
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		p, err := e.s.List(bg, agent.ThreadQuery{})
		if err != nil || len(p.Threads) != 1 || p.Threads[0].Cwd != "/work/a" {
			t.Fatalf("%s: List: %+v %v, want the cwd /work/a", when, p.Threads, err)
		}
		if got := listIDs(t, e, agent.ThreadQuery{Cwd: "/work/a"}); !reflect.DeepEqual(got, ids(1)) {
			t.Fatalf("%s: listed in /work/a: %v", when, got)
		}
		if got := listIDs(t, e, agent.ThreadQuery{Cwd: "/work/b"}); len(got) != 0 {
			t.Fatalf("%s: listed in /work/b: %v", when, got)
		}
	}
	check("written")
	if th, err := e.s.Read(bg, id); err != nil || th.Info.Cwd != "/work/b" {
		t.Fatalf("Read: cwd %q %v, want the latest, /work/b", th.Info.Cwd, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// A rollout the index has not seen: the rescan finds the same.
	other := meta(testID(2), 100)
	writeRaw(t, rolloutPath(e.home, other.CreatedAt, other.ID), lines(t, other, append([]Record{moved}, turnRecords("t", 110, "elsewhere")...)...), false)
	e.reopen()
	p, err := e.s.List(bg, agent.ThreadQuery{})
	if err != nil || len(p.Threads) != 2 || p.Threads[0].Cwd != "/work/a" || p.Threads[1].Cwd != "/work/a" {
		t.Fatalf("after the rescan: %+v %v, want both in /work/a", p.Threads, err)
	}
}
