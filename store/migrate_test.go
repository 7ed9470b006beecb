package store

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
)

// legacyLines encodes records in codexd's legacy format.
func legacyLines(t testing.TB, m ThreadMeta, recs ...Record) []string {
	t.Helper()
	b, err := encodeMetaLineV1(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{strings.TrimSuffix(string(b), "\n")}
	for _, r := range recs {
		b, err := encodeRecordV1(nil, r, at(0))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.TrimSuffix(string(b), "\n"))
	}
	return out
}

// TestLegacyRolloutsAreConvertedOnFirstUse: a rollout an earlier codexd
// wrote is converted to Codex's format at the first Open, reads back as
// before, leaves no other file behind, and takes appends in the new format.
func TestLegacyRolloutsAreConvertedOnFirstUse(t *testing.T) {
	e := newEnv(t)
	id := testID(40)
	path := rolloutPath(e.home, at(0), id)
	recs := append(turnRecords("t1", 100, "one"), turnRecords("t2", 200, "two")...)
	recs = append(recs, Record{Time: at(300), Event: agent.ThreadNameUpdated{Name: "old one"}}, Record{Time: at(301), store: storeUnarchived})
	writeRaw(t, path, legacyLines(t, meta(id, 0), recs...), false)

	// What the legacy file reads as, before any conversion.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	before, err := readRollout(bg, f, path, e.s.log, nil)
	f.Close()
	if err != nil || !before.legacy {
		t.Fatalf("legacy read: %v legacy=%v", err, before != nil && before.legacy)
	}
	before.finish()
	want := before.thread(e.home, path)

	e.reopen()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"v":1`) || !strings.HasPrefix(string(b), `{"timestamp":"2024-03-04T05:06:07.000Z","ordinal":0,"type":"session_meta"`) {
		t.Fatalf("not converted:\n%s", b)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Fatalf("left behind: %v", ents)
	}
	got, err := e.s.Read(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Turns, want.Turns) || !reflect.DeepEqual(got.History, want.History) ||
		!reflect.DeepEqual(got.Meta, want.Meta) || got.Info.Name != "old one" || got.Info.Preview != want.Info.Preview {
		t.Fatalf("converted thread differs:\n got %+v\nwant %+v", got, want)
	}
	_, w, err := e.s.Resume(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, w, turnRecords("t3", 400, "three")...)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	e.reopen()
	if th, err := e.s.Read(bg, id); err != nil || len(th.Turns) != 3 || th.Skipped != 0 {
		t.Fatalf("after an append: %v %+v", err, th)
	}
}

// TestABusyLegacyRolloutIsServedUnconverted: a legacy rollout another
// process holds is read as it is, and converted at a later Open.
func TestABusyLegacyRolloutIsServedUnconverted(t *testing.T) {
	e := newEnv(t)
	id := testID(41)
	path := rolloutPath(e.home, at(0), id)
	writeRaw(t, path, legacyLines(t, meta(id, 0), turnRecords("t1", 100, "one")...), false)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := lockFile(f); err != nil {
		t.Fatal(err)
	}
	e.reopen()
	if th, err := e.s.Read(bg, id); err != nil || len(th.Turns) != 1 {
		t.Fatalf("busy legacy rollout: %v %+v", err, th)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), `"v":1`) {
		t.Fatal("converted while locked")
	}
	f.Close()
	e.s.Close()
	os.Remove(indexPath(e))
	e.open()
	if b, _ := os.ReadFile(path); strings.Contains(string(b), `"v":1`) {
		t.Fatal("not converted once free")
	}
}
