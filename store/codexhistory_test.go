package store

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
)

// TestCodexHistoryProjected: codexd's appends to a thread Codex has
// projected become rows of Codex's thread_history_1.sqlite (its schema in
// testdata, as Codex 0.169 creates it), from the offset Codex had
// reached to the end of the rollout. Codex's thread/read of a thread it
// has not loaded serves only these rows; it once lacked codexd's turns.
func TestCodexHistoryProjected(t *testing.T) {
	e := newEnv(t)
	id := testID(9)
	w, err := e.s.Create(bg, meta(id, 0))
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, w, turnRecords("t1", 10, "first")...)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	info, err := e.s.Info(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(info.Path)
	if err != nil {
		t.Fatal(err)
	}
	// Codex has projected the first turn (its rows are not needed here).
	schema, err := os.ReadFile("testdata/codex-0.169-thread_history.sql")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(e.home, codexHistoryFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(string(schema)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO thread_history_projection_state VALUES (?, ?, ?)`, id, fi.Size(), 6); err != nil {
		t.Fatal(err)
	}

	e.s.codexItem = func(it agent.Item) ([]byte, string, error) {
		typ := map[string]string{"*agent.UserMessage": "userMessage", "*agent.AgentMessage": "agentMessage"}[typeName(it)]
		b, err := json.Marshal(map[string]any{"type": typ, "id": it.ItemID()})
		return b, typ, err
	}
	_, w, err = e.s.Resume(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, w, turnRecords("t2", 100, "second")...)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err = os.Stat(info.Path)
	if err != nil {
		t.Fatal(err)
	}

	var off, next int64
	if err := db.QueryRow(`SELECT next_rollout_byte_offset, next_rollout_ordinal FROM thread_history_projection_state WHERE thread_id = ?`, id).Scan(&off, &next); err != nil {
		t.Fatal(err)
	}
	if off != fi.Size() || next != 11 {
		t.Errorf("projection state %d/%d, want %d/11 (the end of the rollout)", off, next, fi.Size())
	}
	var turn, status, first, final string
	var ord, endOrd, startOff, endOff, started, completed int64
	if err := db.QueryRow(`SELECT turn_id, rollout_ordinal, status, started_at, completed_at, first_user_item_id, final_agent_item_id,
		rollout_byte_offset, rollout_end_ordinal, rollout_end_byte_offset FROM thread_turns WHERE thread_id = ?`, id).
		Scan(&turn, &ord, &status, &started, &completed, &first, &final, &startOff, &endOrd, &endOff); err != nil {
		t.Fatal(err)
	}
	if turn != "t2" || ord != 6 || endOrd != 10 || status != "completed" || first != "u-t2" || final != "a-t2" ||
		endOff != fi.Size() || started != at(100).Unix() || completed != at(104).Unix() {
		t.Errorf("turn row: %s ord %d..%d %s first %s final %s offsets %d..%d (file %d) times %d %d",
			turn, ord, endOrd, status, first, final, startOff, endOff, fi.Size(), started, completed)
	}
	rows, err := db.Query(`SELECT item_id, item_type, item_json, rollout_ordinal FROM thread_items WHERE thread_id = ? ORDER BY rollout_ordinal`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var iid, typ, js string
		var o int64
		if err := rows.Scan(&iid, &typ, &js, &o); err != nil {
			t.Fatal(err)
		}
		got = append(got, iid+":"+typ)
		if !strings.Contains(js, iid) {
			t.Errorf("item %s json %s", iid, js)
		}
	}
	if strings.Join(got, " ") != "u-t2:userMessage a-t2:agentMessage" {
		t.Errorf("items %v", got)
	}
}
