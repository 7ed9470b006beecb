package store

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/codexd/codexd/agent"
)

// stored creates a thread with n whole turns and closes its writer.
func stored(t *testing.T, e *env, id string, created, n int, text string) string {
	t.Helper()
	w, err := e.s.Create(bg, meta(id, created))
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		mustAppend(t, w, turnRecords(id[len(id)-4:]+"-"+string(rune('a'+i)), created+10*(i+1), text)...)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.Path()
}

func listIDs(t *testing.T, e *env, q agent.ThreadQuery) []string {
	t.Helper()
	p, err := e.s.List(bg, q)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, th := range p.Threads {
		ids = append(ids, th.ID)
	}
	return ids
}

func TestArchiveAndUnarchive(t *testing.T) {
	e := newEnv(t)
	id := testID(20)
	path := stored(t, e, id, 0, 2, "archive me")
	if err := e.s.Archive(bg, id); err != nil {
		t.Fatal(err)
	}
	archived := filepath.Join(e.home, "archived_sessions", filepath.Base(path))
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("still at %s: %v", path, err)
	}
	if !fileExists(archived) {
		t.Fatalf("not at %s", archived)
	}
	if err := e.s.Archive(bg, id); err != nil {
		t.Fatalf("archiving twice: %v", err)
	}
	if ids := listIDs(t, e, agent.ThreadQuery{}); len(ids) != 0 {
		t.Fatalf("listed while archived: %v", ids)
	}
	if ids := listIDs(t, e, agent.ThreadQuery{Archived: true}); !reflect.DeepEqual(ids, []string{id}) {
		t.Fatalf("archived listing: %v", ids)
	}
	th, err := e.s.Read(bg, id)
	if err != nil || !th.Info.Archived || th.Info.Path != archived || len(th.Turns) != 2 {
		t.Fatalf("Read archived: %+v %v", th.Info, err)
	}
	// It survives a restart, and a rebuild of the index from the files.
	e.reopen()
	if ids := listIDs(t, e, agent.ThreadQuery{Archived: true}); !reflect.DeepEqual(ids, []string{id}) {
		t.Fatalf("archived listing after restart: %v", ids)
	}
	before := time.Now().Truncate(time.Millisecond) // lines keep milliseconds
	info, err := e.s.Unarchive(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	if info.Archived || info.Path != path || !fileExists(path) || info.Preview != "archive me" {
		t.Fatalf("unarchived: %+v", info)
	}
	// Coming back is an update, as in Codex, and the rollout says so.
	if info.UpdatedAt.Before(before) {
		t.Fatalf("updated_at not bumped: %v", info.UpdatedAt)
	}
	if again, _ := e.s.Unarchive(bg, id); !again.UpdatedAt.Equal(info.UpdatedAt) {
		t.Fatalf("unarchiving twice: %+v", again)
	}
	e.s.Close()
	os.Remove(indexPath(e))
	e.open()
	if th, err := e.s.Read(bg, id); err != nil || !th.Info.UpdatedAt.Equal(info.UpdatedAt) || len(th.Turns) != 2 || th.Skipped != 0 {
		t.Fatalf("after an index rebuild: %+v %v", th, err)
	}
	if ids := listIDs(t, e, agent.ThreadQuery{}); !reflect.DeepEqual(ids, []string{id}) {
		t.Fatalf("listing after unarchive: %v", ids)
	}
}

func TestArchiveUnderAnOpenWriter(t *testing.T) {
	e := newEnv(t)
	id := testID(21)
	w, _ := e.s.Create(bg, meta(id, 0))
	if err := e.s.Archive(bg, id); !errors.Is(err, ErrNotMaterialized) {
		t.Fatalf("archiving an unmaterialized thread: %v", err)
	}
	mustAppend(t, w, turnRecords("t1", 10, "one")...)
	if err := e.s.Archive(bg, id); err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(w.Path()) != filepath.Join(e.home, "archived_sessions") {
		t.Fatalf("writer path %s", w.Path())
	}
	mustAppend(t, w, turnRecords("t2", 20, "two")...)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	th, err := e.s.Read(bg, id)
	if err != nil || len(th.Turns) != 2 || !th.Info.Archived {
		t.Fatalf("after appending to an archived thread: %+v %v", th, err)
	}
	info, _ := e.s.Info(bg, id)
	if !info.Archived || info.Path != w.Path() || !info.UpdatedAt.Equal(at(24)) {
		t.Fatalf("index: %+v", info)
	}
}

func TestSetName(t *testing.T) {
	e := newEnv(t)
	a, b := testID(30), testID(31)
	stored(t, e, a, 0, 1, "first")
	if err := e.s.SetName(bg, a, "Zebra Plan"); err != nil {
		t.Fatal(err)
	}
	// Through an open writer.
	w, _ := e.s.Create(bg, meta(b, 5))
	if err := e.s.SetName(bg, b, "early name"); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, w, turnRecords("t1", 10, "second")...)
	if err := e.s.SetName(bg, b, "Later Name"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		term string
		want []string
	}{{"zebra", []string{a}}, {"LATER", []string{b}}, {"early", nil}, {"sec", []string{b}}} {
		if got := listIDs(t, e, agent.ThreadQuery{SearchTerm: q.term}); !reflect.DeepEqual(got, q.want) {
			t.Fatalf("search %q: %v, want %v", q.term, got, q.want)
		}
	}
	w.Close()
	e.reopen()
	for id, name := range map[string]string{a: "Zebra Plan", b: "Later Name"} {
		th, err := e.s.Read(bg, id)
		if err != nil || th.Info.Name != name {
			t.Fatalf("Read %s: name %q %v", id, th.Info.Name, err)
		}
		if info, _ := e.s.Info(bg, id); info.Name != name {
			t.Fatalf("Info %s: %q", id, info.Name)
		}
	}
}

func TestFork(t *testing.T) {
	e := newEnv(t)
	src, dst := testID(40), testID(41)
	w, _ := e.s.Create(bg, meta(src, 0))
	mustAppend(t, w, turnRecords("t1", 10, "root question")...)
	mustAppend(t, w, Record{Time: at(15), Event: agent.SettingsUpdated{Settings: agent.Settings{Model: "src-model"}}})
	mustAppend(t, w, turnRecords("t2", 20, "second")[:3]...) // running: will be interrupted in the fork

	th, fw, err := e.s.Fork(bg, src, ThreadMeta{ID: dst, CreatedAt: at(100), Source: "appServer"})
	if err != nil {
		t.Fatal(err)
	}
	if th.Info.ID != dst || th.Info.ForkedFromID != src || th.Info.Preview != "root question" || !fw.Materialized() {
		t.Fatalf("fork info: %+v", th.Info)
	}
	if got := statuses(th.Turns); !reflect.DeepEqual(got, []agent.TurnStatus{"completed", "interrupted"}) {
		t.Fatalf("fork statuses %v", got)
	}
	if th.Settings.Model != "src-model" || len(th.History) != 2 {
		t.Fatalf("fork settings %+v history %d", th.Settings, len(th.History))
	}
	// The source goes on untouched.
	mustAppend(t, w, turnRecords("t2", 20, "second")[3:]...)
	w.Close()
	mustAppend(t, fw, turnRecords("f3", 200, "fork only")...)
	fw.Close()

	e.reopen()
	srcTh, _ := e.s.Read(bg, src)
	forkTh, err := e.s.Read(bg, dst)
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(srcTh.Turns); !reflect.DeepEqual(got, []agent.TurnStatus{"completed", "completed"}) {
		t.Fatalf("source statuses %v", got)
	}
	if got := statuses(forkTh.Turns); !reflect.DeepEqual(got, []agent.TurnStatus{"completed", "interrupted", "completed"}) {
		t.Fatalf("fork statuses %v", got)
	}
	if !reflect.DeepEqual(forkTh.Turns[0], srcTh.Turns[0]) || forkTh.Info.ForkedFromID != src {
		t.Fatalf("fork turn 0 %+v", forkTh.Turns[0])
	}
	if len(forkTh.History) != 3 || !reflect.DeepEqual(forkTh.History[:2], srcTh.History[:2]) {
		t.Fatalf("fork history %s", forkTh.History)
	}
	// Settings given to the fork win over the copied ones.
	th, fw2, err := e.s.Fork(bg, src, ThreadMeta{Settings: agent.Settings{Model: "fork-model"}})
	if err != nil {
		t.Fatal(err)
	}
	fw2.Close()
	if reread, _ := e.s.Read(bg, th.Info.ID); th.Settings.Model != "fork-model" || reread.Settings.Model != "fork-model" {
		t.Fatalf("fork settings %q", th.Settings.Model)
	}
	if _, _, err := e.s.Fork(bg, src, ThreadMeta{ID: dst}); !errors.Is(err, ErrThreadExists) {
		t.Fatalf("fork onto an existing id: %v", err)
	}
	pending, _ := e.s.Create(bg, ThreadMeta{})
	if _, _, err := e.s.Fork(bg, pending.ID(), ThreadMeta{}); !errors.Is(err, ErrNotMaterialized) {
		t.Fatalf("fork of an unmaterialized thread: %v", err)
	}
	pending.Close()
}

func TestStoreCloseClosesWriters(t *testing.T) {
	e := newEnv(t)
	id := testID(50)
	w, _ := e.s.Create(bg, meta(id, 0))
	mustAppend(t, w, turnRecords("t1", 10, "x")[:2]...)
	if err := e.s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(turnRecords("t1", 10, "x")[2]); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after the store closed: %v", err)
	}
	if _, err := e.s.Create(bg, ThreadMeta{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Create after Close: %v", err)
	}
	e.open()
	th, err := e.s.Read(bg, id)
	if err != nil || len(th.Turns) != 1 || th.Turns[0].Status != agent.TurnStatusInterrupted {
		t.Fatalf("after close: %+v %v", th, err)
	}
}

// TestReadWhileArchiving reads a thread, with and without an open writer,
// while another goroutine archives and unarchives it: the file moves, but
// the thread exists throughout, so no read may fail.
func TestReadWhileArchiving(t *testing.T) {
	for _, open := range []bool{true, false} {
		e := newEnv(t)
		id := testID(95)
		w, err := e.s.Create(bg, meta(id, 0))
		if err != nil {
			t.Fatal(err)
		}
		mustAppend(t, w, turnRecords("t", 10, "moving")...)
		if !open {
			w.Close()
		}
		moved := make(chan error, 1)
		go func() {
			for range 40 {
				if err := e.s.Archive(bg, id); err != nil {
					moved <- err
					return
				}
				if _, err := e.s.Unarchive(bg, id); err != nil {
					moved <- err
					return
				}
			}
			moved <- nil
		}()
		for done := false; !done; {
			select {
			case err := <-moved:
				if err != nil {
					t.Fatal(err)
				}
				done = true
			default:
			}
			if th, err := e.s.Read(bg, id); err != nil || len(th.Turns) != 1 {
				<-moved
				t.Fatalf("open writer %v: Read during a move: %v", open, err)
			}
		}
		w.Close()
	}
}

// A rollout synced into a directory that was just created is only durable
// if the new directory's entry is too: every directory the store creates
// has its parent synced before the turn boundary's sync returns.
func TestNewDirectoriesAreSynced(t *testing.T) {
	var mu sync.Mutex
	synced := map[string]bool{}
	saved := syncDir
	syncDir = func(dir string) error {
		mu.Lock()
		synced[dir] = true
		mu.Unlock()
		return saved(dir)
	}
	t.Cleanup(func() { syncDir = saved })
	e := newEnv(t)
	id := testID(96)
	w, err := e.s.Create(bg, meta(id, 0))
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, w, turnRecords("t", 10, "durable")...) // ends with a TurnCompleted: synced
	day := filepath.Dir(w.Path())
	month, year := filepath.Dir(day), filepath.Dir(filepath.Dir(day))
	for _, dir := range []string{day, month, year, filepath.Join(e.home, "sessions"), e.home} {
		if !synced[dir] {
			t.Errorf("%s not synced after the first turn", dir)
		}
	}
	w.Close()
	clear(synced)
	if err := e.s.Archive(bg, id); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(e.home, "archived_sessions"), e.home, day} {
		if !synced[dir] {
			t.Errorf("%s not synced after archiving", dir)
		}
	}
}
