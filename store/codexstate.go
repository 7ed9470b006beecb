package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/codexd/codexd/agent"
)

// Codex 0.169 keeps indexes of its own beside the rollouts:
// state_5.sqlite, whose threads table Codex's thread/read, archive and
// unarchive go by (the rollout's path, archived, the name, updated_at), and
// session_index.jsonl, where it appends thread names. Codex brings its
// turn projection (thread_history_1.sqlite) up to date from the rollout by
// itself, but not these: when codexd archived a thread Codex had indexed,
// Codex's thread/read gave the old path and its thread/unarchive failed
// ("no archived rollout found"). So what codexd does to such a thread it
// also records there, as Codex does. It only updates the row of a thread
// Codex already has; it never creates Codex's files or tables (Codex fills
// a row from the rollout when it first sees one), and a failure is logged,
// never returned: the rollout stays the truth.
const (
	codexStateFile     = "state_5.sqlite"
	codexHistoryFile   = "thread_history_1.sqlite"
	codexNameIndexFile = "session_index.jsonl"
)

// codexState is the store's handle on Codex's state_5.sqlite, opened when
// first needed once the file exists.
type codexState struct {
	home string
	log  *slog.Logger

	mu      sync.Mutex
	db      *sql.DB // state_5.sqlite
	history *sql.DB // thread_history_1.sqlite
}

// open opens one of Codex's databases if Codex made it.
func (c *codexState) open(dbp **sql.DB, file string) *sql.DB {
	if *dbp != nil {
		return *dbp
	}
	path := filepath.Join(c.home, file)
	if _, err := os.Stat(path); err != nil {
		return nil // no Codex here (yet): nothing to keep in step
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		c.log.Warn("store: opening Codex's database", "file", file, "err", err)
		return nil
	}
	db.SetMaxOpenConns(1)
	*dbp = db
	return db
}

// exec runs an update on Codex's threads table, if Codex has one.
func (c *codexState) exec(query string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	db := c.open(&c.db, codexStateFile)
	if db == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, query, args...); err != nil {
		c.log.Warn("store: updating Codex's state database", "err", err)
	}
}

// touched: the thread's rollout grew (a turn, a name); tokens is the
// latest total, when known.
func (c *codexState) touched(id string, at time.Time, tokens int64) {
	if at.IsZero() {
		return
	}
	if tokens > 0 {
		c.exec(`UPDATE threads SET updated_at = ?, updated_at_ms = ?, tokens_used = ? WHERE id = ? AND (updated_at_ms IS NULL OR updated_at_ms <= ?)`,
			at.Unix(), at.UnixMilli(), tokens, id, at.UnixMilli())
		return
	}
	c.exec(`UPDATE threads SET updated_at = ?, updated_at_ms = ? WHERE id = ? AND (updated_at_ms IS NULL OR updated_at_ms <= ?)`,
		at.Unix(), at.UnixMilli(), id, at.UnixMilli())
}

// moved: the rollout was archived or unarchived to path.
func (c *codexState) moved(id, path string, archived bool, at time.Time) {
	if archived {
		c.exec(`UPDATE threads SET rollout_path = ?, archived = 1, archived_at = ? WHERE id = ?`, path, at.Unix(), id)
		return
	}
	c.exec(`UPDATE threads SET rollout_path = ?, archived = 0, archived_at = NULL, updated_at = ?, updated_at_ms = ? WHERE id = ?`,
		path, at.Unix(), at.UnixMilli(), id)
}

// named: the thread was named. Codex records a name in the threads row
// and in a line of session_index.jsonl (the last line of an id wins).
func (c *codexState) named(id, name string, at time.Time) {
	c.exec(`UPDATE threads SET name = ? WHERE id = ?`, name, id)
	if err := appendNameIndex(c.home, id, name, at); err != nil {
		c.log.Warn("store: appending to Codex's session_index.jsonl", "err", err)
	}
}

// appendNameIndex appends Codex's line to session_index.jsonl under its
// lock file, when the file exists (Codex made it) or Codex's state does.
func appendNameIndex(home, id, name string, at time.Time) error {
	path := filepath.Join(home, codexNameIndexFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Stat(filepath.Join(home, codexStateFile)); err != nil {
			return nil
		}
	}
	line, err := json.Marshal(struct {
		ID         string `json:"id"`
		ThreadName string `json:"thread_name"`
		UpdatedAt  string `json:"updated_at"`
	}{id, name, at.UTC().Format(time.RFC3339Nano)})
	if err != nil {
		return err
	}
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("locking %s: %w", lock.Name(), err)
	}
	defer unix.Flock(int(lock.Fd()), unix.LOCK_UN)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (c *codexState) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, db := range []**sql.DB{&c.db, &c.history} {
		if *db != nil {
			errs = append(errs, (*db).Close())
			*db = nil
		}
	}
	return errors.Join(errs...)
}

// codexNames is session_index.jsonl read as Codex reads it: the last line
// of an id names it. It is reread only when the file changed.
type codexNames struct {
	mu    sync.Mutex
	size  int64
	mtime time.Time
	names map[string]string
}

// nameOf is the name session_index.jsonl gives the thread, if any. Codex
// names a thread there and in its database, not in the rollout; codexd
// appends there too when it names one (see named), so the last line is
// the latest name whichever side gave it.
func (s *Local) nameOf(id string) (string, bool) {
	n := &s.names
	path := filepath.Join(s.home, codexNameIndexFile)
	fi, err := os.Stat(path)
	if err != nil {
		return "", false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.names == nil || fi.Size() != n.size || !fi.ModTime().Equal(n.mtime) {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", false
		}
		n.names, n.size, n.mtime = parseNameIndex(b), fi.Size(), fi.ModTime()
	}
	name, ok := n.names[id]
	return name, ok
}

// withCodexName gives info the name Codex's index holds for it.
func (s *Local) withCodexName(info *agent.ThreadInfo) {
	if name, ok := s.nameOf(info.ID); ok {
		info.Name = name
	}
}

// parseNameIndex reads session_index.jsonl: one {"id","thread_name",...}
// a line, the last line of an id winning; a line that is not one is
// skipped (the file is Codex's, and may be torn).
func parseNameIndex(b []byte) map[string]string {
	names := map[string]string{}
	for _, l := range bytes.Split(b, []byte("\n")) {
		var e struct {
			ID         string `json:"id"`
			ThreadName string `json:"thread_name"`
		}
		if json.Unmarshal(l, &e) == nil && e.ID != "" {
			names[e.ID] = e.ThreadName
		}
	}
	return names
}
