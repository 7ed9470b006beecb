package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/codexd/codexd/agent"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, "sqlite"
)

// schemaVersion is the index's PRAGMA user_version. The index is a cache:
// a file of another version is dropped and rebuilt from the rollouts.
// 3: rollouts are in Codex's format; the rebuild converts older ones (migrate.go).
// 4: rows hold the reasoning effort last recorded.
// 5: rows hold the cwd the thread started in (start_cwd), which listing
// reports and filters by.
const schemaVersion = 5

// schema: one row per stored thread. Times are Unix nanoseconds. search is
// the lowercased preview and name, for a case-insensitive substring filter
// that does not depend on SQLite's ASCII-only lower(). size and mtime are
// the rollout's as last indexed: a file that differs is re-read on rescan.
// cwd is the thread's latest, start_cwd the one it started in (its
// meta's), which Codex 0.169's thread/list reports and filters by.
// foreign lists files under the rollout directories that are not ours, so
// that a rescan need not re-read them while they are unchanged.
const schema = `
CREATE TABLE threads (
	id             TEXT PRIMARY KEY,
	path           TEXT NOT NULL,
	created_at     INTEGER NOT NULL,
	updated_at     INTEGER NOT NULL,
	preview        TEXT NOT NULL,
	name           TEXT NOT NULL,
	search         TEXT NOT NULL,
	cwd            TEXT NOT NULL,
	model          TEXT NOT NULL,
	model_provider TEXT NOT NULL,
	effort         TEXT NOT NULL,
	source         TEXT NOT NULL,
	thread_source  TEXT NOT NULL,
	originator     TEXT NOT NULL,
	forked_from    TEXT NOT NULL,
	cli_version    TEXT NOT NULL,
	archived       INTEGER NOT NULL,
	size           INTEGER NOT NULL,
	mtime          INTEGER NOT NULL,
	start_cwd      TEXT NOT NULL
);
CREATE INDEX threads_created ON threads (archived, created_at, id);
CREATE INDEX threads_updated ON threads (archived, updated_at, id);
CREATE INDEX threads_cwd_created ON threads (archived, start_cwd, created_at, id);
CREATE INDEX threads_cwd_updated ON threads (archived, start_cwd, updated_at, id);
CREATE TABLE foreign_files (
	path  TEXT PRIMARY KEY,
	size  INTEGER NOT NULL,
	mtime INTEGER NOT NULL
) WITHOUT ROWID;
`

// index is the SQLite index. One *sql.DB, in WAL mode with a busy timeout,
// serves every goroutine; writes are single statements or IMMEDIATE
// transactions, so no reader ever has to upgrade its lock and fail busy.
type index struct {
	db  *sql.DB
	log *slog.Logger
}

// row is a thread as the index holds it.
type row struct {
	info        agent.ThreadInfo
	size, mtime int64
	// startCwd is the cwd the thread started in (its meta's; info.Cwd
	// when that has none).
	startCwd string
}

// stamp is what a rescan compares with the file on disk.
type stamp struct {
	id          string
	size, mtime int64
}

// openIndex opens the index at path, creating it when missing. A file that
// is not a usable index of this schema (corrupt, truncated, another
// version) is moved aside to path+".corrupt" and a fresh one created:
// fresh tells the caller that every rollout must be indexed again.
func openIndex(ctx context.Context, path string, log *slog.Logger) (ix *index, fresh bool, err error) {
	if strings.ContainsRune(path, '?') {
		return nil, false, fmt.Errorf("store: index path %q must not contain '?'", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, err
	}
	ix, fresh, err = tryOpenIndex(ctx, path, log)
	if err == nil {
		return ix, fresh, nil
	}
	log.Warn("store: the index is unusable; rebuilding it from the rollouts", "path", path, "err", err)
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if rerr := os.Rename(path+suffix, path+".corrupt"+suffix); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			return nil, false, fmt.Errorf("store: moving the unusable index aside: %w", rerr)
		}
	}
	ix, _, err = tryOpenIndex(ctx, path, log)
	if err != nil {
		return nil, false, fmt.Errorf("store: creating the index: %w", err)
	}
	return ix, true, nil
}

func tryOpenIndex(ctx context.Context, path string, log *slog.Logger) (*index, bool, error) {
	dsn := path + "?_busy_timeout=10000&_journal_mode=WAL&_synchronous=NORMAL&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, false, err
	}
	fresh, err := prepareIndex(ctx, db)
	if err != nil {
		db.Close()
		return nil, false, err
	}
	return &index{db: db, log: log}, fresh, nil
}

func prepareIndex(ctx context.Context, db *sql.DB) (fresh bool, err error) {
	var check string
	if err := db.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&check); err != nil {
		return false, err
	}
	if check != "ok" {
		return false, fmt.Errorf("quick_check: %s", check)
	}
	var version int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return false, err
	}
	if version == schemaVersion {
		return false, nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	for _, stmt := range []string{"DROP TABLE IF EXISTS threads", "DROP TABLE IF EXISTS foreign_files", schema,
		fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return false, err
		}
	}
	return true, tx.Commit()
}

func (x *index) close() error { return x.db.Close() }

const rowColumns = `id, path, created_at, updated_at, preview, name, cwd, model, model_provider, effort,
	source, thread_source, originator, forked_from, cli_version, archived, size, mtime, start_cwd`

func rowArgs(r *row) []any {
	i := &r.info
	return []any{i.ID, i.Path, nanos(i.CreatedAt), nanos(i.UpdatedAt), i.Preview, i.Name,
		searchText(i.Preview, i.Name), i.Cwd, i.Model, i.ModelProvider, i.ReasoningEffort, i.Source, i.ThreadSource,
		i.Originator, i.ForkedFromID, i.CliVersion, boolInt(i.Archived), r.size, r.mtime, cmp.Or(r.startCwd, i.Cwd)}
}

// intoThreads is the INSERT of a whole row, rowArgs's columns.
const intoThreads = `INTO threads (id, path, created_at, updated_at, preview,
		name, search, cwd, model, model_provider, effort, source, thread_source, originator, forked_from, cli_version,
		archived, size, mtime, start_cwd) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`

// put inserts or replaces a thread's row, all of it (a rescan, a move).
func (x *index) put(ctx context.Context, r *row) error {
	_, err := x.db.ExecContext(ctx, "INSERT OR REPLACE "+intoThreads, rowArgs(r)...)
	return err
}

// putNew records r unless the index has a row for its thread already.
// A lookup that indexes a rollout it found on disk uses it: a writer may
// have recorded the thread since the lookup read the file, and what the
// writer knows is newer (its later updates are upserts, so a row put here
// first is brought up to date by them).
func (x *index) putNew(ctx context.Context, r *row) error {
	_, err := x.db.ExecContext(ctx, "INSERT "+intoThreads+" ON CONFLICT (id) DO NOTHING", rowArgs(r)...)
	return err
}

// putLive records what a writer knows. It inserts the row the first time;
// later it updates only what appending changes, never the path or the
// archived flag, which Archive may have changed under an open writer.
func (x *index) putLive(ctx context.Context, r *row) error {
	_, err := x.db.ExecContext(ctx, "INSERT "+intoThreads+` ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at, preview = excluded.preview,
		name = excluded.name, search = excluded.search, cwd = excluded.cwd, model = excluded.model,
		model_provider = excluded.model_provider, effort = excluded.effort, size = excluded.size, mtime = excluded.mtime`, rowArgs(r)...)
	return err
}

func (x *index) remove(ctx context.Context, id string) error {
	_, err := x.db.ExecContext(ctx, "DELETE FROM threads WHERE id = ?", id)
	return err
}

// get returns a thread's row; ok is false when there is none.
func (x *index) get(ctx context.Context, id string) (r row, ok bool, err error) {
	rows, err := x.db.QueryContext(ctx, "SELECT "+rowColumns+" FROM threads WHERE id = ?", id)
	if err != nil {
		return row{}, false, err
	}
	defer rows.Close()
	if !rows.Next() {
		return row{}, false, rows.Err()
	}
	r, err = scanRow(rows)
	return r, err == nil, err
}

func scanRow(rows *sql.Rows) (row, error) {
	var r row
	var created, updated int64
	var archived int
	i := &r.info
	err := rows.Scan(&i.ID, &i.Path, &created, &updated, &i.Preview, &i.Name, &i.Cwd, &i.Model,
		&i.ModelProvider, &i.ReasoningEffort, &i.Source, &i.ThreadSource, &i.Originator, &i.ForkedFromID, &i.CliVersion, &archived, &r.size, &r.mtime, &r.startCwd)
	i.CreatedAt, i.UpdatedAt = fromNanos(created), fromNanos(updated)
	i.Archived, i.Materialized = archived != 0, true
	return r, err
}

// stamps returns every row's path with what was indexed of its file.
func (x *index) stamps(ctx context.Context) (map[string]stamp, error) {
	rows, err := x.db.QueryContext(ctx, "SELECT id, path, size, mtime FROM threads")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]stamp{}
	for rows.Next() {
		var s stamp
		var path string
		if err := rows.Scan(&s.id, &path, &s.size, &s.mtime); err != nil {
			return nil, err
		}
		out[path] = s
	}
	return out, rows.Err()
}

// foreign returns the files known not to be ours, with their stamps.
func (x *index) foreign(ctx context.Context) (map[string]stamp, error) {
	rows, err := x.db.QueryContext(ctx, "SELECT path, size, mtime FROM foreign_files")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]stamp{}
	for rows.Next() {
		var s stamp
		var path string
		if err := rows.Scan(&path, &s.size, &s.mtime); err != nil {
			return nil, err
		}
		out[path] = s
	}
	return out, rows.Err()
}

func (x *index) putForeign(ctx context.Context, path string, size, mtime int64) error {
	_, err := x.db.ExecContext(ctx, "INSERT OR REPLACE INTO foreign_files (path, size, mtime) VALUES (?,?,?)", path, size, mtime)
	return err
}

func (x *index) forgetForeign(ctx context.Context, path string) error {
	_, err := x.db.ExecContext(ctx, "DELETE FROM foreign_files WHERE path = ?", path)
	return err
}

func searchText(preview, name string) string {
	return strings.ToLower(preview) + "\x00" + strings.ToLower(name)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
