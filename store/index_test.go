package store

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
)

type spec struct {
	n                     int // id and creation order
	cwd, provider, source string
	text                  string
	updated               int // the last record's time
	created               int // ms after t0; 0 means n*1000
}

// thread stores a one-turn thread as spec says.
func (e *env) thread(t *testing.T, sp spec) string {
	t.Helper()
	id := testID(sp.n)
	if sp.created == 0 {
		sp.created = sp.n * 1000
	}
	m := meta(id, sp.created)
	m.Settings.Cwd, m.Settings.ModelProvider, m.Source = sp.cwd, sp.provider, sp.source
	w, err := e.s.Create(bg, m)
	if err != nil {
		t.Fatal(err)
	}
	recs := turnRecords("t", sp.created+1, sp.text)
	recs[4].Time = at(sp.updated)
	mustAppend(t, w, recs...)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return id
}

func fixture(t *testing.T, e *env) []spec {
	specs := []spec{
		{1, "/a", "openai", "cli", "Fix the Parser", 50_000, 0},
		{2, "/b", "mock", "appServer", "write docs", 40_000, 0},
		{3, "/a", "mock", "exec", "parser tests", 30_000, 0},
		{4, "/a", "openai", "appServer", "Ünïcode PARSER", 20_000, 0},
		{5, "/c", "ollama", "cli", "unrelated", 60_000, 0},
	}
	for _, sp := range specs {
		e.thread(t, sp)
	}
	return specs
}

func ids(ns ...int) []string {
	var out []string
	for _, n := range ns {
		out = append(out, testID(n))
	}
	return out
}

func TestListFiltersAndOrders(t *testing.T) {
	e := newEnv(t)
	fixture(t, e)
	for _, c := range []struct {
		name string
		q    agent.ThreadQuery
		want []string
	}{
		{"default: newest created first", agent.ThreadQuery{}, ids(5, 4, 3, 2, 1)},
		{"created ascending", agent.ThreadQuery{Ascending: true}, ids(1, 2, 3, 4, 5)},
		{"updated", agent.ThreadQuery{SortKey: SortUpdatedAt}, ids(5, 1, 2, 3, 4)},
		{"updated ascending", agent.ThreadQuery{SortKey: SortUpdatedAt, Ascending: true}, ids(4, 3, 2, 1, 5)},
		{"cwd", agent.ThreadQuery{Cwd: "/a"}, ids(4, 3, 1)},
		{"providers", agent.ThreadQuery{ModelProviders: []string{"mock", "ollama"}}, ids(5, 3, 2)},
		{"sources", agent.ThreadQuery{SourceKinds: []string{"cli", "exec"}}, ids(5, 3, 1)},
		{"search, any case", agent.ThreadQuery{SearchTerm: "PARSER"}, ids(4, 3, 1)},
		{"search, unicode case", agent.ThreadQuery{SearchTerm: "üNÏ"}, ids(4)},
		{"search with LIKE characters", agent.ThreadQuery{SearchTerm: "%"}, nil},
		{"all filters", agent.ThreadQuery{Cwd: "/a", ModelProviders: []string{"openai"}, SourceKinds: []string{"cli"}, SearchTerm: "fix"}, ids(1)},
		{"archived", agent.ThreadQuery{Archived: true}, nil},
	} {
		if got := listIDs(t, e, c.q); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
	p, err := e.s.List(bg, agent.ThreadQuery{Cwd: "/b"})
	if err != nil || len(p.Threads) != 1 {
		t.Fatal(err)
	}
	th := p.Threads[0]
	if th.Preview != "write docs" || th.ModelProvider != "mock" || th.Source != "appServer" || !th.Materialized ||
		!th.CreatedAt.Equal(at(2000)) || !th.UpdatedAt.Equal(at(40_000)) || th.Path == "" || th.Model != "m1" {
		t.Fatalf("listed thread: %+v", th)
	}
	if _, err := e.s.List(bg, agent.ThreadQuery{SortKey: "name"}); err == nil {
		t.Fatal("an unknown sort key was accepted")
	}
}

// TestListPagesAreStableUnderInserts pages through the threads while new
// ones arrive between pages, older and newer than the cursor: every thread
// that existed at the start is seen exactly once.
func TestListPagesAreStableUnderInserts(t *testing.T) {
	e := newEnv(t)
	for i := 1; i <= 30; i++ {
		e.thread(t, spec{n: 2 * i, cwd: "/a", provider: "mock", source: "cli", text: "x", updated: 100_000 - i})
	}
	extra, older := 1000, 3000
	for _, q := range []agent.ThreadQuery{
		{Limit: 7}, {Limit: 7, Ascending: true}, {Limit: 7, SortKey: SortUpdatedAt}, {Limit: 9, SortKey: SortUpdatedAt, Ascending: true},
	} {
		seen := map[string]int{}
		for pages := 0; ; pages++ {
			if pages > 100 {
				t.Fatal("pagination does not end")
			}
			p, err := e.s.List(bg, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, th := range p.Threads {
				seen[th.ID]++
			}
			if len(p.Threads) > q.Limit {
				t.Fatalf("page of %d", len(p.Threads))
			}
			// Inserts on both sides of the cursor, and a tie on its key.
			extra++
			e.thread(t, spec{n: extra, cwd: "/a", provider: "mock", source: "cli", text: "new", updated: extra})
			older++
			e.thread(t, spec{n: older, created: (older-3000)*1700 + 500, cwd: "/a", provider: "mock", source: "cli", text: "old", updated: 100_000 - older})
			if p.NextCursor == "" {
				break
			}
			q.Cursor = p.NextCursor
		}
		for i := 1; i <= 30; i++ {
			if seen[testID(2*i)] != 1 {
				t.Fatalf("%+v: thread %d seen %d times", q, 2*i, seen[testID(2*i)])
			}
		}
		for id, n := range seen {
			if n != 1 {
				t.Fatalf("%s seen %d times", id, n)
			}
		}
	}
}

func TestListCursors(t *testing.T) {
	e := newEnv(t)
	fixture(t, e)
	p, err := e.s.List(bg, agent.ThreadQuery{Limit: 2})
	if err != nil || len(p.Threads) != 2 || p.NextCursor == "" {
		t.Fatalf("%+v %v", p, err)
	}
	for _, q := range []agent.ThreadQuery{
		{Cursor: "!!"}, {Cursor: "e30"}, {Cursor: "2024-01-01T00:00:00Z|x"}, {Cursor: "2024-01-01T00:00:00Z|" + p.Threads[0].ID + "|"},
	} {
		if _, err := e.s.List(bg, q); !errors.Is(err, ErrInvalidCursor) || err.Error() != "invalid cursor: "+q.Cursor {
			t.Errorf("%+v: %v", q, err)
		}
	}
	// A cursor is a position: another order or sort key continues from it.
	for _, q := range []agent.ThreadQuery{{Cursor: p.NextCursor, Ascending: true}, {Cursor: p.NextCursor, SortKey: SortUpdatedAt}} {
		if _, err := e.s.List(bg, q); err != nil {
			t.Errorf("%+v: %v", q, err)
		}
	}
	all := listIDs(t, e, agent.ThreadQuery{Limit: 5})
	if p, _ := e.s.List(bg, agent.ThreadQuery{Limit: 5}); p.NextCursor != "" || len(all) != 5 {
		t.Fatalf("an exact last page has a cursor: %q", p.NextCursor)
	}
	if p, _ := e.s.List(bg, agent.ThreadQuery{}); len(p.Threads) != 5 || p.NextCursor != "" {
		t.Fatalf("default page %+v", p)
	}
}

func indexPath(e *env) string { return filepath.Join(e.home, "codexd", "threads.sqlite") }

func TestIndexIsRebuiltWhenMissingOrCorrupt(t *testing.T) {
	for _, damage := range []string{"deleted", "garbage", "truncated", "other schema"} {
		t.Run(damage, func(t *testing.T) {
			e := newEnv(t)
			fixture(t, e)
			e.s.SetName(bg, testID(3), "named")
			want := listIDs(t, e, agent.ThreadQuery{SortKey: SortUpdatedAt})
			wantInfo, _ := e.s.Info(bg, testID(3))
			e.s.Close()
			path := indexPath(e)
			switch damage {
			case "deleted":
				for _, p := range []string{path, path + "-wal", path + "-shm"} {
					os.Remove(p)
				}
			case "garbage":
				os.WriteFile(path, []byte(strings.Repeat("not a database ", 1000)), 0o600)
			case "truncated":
				fi, _ := os.Stat(path)
				os.Truncate(path, fi.Size()/2+100)
			case "other schema":
				db, _ := sql.Open("sqlite", path)
				db.Exec("PRAGMA user_version = 99")
				db.Close()
			}
			e.open()
			if got := listIDs(t, e, agent.ThreadQuery{SortKey: SortUpdatedAt}); !reflect.DeepEqual(got, want) {
				t.Fatalf("after rebuild: %v, want %v", got, want)
			}
			if info, _ := e.s.Info(bg, testID(3)); !reflect.DeepEqual(info, wantInfo) {
				t.Fatalf("Info after rebuild:\n got %+v\nwant %+v", info, wantInfo)
			}
			if damage == "garbage" && !fileExists(path+".corrupt") {
				t.Fatal("the corrupt index was not kept aside")
			}
		})
	}
}

func TestRescanFindsWhatTheIndexMissed(t *testing.T) {
	e := newEnv(t)
	fixture(t, e)
	// A rollout written while the index was unavailable: by another
	// codexd with its own index, say.
	other := ThreadMeta{ID: testID(60), CreatedAt: at(70_000), Source: "exec", Settings: agent.Settings{Cwd: "/z"}}
	path := rolloutPath(e.home, other.CreatedAt, other.ID)
	writeRaw(t, path, lines(t, other, turnRecords("t", 70_001, "written elsewhere")...), false)
	// Found by id at once, before any rescan.
	if th, err := e.s.Read(bg, other.ID); err != nil || th.Info.Preview != "written elsewhere" {
		t.Fatalf("Read: %+v %v", th, err)
	}
	if got := listIDs(t, e, agent.ThreadQuery{Cwd: "/z"}); !reflect.DeepEqual(got, ids(60)) {
		t.Fatalf("listed after lookup: %v", got)
	}
	// Another one appears, and one of ours grows behind the index's back:
	// the rescan at the next start picks both up; a removed one goes.
	other2 := other
	other2.ID, other2.CreatedAt = testID(61), at(80_000)
	writeRaw(t, rolloutPath(e.home, other2.CreatedAt, other2.ID), lines(t, other2, turnRecords("t", 80_001, "second")...), false)
	grown := rolloutPath(e.home, at(2000), testID(2))
	f, _ := os.OpenFile(grown, os.O_APPEND|os.O_WRONLY, 0)
	for _, l := range lines(t, meta(testID(2), 0), Record{Time: at(90_000), Event: agent.ThreadNameUpdated{Name: "renamed offline"}})[1:] {
		f.WriteString(l + "\n")
	}
	f.Close()
	os.Remove(rolloutPath(e.home, at(5000), testID(5)))
	e.reopen()
	if got := listIDs(t, e, agent.ThreadQuery{}); !reflect.DeepEqual(got, ids(61, 60, 4, 3, 2, 1)) {
		t.Fatalf("after rescan: %v", got)
	}
	if info, _ := e.s.Info(bg, testID(2)); info.Name != "renamed offline" || !info.UpdatedAt.Equal(at(90_000)) {
		t.Fatalf("grown thread: %+v", info)
	}
	if n, err := e.s.Rescan(bg); err != nil || n != 0 {
		t.Fatalf("a rescan of unchanged files read %d: %v", n, err)
	}
}

func TestListIgnoresStrayFiles(t *testing.T) {
	e := newEnv(t)
	fixture(t, e)
	day := filepath.Dir(rolloutPath(e.home, at(0), testID(1)))
	os.WriteFile(filepath.Join(day, "notes.txt"), []byte("x"), 0o600)
	os.Mkdir(filepath.Join(day, "rollout-2026-03-04T05-06-07-"+testID(70)+".jsonl"), 0o700)
	os.WriteFile(filepath.Join(e.home, "sessions", fmt.Sprintf("rollout-2026-03-04T05-06-07-%s.jsonl", testID(71))), []byte("{}\n"), 0o600)
	e.reopen()
	got := listIDs(t, e, agent.ThreadQuery{})
	if slices.Contains(got, testID(70)) || slices.Contains(got, testID(71)) || len(got) != 5 {
		t.Fatalf("listed %v", got)
	}
}

// TestIndexFailureNeverFailsAppends: with the index gone mid-run, appends
// and syncs go on (warning), and the next start's rescan catches up.
func TestIndexFailureNeverFailsAppends(t *testing.T) {
	e := newEnv(t)
	id := testID(90)
	w, _ := e.s.Create(bg, meta(id, 0))
	mustAppend(t, w, turnRecords("t1", 10, "before")...)
	e.s.ix.db.Close() // the index fails from here on
	mustAppend(t, w, turnRecords("t2", 20, "during")...)
	mustAppend(t, w, Record{Time: at(30), Event: agent.ThreadNameUpdated{Name: "named blind"}})
	if err := w.Sync(); err != nil {
		t.Fatalf("Sync without an index: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close without an index: %v", err)
	}
	if !strings.Contains(strings.Join(e.logs.warnings(), "\n"), "updating the index failed") {
		t.Fatalf("no warning: %v", e.logs.warnings())
	}
	e.s.Close()
	e.open()
	info, err := e.s.Info(bg, id)
	if err != nil || info.Name != "named blind" || !info.UpdatedAt.Equal(at(30)) {
		t.Fatalf("after rescan: %+v %v", info, err)
	}
	if th, _ := e.s.Read(bg, id); len(th.Turns) != 2 {
		t.Fatalf("turns %d", len(th.Turns))
	}
}

// The index is only a cache: with it failing, stored threads are still
// read, resumed, created, forked, renamed and archived from the rollouts
// (with warnings), and the next start's rescan catches up.
func TestIndexFailureNeverFailsThreads(t *testing.T) {
	e := newEnv(t)
	old := testID(91)
	stored(t, e, old, 0, 1, "stored before")
	e.s.ix.db.Close() // the index fails from here on

	th, err := e.s.Read(bg, old)
	if err != nil || len(th.Turns) != 1 {
		t.Fatalf("Read: %v", err)
	}
	if info, err := e.s.Info(bg, old); err != nil || info.Preview != "stored before" {
		t.Fatalf("Info: %+v %v", info, err)
	}
	_, w, err := e.s.Resume(bg, old)
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	mustAppend(t, w, turnRecords("t2", 100, "resumed")...)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.s.SetName(bg, old, "renamed blind"); err != nil {
		t.Fatalf("SetName: %v", err)
	}
	created := testID(92)
	w, err = e.s.Create(bg, meta(created, 200))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	mustAppend(t, w, turnRecords("t", 210, "created blind")...)
	w.Close()
	fork, fw, err := e.s.Fork(bg, old, ThreadMeta{ID: testID(93), CreatedAt: at(300)})
	if err != nil || len(fork.Turns) != 2 {
		t.Fatalf("Fork: %v", err)
	}
	fw.Close()
	if err := e.s.Archive(bg, created); err != nil {
		t.Fatalf("Archive: %v", err)
	}
	if info, err := e.s.Unarchive(bg, created); err != nil || info.Archived || info.Preview != "created blind" {
		t.Fatalf("Unarchive: %+v %v", info, err)
	}
	if err := e.s.Archive(bg, created); err != nil {
		t.Fatalf("Archive: %v", err)
	}

	e.s.Close()
	e.open()
	if info, err := e.s.Info(bg, old); err != nil || info.Name != "renamed blind" {
		t.Fatalf("after rescan: %+v %v", info, err)
	}
	if got := listIDs(t, e, agent.ThreadQuery{Archived: true}); !reflect.DeepEqual(got, ids(92)) {
		t.Fatalf("archived after rescan: %v", got)
	}
	if got := listIDs(t, e, agent.ThreadQuery{}); !reflect.DeepEqual(got, ids(93, 91)) {
		t.Fatalf("listed after rescan: %v", got)
	}
}
