package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/codexd/codexd/agent"
)

// Archive moves the rollout to archived_sessions/, keeping its name, as
// Codex does. A thread with an open writer in this store may be archived:
// the writer's descriptor follows the file, so its appends land in the
// archived rollout. A thread whose rollout another process holds (its
// lock, as Resume and SetName see it) is not moved: ErrThreadBusy.
func (s *Local) Archive(ctx context.Context, id string) error {
	_, err := s.move(ctx, id, true)
	return err
}

// Unarchive moves the rollout back to its day directory under sessions/
// (from the time in its name) and reports the thread; like Archive, it
// does not move a rollout another process holds.
func (s *Local) Unarchive(ctx context.Context, id string) (agent.ThreadInfo, error) {
	return s.move(ctx, id, false)
}

func (s *Local) move(ctx context.Context, id string, archive bool) (agent.ThreadInfo, error) {
	id, err := lookupID(id)
	if err != nil {
		return agent.ThreadInfo{}, err
	}
	w, release, err := s.reserve(id)
	if err != nil {
		return agent.ThreadInfo{}, err
	}
	if release != nil {
		defer release()
	}
	// Readers wait while the file moves (moving before w.mu, as they take
	// them).
	s.moving.Lock()
	moving := true
	defer func() {
		if moving {
			s.moving.Unlock()
		}
	}()
	if w != nil {
		// Hold the writer still while its file moves.
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.f == nil {
			return agent.ThreadInfo{}, ErrNotMaterialized
		}
	}
	path, err := s.locate(ctx, id)
	if err != nil {
		return agent.ThreadInfo{}, err
	}
	// With no writer here, another process may have one: its lock (the
	// one Resume and SetName respect) is taken for as long as the file
	// moves and the move is recorded, so a rollout another process appends
	// to is never moved under it.
	var detached *os.File
	if w == nil {
		if detached, err = lockedRollout(id, path); err != nil {
			return agent.ThreadInfo{}, fmt.Errorf("store: cannot move the rollout of %s: %w", id, err)
		}
		defer detached.Close()
	}
	var dst string
	if archive {
		dst = filepath.Join(s.home, archivedDir, filepath.Base(path))
	} else {
		var created time.Time
		if w != nil {
			created = w.meta.CreatedAt
		} else if r, ok, _ := s.ix.get(ctx, id); ok {
			created = r.info.CreatedAt
		}
		dst = unarchivedPath(s.home, path, created)
	}
	moved := isArchivedPath(s.home, path) != archive
	if !moved {
		dst = path // already where it belongs
	} else if err := moveFile(path, dst); err != nil {
		return agent.ThreadInfo{}, err
	} else if w != nil {
		w.path = dst
	}
	s.moving.Unlock()
	moving = false
	if moved {
		s.codex.moved(id, dst, archive, time.Now())
	}
	if moved && !archive {
		// Coming back counts as an update (Codex bumps updated_at too); a
		// record says so, so a rebuilt index agrees.
		back := []Record{{store: storeUnarchived}}
		if w != nil {
			err = w.append(back)
			if err == nil {
				err = w.sync()
			}
		} else {
			err = s.appendLocked(ctx, id, detached, dst, back...)
		}
		if err != nil {
			return agent.ThreadInfo{}, err
		}
	}
	fi, err := os.Stat(dst)
	if err != nil {
		return agent.ThreadInfo{}, notFoundIfMissing(id, err)
	}
	// Re-index from the file: the row then says exactly what a rescan
	// would (a writer's latest records are already written through).
	r, err := s.indexFile(ctx, dst, fi, false)
	if err != nil {
		return agent.ThreadInfo{}, readError(id, err)
	}
	return r.info, nil
}

// moveFile renames src to dst, never over an existing file, and makes the
// rename durable in both directories.
func moveFile(src, dst string) error {
	if err := mkdirAllSynced(filepath.Dir(dst)); err != nil {
		return err
	}
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("store: %s already exists", dst)
	}
	if err := os.Rename(src, dst); err != nil {
		return fmt.Errorf("store: moving the rollout: %w", err)
	}
	if err := syncDir(filepath.Dir(dst)); err != nil {
		return err
	}
	return syncDir(filepath.Dir(src))
}
