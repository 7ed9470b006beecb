package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"time"

	"github.com/codexd/codexd/agent"
)

// Options configure a Local store. The zero value is the default.
type Options struct {
	// IndexPath is the SQLite index; empty means
	// $CODEX_HOME/codexd/threads.sqlite.
	IndexPath string
	// Logger receives the warnings (skipped lines, index repairs); nil
	// means slog.Default().
	Logger *slog.Logger
	// CodexItem, when set, lets codexd keep Codex's history projection
	// (thread_history_1.sqlite) up to date with what it appends to a
	// thread Codex has projected (codexhistory.go).
	CodexItem CodexItemFunc
}

// Local is the Store of one $CODEX_HOME on the local disk: rollouts in
// files, an embedded SQLite index, no server to run.
type Local struct {
	home string
	ix   *index
	log  *slog.Logger
	// codex keeps Codex's own indexes in step (codexstate.go).
	codex *codexState
	names codexNames
	// codexItem projects items as Codex's history projection holds them.
	codexItem CodexItemFunc

	// moving is held to rename a rollout (Archive, Unarchive), and shared
	// to find and open one, so that no reader looks where a file just was.
	// It is taken before any writer's mu.
	moving sync.RWMutex

	mu sync.Mutex
	// writers holds every thread with a writer in this store. A nil value
	// reserves the id while an operation that may move or open its file
	// (Resume, Fork, Archive, SetName...) is under way.
	writers map[string]*fileWriter
	closed  bool

	// testHookIndexRead, when a test sets it, runs in indexFile between
	// reading a rollout and recording it.
	testHookIndexRead func(path string)
}

var _ Store = (*Local)(nil)

// Open opens the store of codexHome: it opens (or rebuilds) the index and
// rescans the rollouts, so that the index knows every rollout on disk.
func Open(ctx context.Context, codexHome string, opts Options) (*Local, error) {
	home, err := filepath.Abs(codexHome)
	if err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	path := opts.IndexPath
	if path == "" {
		path = filepath.Join(home, indexDir, indexFile)
	}
	ix, fresh, err := openIndex(ctx, path, log)
	if err != nil {
		return nil, err
	}
	s := &Local{home: home, ix: ix, log: log, writers: map[string]*fileWriter{}, codex: &codexState{home: home, log: log}, codexItem: opts.CodexItem}
	start := time.Now()
	n, err := s.Rescan(ctx)
	if err != nil {
		ix.close()
		return nil, err
	}
	if n > 0 {
		log.Info("store: indexed rollouts", "home", home, "files", n, "fresh", fresh, "took", time.Since(start))
	}
	return s, nil
}

// Home is the $CODEX_HOME the store serves.
func (s *Local) Home() string { return s.home }

// reserve claims id for an operation. It returns the id's open writer if
// it has one (and claims nothing), or a release func once it is claimed.
// An id reserved by another operation is busy.
func (s *Local) reserve(id string) (w *fileWriter, release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, ErrClosed
	}
	if w, ok := s.writers[id]; ok {
		if w == nil {
			return nil, nil, ErrThreadBusy
		}
		return w, nil, nil
	}
	s.writers[id] = nil
	return nil, func() { s.release(id, nil) }, nil
}

// release forgets id's writer (or reservation) if it is still w.
func (s *Local) release(id string, w *fileWriter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.writers[id]; ok && cur == w {
		delete(s.writers, id)
	}
}

// adopt turns a reservation into an open writer.
func (s *Local) adopt(w *fileWriter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writers[w.meta.ID] = w
}

func (s *Local) Create(ctx context.Context, meta ThreadMeta) (Writer, error) {
	meta, err := s.newMeta(meta)
	if err != nil {
		return nil, err
	}
	w, release, err := s.reserve(meta.ID)
	if w != nil {
		err = ErrThreadExists
	}
	if err != nil {
		return nil, fmt.Errorf("store: create %s: %w", meta.ID, err)
	}
	if err := s.free(ctx, meta.ID); err != nil {
		release()
		return nil, fmt.Errorf("store: create %s: %w", meta.ID, err)
	}
	w = &fileWriter{st: s, meta: meta, path: rolloutPath(s.home, meta.CreatedAt, meta.ID), lc: lineCtx{thread: meta.ID, ordinal: 1}}
	w.sum.observe(&entry{Time: meta.CreatedAt, Meta: &w.meta})
	s.adopt(w)
	return w, nil
}

// free checks that no rollout, ours or another program's, has id. The
// disk decides: the index only answers faster.
func (s *Local) free(ctx context.Context, id string) error {
	_, ok, err := s.ix.get(ctx, id)
	if err != nil {
		s.log.Warn("store: index lookup failed; searching the rollout directories", "thread", id, "err", err)
	}
	if ok || s.findFile(id) != "" {
		return ErrThreadExists
	}
	return nil
}

// newMeta fills in a new thread's id and creation time.
func (s *Local) newMeta(meta ThreadMeta) (ThreadMeta, error) {
	now := time.Now()
	if meta.CreatedAt.IsZero() {
		meta.CreatedAt = now
	}
	meta.CreatedAt = meta.CreatedAt.UTC()
	if meta.ID == "" {
		meta.ID = newID()
		return meta, nil
	}
	id, err := canonicalID(meta.ID)
	meta.ID = id
	return meta, err
}

func (s *Local) Resume(ctx context.Context, id string) (*Thread, Writer, error) {
	id, err := lookupID(id)
	if err != nil {
		return nil, nil, err
	}
	w, release, err := s.reserve(id)
	if err != nil {
		return nil, nil, err
	}
	if w != nil {
		if !w.Materialized() {
			return nil, nil, ErrNotMaterialized
		}
		return nil, nil, ErrThreadBusy
	}
	defer release()
	path, err := s.locate(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, nil, notFoundIfMissing(id, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, nil, err
	}
	res, err := readRollout(ctx, f, path, s.log, nil)
	if err == nil && res.meta.ID != id {
		err = fmt.Errorf("store: %s holds thread %s", path, res.meta.ID)
	}
	if err != nil {
		f.Close()
		return nil, nil, readError(id, err)
	}
	dangling := res.finish()
	w = s.openedWriter(f, path, res)
	// Record what the replay concluded, so the file says it too: the turn
	// that was running when the process died was interrupted.
	if err := w.Append(seals(dangling)...); err != nil {
		f.Close()
		return nil, nil, err
	}
	s.adopt(w)
	th := res.thread(s.home, path)
	s.withCodexName(&th.Info)
	return th, w, nil
}

func (s *Local) Read(ctx context.Context, id string) (*Thread, error) {
	id, err := lookupID(id)
	if err != nil {
		return nil, err
	}
	res, path, err := s.read(ctx, id, nil)
	if err != nil {
		return nil, err
	}
	res.finish()
	th := res.thread(s.home, path)
	s.withCodexName(&th.Info)
	return th, nil
}

// read replays id's rollout. A thread with a writer here is read up to the
// end of its last whole line, so an append in progress is never half seen.
func (s *Local) read(ctx context.Context, id string, raw func([]byte, *entry)) (*readResult, string, error) {
	f, path, limit, err := s.openForRead(ctx, id)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	var rd io.Reader = f
	if limit >= 0 {
		rd = io.LimitReader(f, limit)
	}
	res, err := readRollout(ctx, rd, path, s.log, raw)
	if err != nil {
		return nil, "", readError(id, err)
	}
	return res, path, nil
}

// openForRead opens id's rollout and says how many bytes of it a reader
// may read (-1: all of it).
func (s *Local) openForRead(ctx context.Context, id string) (f *os.File, path string, limit int64, err error) {
	s.moving.RLock()
	defer s.moving.RUnlock()
	s.mu.Lock()
	w := s.writers[id]
	s.mu.Unlock()
	limit = -1
	if w != nil {
		var materialized bool
		path, limit, materialized = w.readable()
		if !materialized {
			return nil, "", 0, ErrNotMaterialized
		}
	} else if path, err = s.locate(ctx, id); err != nil {
		return nil, "", 0, err
	}
	f, err = os.Open(path)
	if err != nil {
		return nil, "", 0, notFoundIfMissing(id, err)
	}
	return f, path, limit, nil
}

func (s *Local) Info(ctx context.Context, id string) (agent.ThreadInfo, error) {
	id, err := lookupID(id)
	if err != nil {
		return agent.ThreadInfo{}, err
	}
	s.mu.Lock()
	w := s.writers[id]
	s.mu.Unlock()
	if w != nil && !w.Materialized() {
		return agent.ThreadInfo{}, ErrNotMaterialized
	}
	if r, ok, err := s.ix.get(ctx, id); err == nil && ok {
		s.withCodexName(&r.info)
		return r.info, nil
	}
	// The index cannot say: the rollout can.
	th, err := s.Read(ctx, id)
	if err != nil {
		return agent.ThreadInfo{}, err
	}
	return th.Info, nil
}

func (s *Local) List(ctx context.Context, q agent.ThreadQuery) (agent.ThreadPage, error) {
	p, err := s.ix.list(ctx, q)
	for i := range p.Threads {
		s.withCodexName(&p.Threads[i])
	}
	return p, err
}

func (s *Local) SetName(ctx context.Context, id, name string) error {
	id, err := lookupID(id)
	if err != nil {
		return err
	}
	w, release, err := s.reserve(id)
	if err != nil {
		return err
	}
	rec := Record{Time: time.Now(), Event: agent.ThreadNameUpdated{Name: name}}
	if w != nil {
		if err := w.Append(rec); err != nil {
			return err
		}
		if err := w.Sync(); err != nil {
			return err
		}
		s.codex.named(id, name, rec.Time)
		return nil
	}
	defer release()
	path, err := s.locate(ctx, id)
	if err != nil {
		return err
	}
	if err := s.appendDetached(ctx, id, path, rec); err != nil {
		return err
	}
	s.codex.named(id, name, rec.Time)
	return nil
}

// appendDetached appends to a rollout that has no writer here (id is
// reserved): it locks the file, replays it to know its state, appends,
// syncs (which updates the index) and lets go.
func (s *Local) appendDetached(ctx context.Context, id, path string, recs ...Record) error {
	f, err := lockedRollout(id, path)
	if err != nil {
		return err
	}
	err = s.appendLocked(ctx, id, f, path, recs...)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// lockedRollout opens id's rollout at path for appending and takes its
// lock; ErrThreadBusy if another process holds it.
func lockedRollout(id, path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, notFoundIfMissing(id, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// appendLocked appends to the rollout f (opened by lockedRollout, now at
// path) after replaying it to know its state, and syncs, which updates the
// index. It reads f from its start and leaves f open.
func (s *Local) appendLocked(ctx context.Context, id string, f *os.File, path string, recs ...Record) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	res, err := readRollout(ctx, f, path, s.log, nil)
	if err != nil {
		return readError(id, err)
	}
	w := s.openedWriter(f, path, res)
	err = w.append(recs)
	if err == nil {
		err = w.sync()
	}
	return err
}

func (s *Local) Fork(ctx context.Context, id string, meta ThreadMeta) (*Thread, Writer, error) {
	src, err := lookupID(id)
	if err != nil {
		return nil, nil, err
	}
	meta.ForkedFromID = src
	if meta, err = s.newMeta(meta); err != nil {
		return nil, nil, err
	}
	w, release, err := s.reserve(meta.ID)
	if w != nil {
		err = ErrThreadExists
	}
	if err != nil {
		return nil, nil, fmt.Errorf("store: fork into %s: %w", meta.ID, err)
	}
	defer release()
	if err := s.free(ctx, meta.ID); err != nil {
		return nil, nil, fmt.Errorf("store: fork into %s: %w", meta.ID, err)
	}

	// Every record that reads back is copied verbatim: the new rollout is
	// the old one under a new meta line.
	var copied []byte
	var entries []entry
	ord := int64(1)
	res, _, err := s.read(ctx, src, func(b []byte, e *entry) {
		// Renumbered: the lines of the source that are not copied (Codex's
		// world_state...) leave no gaps.
		copied = append(append(copied, withOrdinal(b, ord)...), '\n')
		ord++
		entries = append(entries, *e)
	})
	if err != nil {
		return nil, nil, err
	}
	dangling := res.finish()
	if reflect.DeepEqual(meta.Settings, agent.Settings{}) {
		meta.Settings = res.settings
	}
	w = &fileWriter{st: s, meta: meta, path: rolloutPath(s.home, meta.CreatedAt, meta.ID), lc: lineCtx{thread: meta.ID, ordinal: ord}}
	fork := newReplay()
	fork.apply(&entry{Time: meta.CreatedAt, Meta: &w.meta})
	w.sum = fork.summary
	for i := range entries {
		fork.apply(&entries[i])
		w.sum.observe(&entries[i])
	}
	w.pending = copied
	var tail []Record
	if !reflect.DeepEqual(fork.settings, meta.Settings) {
		// The copied records changed the settings: the new meta's win.
		tail = append(tail, Record{Time: meta.CreatedAt, Event: agent.SettingsUpdated{Settings: meta.Settings}})
	}
	tail = append(tail, seals(dangling)...)
	for i := range tail {
		e := entry{Time: tail[i].Time, TurnID: tail[i].TurnID, Event: tail[i].Event}
		fork.apply(&e)
	}
	if err := w.Append(tail...); err != nil {
		return nil, nil, err
	}
	if w.f == nil && w.sum.materialized {
		if err := w.materialize(); err != nil {
			return nil, nil, err
		}
	}
	if err := w.Sync(); err != nil {
		w.Close()
		return nil, nil, err
	}
	fork.finish()
	s.adopt(w)
	return fork.thread(s.home, w.path), w, nil
}

// openedWriter is the writer of an existing rollout, open (and locked) as
// f, that res read to its end.
func (s *Local) openedWriter(f *os.File, path string, res *readResult) *fileWriter {
	return &fileWriter{
		st: s, meta: *res.meta, path: path, f: f, sum: res.summary, dirSynced: true,
		end: res.length, size: res.length - res.fragment, torn: res.tornTail,
		lc: lineCtx{thread: res.meta.ID, ordinal: max(res.ordinal, 1)},
	}
}

// seals are the records that end turns a replay found dangling (their
// process died mid-turn) as interrupted.
func seals(dangling []agent.Turn) []Record {
	var out []Record
	for _, t := range dangling {
		out = append(out, Record{Time: t.CompletedAt, TurnID: t.ID,
			Event: agent.TurnCompleted{Status: agent.TurnStatusInterrupted, CompletedAt: t.CompletedAt}})
	}
	return out
}

// Close syncs and closes every open writer, then the index. Writers closed
// afterwards by their owners report nothing more.
func (s *Local) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	var open []*fileWriter
	for _, w := range s.writers {
		if w != nil {
			open = append(open, w)
		}
	}
	s.mu.Unlock()
	var errs []error
	for _, w := range open {
		errs = append(errs, w.Close())
	}
	errs = append(errs, s.ix.close(), s.codex.close())
	return errors.Join(errs...)
}

// lookupID canonicalizes an id to look up: one that is not a UUID names no
// thread.
func lookupID(id string) (string, error) {
	c, err := canonicalID(id)
	if err != nil {
		return "", fmt.Errorf("%w: %w", agent.ErrThreadNotFound, err)
	}
	return c, nil
}

func notFoundIfMissing(id string, err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: %s", agent.ErrThreadNotFound, id)
	}
	return err
}

func readError(id string, err error) error {
	if errors.Is(err, errForeign) {
		return fmt.Errorf("%w: %s (its rollout is not codexd's)", agent.ErrThreadNotFound, id)
	}
	return err
}
