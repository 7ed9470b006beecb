package store

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/codexd/codexd/agent"
)

// CodexItemFunc is how an item looks in Codex's history projection
// (thread_history_1.sqlite's item_json: the app-server's item, without
// its times) and its type there ("userMessage", ...). The app-server has
// it; the store is given it (Options.CodexItem).
type CodexItemFunc func(agent.Item) (itemJSON []byte, itemType string, err error)

// project brings Codex's history projection of a thread up to the end of
// its rollout, as Codex's own catch-up does when it resumes a thread: the
// lines from the offset Codex last projected become rows of its turns and
// items. Codex projects its own writes as it makes them, but its
// thread/read of a thread it has not loaded serves only the projection,
// so without this codexd's turns were missing there (only a thread/resume
// in Codex brought them in). A thread Codex never projected is left
// alone: Codex projects the whole rollout when it first resumes it.
func (c *codexState) project(id, path string, item CodexItemFunc) {
	if item == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	db := c.open(&c.history, codexHistoryFile)
	if db == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := projectRollout(ctx, db, id, path, item); err != nil {
		c.log.Warn("store: updating Codex's history projection", "thread", id, "err", err)
	}
}

func projectRollout(ctx context.Context, db *sql.DB, id, path string, item CodexItemFunc) error {
	var offset, next int64
	err := db.QueryRowContext(ctx, `SELECT next_rollout_byte_offset, next_rollout_ordinal FROM thread_history_projection_state WHERE thread_id = ?`, id).
		Scan(&offset, &next)
	if err != nil {
		return nil // not projected (sql.ErrNoRows), or not Codex's schema: nothing to bring up to date
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	r := bufio.NewReaderSize(f, 1<<16)
	pos := offset
	for {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			break // a torn last line is projected once it is whole
		}
		if err != nil {
			return err
		}
		start := pos
		pos += int64(len(line))
		e, derr := decodeLine(line[:len(line)-1])
		if e.Ordinal >= 0 && e.Ordinal+1 > next {
			next = e.Ordinal + 1
		}
		if derr != nil || e.Ordinal < 0 {
			continue
		}
		if err := projectEntry(ctx, tx, id, &e, start, pos, item); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE thread_history_projection_state SET next_rollout_byte_offset = ?, next_rollout_ordinal = ? WHERE thread_id = ?`,
		pos, next, id); err != nil {
		return err
	}
	return tx.Commit()
}

func projectEntry(ctx context.Context, tx *sql.Tx, id string, e *entry, start, end int64, item CodexItemFunc) error {
	switch m := e.Event.(type) {
	case agent.TurnStarted:
		var started any
		if !m.StartedAt.IsZero() {
			started = m.StartedAt.Unix()
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO thread_turns (thread_id, turn_id, rollout_ordinal, status, started_at, rollout_byte_offset, root_turn_id)
			VALUES (?, ?, ?, 'inProgress', ?, ?, ?)
			ON CONFLICT(thread_id, turn_id) DO NOTHING`, id, e.TurnID, e.Ordinal, started, start, e.TurnID)
		return err
	case agent.ItemCompleted:
		b, typ, err := item(m.Item)
		if err != nil {
			return fmt.Errorf("item %s: %w", m.Item.ItemID(), err)
		}
		at := e.Time.UnixMilli()
		started := at
		if !m.StartedAt.IsZero() {
			started = m.StartedAt.UnixMilli()
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO thread_items (thread_id, turn_id, item_id, rollout_ordinal, created_at_ms, item_json, item_type, updated_at_ordinal, started_at_ms, completed_at_ms)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT(thread_id, turn_id, item_id) DO UPDATE SET item_json = excluded.item_json,
				updated_at_ordinal = excluded.updated_at_ordinal, completed_at_ms = excluded.completed_at_ms`,
			id, e.TurnID, m.Item.ItemID(), e.Ordinal, started, string(b), typ, e.Ordinal, started, at); err != nil {
			return err
		}
		switch typ {
		case "userMessage":
			_, err = tx.ExecContext(ctx, `UPDATE thread_turns SET first_user_item_id = ? WHERE thread_id = ? AND turn_id = ? AND first_user_item_id IS NULL`,
				m.Item.ItemID(), id, e.TurnID)
		case "agentMessage":
			_, err = tx.ExecContext(ctx, `UPDATE thread_turns SET final_agent_item_id = ? WHERE thread_id = ? AND turn_id = ?`,
				m.Item.ItemID(), id, e.TurnID)
		}
		return err
	case agent.TurnCompleted:
		status := string(m.Status)
		if status == "" {
			status = string(agent.TurnStatusCompleted)
		}
		var errJSON any
		if m.Error != nil {
			b, err := json.Marshal(map[string]any{"message": m.Error.Message, "codexErrorInfo": nil, "additionalDetails": nil})
			if err != nil {
				return err
			}
			errJSON = string(b)
		}
		var completed any
		if !m.CompletedAt.IsZero() {
			completed = m.CompletedAt.Unix()
		}
		_, err := tx.ExecContext(ctx, `UPDATE thread_turns SET status = ?, error_json = ?, completed_at = ?, duration_ms = ?,
			started_at = COALESCE(started_at, ?), rollout_end_ordinal = ?, rollout_end_byte_offset = ?
			WHERE thread_id = ? AND turn_id = ?`,
			status, errJSON, completed, m.Duration.Milliseconds(), completed, e.Ordinal, end, id, e.TurnID)
		return err
	}
	return nil
}
