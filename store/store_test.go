package store

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codexd/codexd/agent"
)

var bg = context.Background()

func TestMaterializesOnFirstUserMessage(t *testing.T) {
	e := newEnv(t)
	id := testID(1)
	w, err := e.s.Create(bg, meta(id, 0))
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(e.home, "sessions", at(0).Local().Format("2006/01/02"),
		"rollout-"+at(0).Local().Format("2006-01-02T15-04-05")+"-"+id+".jsonl")
	if w.Path() != want {
		t.Fatalf("path %s, want %s", w.Path(), want)
	}
	recs := turnRecords("t1", 10, "hello there")
	mustAppend(t, w, recs[0], Record{Time: at(10), Event: agent.SettingsUpdated{Settings: agent.Settings{Model: "m2", Cwd: "/w"}}})
	if _, err := os.Stat(w.Path()); !errors.Is(err, os.ErrNotExist) || w.Materialized() {
		t.Fatalf("file exists before the first user message: %v", err)
	}
	if err := w.Sync(); err != nil {
		t.Fatalf("Sync before materialization: %v", err)
	}
	if _, err := e.s.Read(bg, id); !errors.Is(err, ErrNotMaterialized) {
		t.Fatalf("Read: %v", err)
	}
	if _, _, err := e.s.Resume(bg, id); !errors.Is(err, ErrNotMaterialized) {
		t.Fatalf("Resume: %v", err)
	}
	if _, err := e.s.Info(bg, id); !errors.Is(err, ErrNotMaterialized) {
		t.Fatalf("Info: %v", err)
	}
	if p, _ := e.s.List(bg, agent.ThreadQuery{}); len(p.Threads) != 0 {
		t.Fatalf("listed before materialization: %+v", p.Threads)
	}
	mustAppend(t, w, recs[1])
	if !w.Materialized() {
		t.Fatal("not materialized by the user message")
	}
	p, err := e.s.List(bg, agent.ThreadQuery{})
	if err != nil || len(p.Threads) != 1 || p.Threads[0].Preview != "hello there" || p.Threads[0].Model != "m2" {
		t.Fatalf("List after materialization: %+v %v", p.Threads, err)
	}
	th, err := e.s.Read(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	// Everything appended before materialization was written with it.
	if th.Settings.Model != "m2" || len(th.Turns) != 1 || len(th.Turns[0].Items) != 1 {
		t.Fatalf("read back: %+v", th)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(recs[2]); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v", err)
	}
}

func TestUnmaterializedThreadLeavesNothing(t *testing.T) {
	e := newEnv(t)
	w, err := e.s.Create(bg, ThreadMeta{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := canonicalID(w.ID()); err != nil || w.ID()[14] != '7' {
		t.Fatalf("generated id %q is not a UUIDv7: %v", w.ID(), err)
	}
	mustAppend(t, w, turnRecords("t1", 0, "x")[0])
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e.home, "sessions")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("sessions/ exists: %v", err)
	}
	if _, err := e.s.Read(bg, w.ID()); !errors.Is(err, agent.ErrThreadNotFound) {
		t.Fatalf("Read: %v", err)
	}
}

// fullThread writes a thread with every kind of record and returns what
// reading it back must give.
func fullThread(t *testing.T, e *env, id string) (want *Thread) {
	t.Helper()
	m := meta(id, 0)
	m.ThreadSource = "user"
	base := "You are codexd."
	m.BaseInstructions = &base
	w, err := e.s.Create(bg, m)
	if err != nil {
		t.Fatal(err)
	}
	items := allItems()
	usage := filled[agent.TokenUsageInfo]()
	settings := agent.Settings{Model: "m9", ModelProvider: "other", Cwd: "/work/b", Sandbox: agent.SandboxPolicy{Mode: agent.SandboxWorkspaceWrite, WritableRoots: []string{"/tmp/x"}}}
	fail := &agent.TurnError{Message: "boom", Info: "internalServerError", HTTPStatus: 500}
	mustAppend(t, w, turnRecords("t1", 100, "first question")...)
	mustAppend(t, w,
		Record{Time: at(200), TurnID: "t2", Event: agent.TurnStarted{StartedAt: at(200)}},
		Record{Time: at(201), TurnID: "t2", Event: agent.ItemCompleted{Item: userMsg("u2", "second")}},
		Record{Time: at(202), TurnID: "t2", Event: agent.ItemStarted{Item: items[3]}},                // not kept
		Record{Time: at(202), TurnID: "t2", Event: agent.AgentMessageDelta{ItemID: "x", Delta: "y"}}, // not kept
	)
	for i, it := range items {
		mustAppend(t, w, Record{Time: at(210 + i), TurnID: "t2", Event: agent.ItemCompleted{Item: it}})
	}
	mustAppend(t, w,
		Record{Time: at(220), TurnID: "t2", Model: json.RawMessage(`{"n":2}`)},
		Record{Time: at(221), TurnID: "t2", Event: agent.TokenCount{Info: usage}},
		Record{Time: at(222), TurnID: "t2", Event: agent.Error{Err: *fail}}, // not kept
		Record{Time: at(223), TurnID: "t2", Event: agent.TurnCompleted{Status: agent.TurnStatusFailed, Error: fail, CompletedAt: at(223)}},
		Record{Time: at(300), Event: agent.SettingsUpdated{Settings: settings}},
		Record{Time: at(301), Event: agent.ThreadNameUpdated{Name: "Named"}},
	)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	first, second := turnRecords("t1", 100, "first question"), items
	secondTimes := map[string]agent.ItemTime{"u2": {Started: at(201), Completed: at(201)}}
	for i, it := range items {
		secondTimes[it.ItemID()] = agent.ItemTime{Started: at(210 + i), Completed: at(210 + i)}
	}
	return &Thread{
		Meta: m,
		Info: agent.ThreadInfo{
			ID: id, Preview: "first question", Name: "Named", Model: "m9", ModelProvider: "other",
			Cwd: "/work/b", Source: "appServer", ThreadSource: "user", Originator: "test", CliVersion: "0.0.1", Path: w.Path(),
			CreatedAt: at(0), UpdatedAt: at(301), Materialized: true,
		},
		Turns: []agent.Turn{
			{ID: "t1", Status: agent.TurnStatusCompleted, StartedAt: at(100), CompletedAt: at(104),
				Items:     []agent.Item{first[1].Event.(agent.ItemCompleted).Item, first[3].Event.(agent.ItemCompleted).Item},
				ItemTimes: map[string]agent.ItemTime{"u-t1": {Started: at(101), Completed: at(101)}, "a-t1": {Started: at(103), Completed: at(103)}}},
			{ID: "t2", Status: agent.TurnStatusFailed, Error: fail, StartedAt: at(200), CompletedAt: at(223),
				Items: append([]agent.Item{userMsg("u2", "second")}, second...), ItemTimes: secondTimes},
		},
		Settings: settings,
		Usage:    &usage,
		History:  []json.RawMessage{first[2].Model, json.RawMessage(`{"n":2}`)},
	}
}

func TestRebuildAfterRestart(t *testing.T) {
	e := newEnv(t)
	id := testID(7)
	want := fullThread(t, e, id)
	e.reopen()
	got, err := e.s.Read(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.MarshalIndent(got, "", " ")
		wj, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("rebuilt thread differs:\n got %s\nwant %s", gj, wj)
	}
	info, err := e.s.Info(bg, id)
	if err != nil || !reflect.DeepEqual(info, want.Info) {
		t.Fatalf("Info:\n got %+v\nwant %+v (%v)", info, want.Info, err)
	}
	if len(e.logs.warnings()) != 0 {
		t.Fatalf("warnings: %v", e.logs.warnings())
	}
}

func TestResumeAppendsAndBusy(t *testing.T) {
	e := newEnv(t)
	id := testID(8)
	fullThread(t, e, id)
	e.reopen()
	th, w, err := e.s.Resume(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(th.Turns) != 2 || th.Settings.Model != "m9" || th.Usage == nil || len(th.History) != 2 {
		t.Fatalf("resumed: %+v", th)
	}
	if _, _, err := e.s.Resume(bg, id); !errors.Is(err, ErrThreadBusy) {
		t.Fatalf("second Resume: %v", err)
	}
	// Another process (another store on the same home) is refused too.
	other, err := Open(bg, e.home, Options{Logger: e.s.log})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := other.Resume(bg, id); !errors.Is(err, ErrThreadBusy) {
		t.Fatalf("Resume from another store: %v", err)
	}
	if err := other.SetName(bg, id, "x"); !errors.Is(err, ErrThreadBusy) {
		t.Fatalf("SetName from another store: %v", err)
	}
	other.Close()
	if _, err := e.s.Create(bg, meta(id, 0)); !errors.Is(err, ErrThreadExists) {
		t.Fatalf("Create over an open thread: %v", err)
	}
	mustAppend(t, w, turnRecords("t3", 400, "third")...)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Create(bg, meta(id, 0)); !errors.Is(err, ErrThreadExists) {
		t.Fatalf("Create over a stored thread: %v", err)
	}
	e.reopen()
	th, err = e.s.Read(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(th.Turns); !reflect.DeepEqual(got, []agent.TurnStatus{"completed", "failed", "completed"}) {
		t.Fatalf("statuses %v", got)
	}
	if len(th.History) != 3 || th.Info.UpdatedAt != at(404) {
		t.Fatalf("history %d, updated %v", len(th.History), th.Info.UpdatedAt)
	}
}

func TestCrashMidTurnIsInterruptedAndSealedOnResume(t *testing.T) {
	e := newEnv(t)
	id := testID(9)
	m := meta(id, 0)
	t1 := turnRecords("t1", 100, "done")
	t2 := turnRecords("t2", 200, "dying")
	writeRaw(t, rolloutPath(e.home, m.CreatedAt, id), lines(t, m, append(t1, t2[:4]...)...), false)

	th, err := e.s.Read(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(th.Turns); !reflect.DeepEqual(got, []agent.TurnStatus{"completed", "interrupted"}) {
		t.Fatalf("statuses %v", got)
	}
	if len(th.Turns[0].Items) != 2 || len(th.Turns[1].Items) != 2 || th.Turns[1].CompletedAt != at(203) {
		t.Fatalf("turns: %+v", th.Turns)
	}
	th, w, err := e.s.Resume(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	if th.Turns[1].Status != agent.TurnStatusInterrupted {
		t.Fatalf("resumed status %v", th.Turns[1].Status)
	}
	mustAppend(t, w, turnRecords("t3", 300, "after")...)
	w.Close()
	raw, _ := os.ReadFile(w.Path())
	if n := strings.Count(string(raw), `"status":"interrupted"`); n != 1 {
		t.Fatalf("%d interrupted seals in the file", n)
	}
	th, _, err = e.s.Resume(bg, id) // nothing left to seal
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(th.Turns); !reflect.DeepEqual(got, []agent.TurnStatus{"completed", "interrupted", "completed"}) {
		t.Fatalf("statuses %v", got)
	}
	raw2, _ := os.ReadFile(w.Path())
	if len(raw2) != len(raw) {
		t.Fatal("a second Resume wrote again")
	}
	// A turn started while another was open: the process died, and a
	// later one began a new turn without sealing (an older codexd).
	id2 := testID(10)
	writeRaw(t, rolloutPath(e.home, at(0), id2), lines(t, meta(id2, 0), append(t2[:2], t1...)...), false)
	th, err = e.s.Read(bg, id2)
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(th.Turns); !reflect.DeepEqual(got, []agent.TurnStatus{"interrupted", "completed"}) {
		t.Fatalf("statuses %v", got)
	}
}

func TestCorruptAndTornLinesAreSkipped(t *testing.T) {
	e := newEnv(t)
	id := testID(11)
	m := meta(id, 0)
	t1, t2 := turnRecords("t1", 100, "one"), turnRecords("t2", 200, "two")
	ls := lines(t, m, append(t1, t2...)...)
	good := len(ls)
	// Garbage in the middle, a line cut in half, a stray NUL run, and a
	// torn last line (the write of t3's TurnStarted was cut short).
	torn := lines(t, m, turnRecords("t3", 300, "three")[0])[1]
	ls = append(ls[:3], append([]string{"\x00\x00garbage{{", ls[3][:len(ls[3])/2], ""}, ls[3:]...)...)
	ls = append(ls, torn[:len(torn)-7])
	path := rolloutPath(e.home, m.CreatedAt, id)
	writeRaw(t, path, ls, true)

	th, err := e.s.Read(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	if th.Skipped != 3 || len(ls) != good+4 {
		t.Fatalf("skipped %d lines", th.Skipped)
	}
	if got := statuses(th.Turns); !reflect.DeepEqual(got, []agent.TurnStatus{"completed", "completed"}) {
		t.Fatalf("statuses %v", got)
	}
	if len(th.Turns[0].Items) != 2 || len(th.Turns[1].Items) != 2 || len(th.History) != 2 {
		t.Fatalf("turns %+v history %d", th.Turns, len(th.History))
	}
	warns := strings.Join(e.logs.warnings(), "\n")
	if !strings.Contains(warns, "corrupt line") || !strings.Contains(warns, "torn last line") {
		t.Fatalf("warnings:\n%s", warns)
	}
	// Appending after a torn tail starts a new line: the fragment stays
	// one skipped line and the new records are whole.
	_, w, err := e.s.Resume(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, w, turnRecords("t3", 300, "three")...)
	w.Close()
	th, err = e.s.Read(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	if th.Skipped != 3 || len(th.Turns) != 3 || th.Turns[2].Status != agent.TurnStatusCompleted {
		t.Fatalf("after append: skipped %d, %v", th.Skipped, statuses(th.Turns))
	}
	// A file of nothing but garbage is not a thread; listing it is not
	// an error either.
	junk := rolloutPath(e.home, at(5), testID(12))
	writeRaw(t, junk, []string{"junk", "more junk"}, false)
	e.reopen()
	if _, err := e.s.Read(bg, testID(12)); !errors.Is(err, agent.ErrThreadNotFound) {
		t.Fatalf("junk file: %v", err)
	}
}

func TestLostMetaLineFallsBackToTheFileName(t *testing.T) {
	e := newEnv(t)
	id := testID(13)
	ls := lines(t, meta(id, 0), turnRecords("t1", 100, "one")...)
	ls[0] = "{torn meta"
	writeRaw(t, rolloutPath(e.home, at(0), id), ls, false)
	th, err := e.s.Read(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	if th.Info.ID != id || !th.Info.CreatedAt.Equal(at(0).Truncate(1e9)) || len(th.Turns) != 1 || th.Skipped != 1 {
		t.Fatalf("got %+v", th.Info)
	}
}

func TestUnknownAndInvalidIDs(t *testing.T) {
	e := newEnv(t)
	for _, id := range []string{testID(99), "../../etc/passwd", "", "0190A000-0000-7000-8000-00000000000g", "*"} {
		errs := map[string]error{}
		_, errs["Read"] = e.s.Read(bg, id)
		_, _, errs["Resume"] = e.s.Resume(bg, id)
		_, errs["Info"] = e.s.Info(bg, id)
		errs["Archive"] = e.s.Archive(bg, id)
		_, errs["Unarchive"] = e.s.Unarchive(bg, id)
		errs["SetName"] = e.s.SetName(bg, id, "n")
		_, _, errs["Fork"] = e.s.Fork(bg, id, ThreadMeta{})
		for op, err := range errs {
			if !errors.Is(err, agent.ErrThreadNotFound) {
				t.Errorf("%s(%q): %v", op, id, err)
			}
		}
	}
	if _, err := e.s.Create(bg, ThreadMeta{ID: "../x"}); !errors.Is(err, ErrInvalidID) {
		t.Fatalf("Create with a bad id: %v", err)
	}
	// Upper case and urn:uuid: name the same thread.
	id := testID(0xabc)
	w, _ := e.s.Create(bg, meta(strings.ToUpper(id), 0))
	mustAppend(t, w, turnRecords("t", 1, "x")...)
	w.Close()
	if _, err := e.s.Read(bg, "urn:uuid:"+strings.ToUpper(id)); err != nil {
		t.Fatal(err)
	}
}

// TestTurnBoundaryIsSynced: records reach the file as they are appended
// (a kill -9 loses none of them), and the file's fsync starts when a turn
// ends, not before.
func TestTurnBoundaryIsSynced(t *testing.T) {
	e := newEnv(t)
	w, err := e.s.Create(bg, meta(testID(90), 0))
	if err != nil {
		t.Fatal(err)
	}
	fw, ok := w.(*fileWriter)
	if !ok {
		t.Fatalf("Create returned a %T", w)
	}
	unsynced := func() bool {
		fw.mu.Lock()
		defer fw.mu.Unlock()
		return fw.unsynced
	}
	recs := turnRecords("t1", 10, "hello")
	for i, rec := range recs {
		mustAppend(t, w, rec)
		last := i == len(recs)-1
		if i >= 1 && unsynced() == last {
			t.Fatalf("after record %d: unsynced %v", i, unsynced())
		}
		if last {
			if err := fw.bg.wait(); err != nil {
				t.Fatal(err)
			}
		}
		if i >= 1 {
			// What was appended is in the file already.
			th, err := e.s.Read(bg, testID(90))
			if err != nil || len(th.Turns) != 1 {
				t.Fatalf("after record %d: %+v %v", i, th, err)
			}
		}
	}
}

// TestTurnEndDoesNotWaitForTheDisk: the TurnCompleted append returns while
// the file's fsync is still running; Sync waits for it, and a failed one
// is reported by Sync, which syncs again.
func TestTurnEndDoesNotWaitForTheDisk(t *testing.T) {
	e := newEnv(t)
	w, err := e.s.Create(bg, meta(testID(91), 0))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	held, release := make(chan struct{}), make(chan struct{})
	var failOnce atomic.Bool
	failOnce.Store(true)
	saved := fsyncFile
	fsyncFile = func(f *os.File) error {
		select {
		case held <- struct{}{}:
			<-release
			if failOnce.Swap(false) {
				return errors.New("injected EIO")
			}
		default:
		}
		return f.Sync()
	}
	t.Cleanup(func() { fsyncFile = saved })

	appended := make(chan error, 1)
	go func() {
		var err error
		for _, rec := range turnRecords("t1", 1, "hello") {
			if err == nil {
				err = w.Append(rec)
			}
		}
		appended <- err
	}()
	select {
	case <-held: // the turn's fsync started
	case <-time.After(10 * time.Second):
		t.Fatal("no fsync at the turn's end")
	}
	select {
	case err := <-appended:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the turn's last append waits for its fsync")
	}
	synced := make(chan error, 1)
	go func() { synced <- w.Sync() }()
	select {
	case err := <-synced:
		t.Fatalf("Sync returned (%v) while the fsync was held", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	select {
	case err := <-synced:
		if err == nil || !strings.Contains(err.Error(), "injected EIO") {
			t.Fatalf("Sync after a failed fsync: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Sync never returned")
	}
	if err := w.Sync(); err != nil {
		t.Fatalf("Sync once the disk is back: %v", err)
	}
}
