package store

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/codexd/codexd/agent"
)

// fileWriter appends to one rollout. Its state changes only under mu.
//
// Invariants: f is nil until the thread materializes; pending holds whole
// lines not yet written (all of them before materialization; after a
// failed write, those that did not reach the file); torn is set when the
// file may end inside a line, so the next write starts with a newline and
// the fragment becomes one corrupt line that readers skip, instead of
// swallowing the next record.
type fileWriter struct {
	st *Local

	mu        sync.Mutex
	meta      ThreadMeta
	path      string // Archive and Unarchive change it under mu
	f         *os.File
	end       int64 // the file's length, as far as this writer knows
	size      int64 // the length of its whole lines: what a reader may read
	pending   []byte
	sum       summary
	unsynced  bool // written since the last fsync started
	bg        syncer
	dirSynced bool
	stale     bool // the index has not seen the latest records
	torn      bool
	closed    bool
	// lc numbers the lines (Codex's ordinals) and names the thread in them.
	lc lineCtx
}

func (w *fileWriter) ID() string { return w.meta.ID }

func (w *fileWriter) Path() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.path
}

func (w *fileWriter) Materialized() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.f != nil
}

// readable reports the path and how many bytes of it hold whole lines, so
// that a reader never sees half of an append in progress.
func (w *fileWriter) readable() (path string, size int64, materialized bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.path, w.size, w.f != nil
}

func (w *fileWriter) Append(recs ...Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.append(recs)
}

// append is Append with w.mu held.
func (w *fileWriter) append(recs []Record) error {
	if w.closed {
		return ErrClosed
	}
	// Times are kept to the millisecond, as the lines hold them, so that
	// what the writer observes is what a reader reads back.
	now := time.Now().UTC().Truncate(time.Millisecond)
	start, ord := len(w.pending), w.lc.ordinal
	kept := 0
	for _, rec := range recs {
		if rec.Model == nil && rec.Event != nil && !Kept(rec.Event) {
			continue
		}
		var err error
		if w.pending, err = encodeLine(w.pending, rec, now, &w.lc); err != nil {
			w.pending, w.lc.ordinal = w.pending[:start], ord
			return err
		}
		kept++
	}
	if kept == 0 {
		return nil
	}
	boundary := false
	for _, rec := range recs {
		if rec.Model == nil && rec.Event != nil && !Kept(rec.Event) {
			continue
		}
		e := entry{Time: rec.Time.UTC().Truncate(time.Millisecond), TurnID: rec.TurnID, Event: rec.Event, Model: rec.Model, Store: rec.store}
		if rec.Time.IsZero() {
			e.Time = now
		}
		w.sum.observe(&e)
		if _, ok := rec.Event.(agent.TurnCompleted); ok {
			boundary = true
		}
	}
	w.stale = true
	if w.f == nil {
		if !w.sum.materialized {
			return nil // no user message yet: the records wait in memory
		}
		if err := w.materialize(); err != nil {
			return err
		}
	} else if err := w.flush(); err != nil {
		return err
	}
	if boundary {
		return w.turnEnded()
	}
	return nil
}

// turnEnded makes an ended turn durable without making its end wait for
// the disk: the file's fsync is started in the background (syncer), the
// index is brought up to date now (a thread/list right after the turn sees
// it), and the directory's entry is synced the first time, before any
// record can be lost with a missing name.
func (w *fileWriter) turnEnded() error {
	if w.f == nil {
		return nil
	}
	if !w.dirSynced {
		if err := syncDir(filepath.Dir(w.path)); err != nil {
			return err
		}
		w.dirSynced = true
	}
	if w.unsynced {
		w.unsynced = false
		w.bg.kick(w.f, w.st.log)
	}
	if w.stale {
		w.updateIndex()
	}
	return nil
}

// materialize creates the file with the meta line and what was pending.
func (w *fileWriter) materialize() error {
	if err := mkdirAllSynced(filepath.Dir(w.path)); err != nil {
		return fmt.Errorf("store: creating the rollout directory: %w", err)
	}
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("store: creating the rollout: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return err
	}
	head, err := encodeMetaLine(nil, w.meta)
	if err != nil {
		f.Close()
		os.Remove(w.path) // ours: created empty just above
		return err
	}
	w.pending = append(head, w.pending...)
	w.f = f
	if err := w.flush(); err != nil {
		return err
	}
	w.updateIndex()
	return nil
}

// flush writes pending to the file with one write(2).
func (w *fileWriter) flush() error {
	if len(w.pending) == 0 {
		return nil
	}
	buf := w.pending
	lead := 0
	if w.torn {
		buf = append([]byte{'\n'}, buf...)
		lead = 1
	}
	n, err := w.f.Write(buf)
	if last := bytes.LastIndexByte(buf[:n], '\n'); last >= 0 {
		w.size = w.end + int64(last) + 1
	}
	w.end += int64(n)
	w.torn = w.end != w.size
	w.unsynced = w.unsynced || n > 0
	if err != nil {
		// Whole lines that made it stay written; the rest is retried at
		// the next append or sync, after a newline if a fragment is out.
		done := max(n-lead, 0)
		w.pending = w.pending[bytes.LastIndexByte(w.pending[:done], '\n')+1:]
		return fmt.Errorf("store: appending to %s: %w", w.path, err)
	}
	if cap(w.pending) > 1<<20 {
		w.pending = nil // do not keep a large batch's buffer for good
	} else {
		w.pending = w.pending[:0]
	}
	return nil
}

func (w *fileWriter) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	return w.sync()
}

// sync writes what is pending, fsyncs the file (and, the first time, its
// directory, so that the new name survives too) and updates the index. It
// waits for a turn boundary's fsync in flight.
func (w *fileWriter) sync() error {
	if w.f == nil {
		return nil
	}
	if err := w.flush(); err != nil {
		return err
	}
	// A turn boundary's fsync may still run (or have failed: then this one
	// is tried again, and its failure reported).
	bgErr := w.bg.wait()
	if w.unsynced || bgErr != nil {
		if err := fsyncFile(w.f); err != nil {
			return fmt.Errorf("store: syncing %s: %w", w.path, err)
		}
		w.unsynced = false
	}
	if bgErr != nil {
		return fmt.Errorf("store: syncing %s at a turn's end: %w", w.path, bgErr)
	}
	if !w.dirSynced {
		if err := syncDir(filepath.Dir(w.path)); err != nil {
			return err
		}
		w.dirSynced = true
	}
	if w.stale {
		w.updateIndex()
	}
	return nil
}

// updateIndex records the writer's summary. A failure is logged, never
// returned: the rollout is the truth, and a rescan repairs the index.
func (w *fileWriter) updateIndex() {
	var size, mtime int64
	if fi, err := w.f.Stat(); err == nil {
		size, mtime = fi.Size(), fi.ModTime().UnixNano()
	}
	r := &row{info: w.info(), size: size, mtime: mtime, startCwd: w.meta.Settings.Cwd}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w.st.codex.touched(w.meta.ID, w.sum.updated, w.sum.tokens)
	w.st.codex.project(w.meta.ID, w.path, w.st.codexItem)
	if err := w.st.ix.putLive(ctx, r); err != nil {
		w.st.log.Warn("store: updating the index failed; a rescan will repair it", "thread", w.meta.ID, "err", err)
		return
	}
	w.stale = false
}

func (w *fileWriter) info() agent.ThreadInfo {
	m, s := &w.meta, &w.sum
	return agent.ThreadInfo{
		ID: m.ID, ForkedFromID: m.ForkedFromID, Preview: s.preview, Name: s.name,
		Archived: isArchivedPath(w.st.home, w.path), Model: s.settings.Model,
		ModelProvider: s.settings.ModelProvider, ReasoningEffort: s.settings.ReasoningEffort, Cwd: s.settings.Cwd, Source: m.Source,
		ThreadSource: m.ThreadSource, Originator: m.Originator, CliVersion: m.CliVersion, Path: w.path,
		CreatedAt: m.CreatedAt, UpdatedAt: s.updated, Materialized: w.f != nil,
	}
}

func (w *fileWriter) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	err := w.sync()
	if w.f != nil {
		if cerr := w.f.Close(); err == nil {
			err = cerr
		}
	}
	w.closed = true
	w.pending = nil
	w.mu.Unlock()
	// Released after w.mu: the store's lock is always taken first.
	w.st.release(w.meta.ID, w)
	return err
}

// lockFile takes the rollout's advisory lock, so that two processes never
// append to one thread.
func lockFile(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == syscall.EWOULDBLOCK {
		return fmt.Errorf("%w (another process)", ErrThreadBusy)
	}
	if err != nil {
		return fmt.Errorf("store: locking the rollout: %w", err)
	}
	return nil
}

// mkdirAllSynced is os.MkdirAll that also syncs the parent of every
// directory it creates: a rollout synced into a new day directory is lost
// with it on a power cut unless the directory's own entry is durable.
func mkdirAllSynced(dir string) error {
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirAllSynced(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		if fi, serr := os.Stat(dir); serr != nil || !fi.IsDir() {
			return err
		}
	}
	// Also when another writer made it first: it may not have synced yet.
	return syncDir(parent)
}

// syncDir makes dir's entries durable (a variable, so that tests can see
// which directories are synced).
var syncDir = func(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("store: syncing %s: %w", dir, err)
	}
	return nil
}
