package store

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
)

// TestCodexStateKeptInStep: what codexd does to a thread Codex has indexed
// (a turn, a name, archive, unarchive) is recorded in Codex's
// state_5.sqlite and session_index.jsonl as Codex records it. codexd once
// left them behind: Codex's thread/unarchive of a thread codexd archived
// failed with "no archived rollout found", and neither side saw the
// other's names. A name Codex gave in session_index.jsonl is codexd's too.
func TestCodexStateKeptInStep(t *testing.T) {
	e := newEnv(t)
	id := testID(7)
	w, err := e.s.Create(bg, meta(id, 0))
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, w, turnRecords("t1", 10, "first")...)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e.home, codexStateFile)); err == nil {
		t.Fatal("codexd created Codex's state database")
	}

	// Codex indexes the thread (its own schema, the columns codexd sets).
	db, err := sql.Open("sqlite", filepath.Join(e.home, codexStateFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	info, err := e.s.Info(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT NOT NULL, updated_at INTEGER NOT NULL,
		tokens_used INTEGER NOT NULL DEFAULT 0, archived INTEGER NOT NULL DEFAULT 0, archived_at INTEGER, name TEXT, updated_at_ms INTEGER);
		INSERT INTO threads (id, rollout_path, updated_at, updated_at_ms) VALUES (?, ?, 1, 1000)`, id, info.Path); err != nil {
		t.Fatal(err)
	}
	row := func() (path string, archived int, archivedAt sql.NullInt64, name sql.NullString, updatedMs, tokens int64) {
		t.Helper()
		if err := db.QueryRow(`SELECT rollout_path, archived, archived_at, name, updated_at_ms, tokens_used FROM threads WHERE id = ?`, id).
			Scan(&path, &archived, &archivedAt, &name, &updatedMs, &tokens); err != nil {
			t.Fatal(err)
		}
		return
	}

	_, w, err = e.s.Resume(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	recs := turnRecords("t2", 100, "second")
	recs = append(recs[:4], Record{Time: at(103), TurnID: "t2", Event: agent.TokenCount{Info: agent.TokenUsageInfo{Total: agent.TokenUsage{Total: 4242}}}}, recs[4])
	mustAppend(t, w, recs...)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, ms, tokens := row(); ms != at(104).UnixMilli() || tokens != 4242 {
		t.Errorf("after a turn: updated_at_ms %d tokens %d, want %d and 4242", ms, tokens, at(104).UnixMilli())
	}

	if err := e.s.SetName(bg, id, "codexd's name"); err != nil {
		t.Fatal(err)
	}
	if _, _, _, name, _, _ := row(); name.String != "codexd's name" {
		t.Errorf("name %v", name)
	}
	b, err := os.ReadFile(filepath.Join(e.home, codexNameIndexFile))
	if err != nil || !strings.Contains(string(b), `"id":"`+id+`","thread_name":"codexd's name"`) {
		t.Errorf("session_index.jsonl: %q, %v", b, err)
	}

	if err := e.s.Archive(bg, id); err != nil {
		t.Fatal(err)
	}
	if p, archived, archivedAt, _, _, _ := row(); archived != 1 || !archivedAt.Valid || !strings.Contains(p, archivedDir) {
		t.Errorf("after archive: %s archived=%d at %v", p, archived, archivedAt)
	} else if _, err := os.Stat(p); err != nil {
		t.Errorf("Codex's path for the archived rollout: %v", err)
	}
	back, err := e.s.Unarchive(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	if p, archived, archivedAt, _, _, _ := row(); archived != 0 || archivedAt.Valid || p != back.Path {
		t.Errorf("after unarchive: %s archived=%d at %v, want %s", p, archived, archivedAt, back.Path)
	}

	// Codex renames it: its line in session_index.jsonl is the name.
	f, err := os.OpenFile(filepath.Join(e.home, codexNameIndexFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"id":"` + id + `","thread_name":"Codex's name","updated_at":"2026-12-02T13:47:37.271290932Z"}` + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if info, err := e.s.Info(bg, id); err != nil || info.Name != "Codex's name" {
		t.Errorf("Info after Codex renamed it: %q, %v", info.Name, err)
	}
	if th, err := e.s.Read(bg, id); err != nil || th.Info.Name != "Codex's name" {
		t.Errorf("Read after Codex renamed it: %v", err)
	}
	if p, err := e.s.List(bg, agent.ThreadQuery{}); err != nil || len(p.Threads) != 1 || p.Threads[0].Name != "Codex's name" {
		t.Errorf("List after Codex renamed it: %+v, %v", p.Threads, err)
	}
}

// FuzzParseNameIndex: Codex's session_index.jsonl, whatever it holds,
// parses without panicking, and a well-formed last line names its id.
func FuzzParseNameIndex(f *testing.F) {
	f.Add([]byte(`{"id":"01a236f4-59d3-7561-b721-c71b14a9d72d","thread_name":"named-by-codex","updated_at":"2026-12-02T13:47:37.271290932Z"}` + "\n"))
	f.Add([]byte("{\"id\":\"a\",\"thread_name\":\"x\"}\n{\"id\":\"a\",\"thread_name\":\"y\"}\n{\"id\":"))
	f.Add([]byte("\x00\n[]\nnull\n{\"id\":1}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		names := parseNameIndex(b)
		last := []byte(`{"id":"fuzz-id","thread_name":"last"}`)
		if got := parseNameIndex(append(append(append([]byte(nil), b...), '\n'), last...))["fuzz-id"]; got != "last" {
			t.Fatalf("the last line's name is %q (before it: %d names)", got, len(names))
		}
	})
}
