package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// Delete removes a thread's rollout, live or archived, and its index rows
// (codexd's and Codex's), as Codex's thread/delete does. A thread with an
// open writer in this store is refused with ErrThreadBusy: its owner shuts
// it down first. So is a rollout another process holds (its lock).
func (s *Local) Delete(ctx context.Context, id string) error {
	id, release, err := s.reserveIdle(id)
	if err != nil {
		return err
	}
	defer release()
	s.moving.Lock()
	defer s.moving.Unlock()
	path, err := s.locate(ctx, id)
	if err != nil {
		return err
	}
	f, err := lockedRollout(id, path)
	if err != nil {
		return fmt.Errorf("store: cannot delete the rollout of %s: %w", id, err)
	}
	defer f.Close()
	if err := os.Remove(path); err != nil {
		return notFoundIfMissing(id, err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return err
	}
	if err := s.ix.remove(ctx, id); err != nil {
		// The rollout is gone, which is the truth; a stale row is dropped
		// by the next lookup that misses its file.
		s.log.Warn("store: removing a deleted thread's index row failed", "thread", id, "err", err)
	}
	s.codex.deleted(id)
	return nil
}

// deleted: the thread's rollout was removed; Codex's row goes too.
func (c *codexState) deleted(id string) {
	c.exec(`DELETE FROM threads WHERE id = ?`, id)
}

// Delete opens the store if needed and deletes the thread (Local.Delete).
func (l *Lazy) Delete(ctx context.Context, id string) error {
	s, err := l.get(ctx)
	if err != nil {
		return err
	}
	return s.Delete(ctx, id)
}

// reserveIdle reserves thread id for a change to its rollout that no
// writer of this store may see happen: one holding it open is refused with
// ErrThreadBusy. It returns the id in canonical form.
func (s *Local) reserveIdle(id string) (string, func(), error) {
	id, err := lookupID(id)
	if err != nil {
		return "", nil, err
	}
	w, release, err := s.reserve(id)
	if err != nil {
		return "", nil, err
	}
	if w != nil {
		return "", nil, ErrThreadBusy // an open writer: no reservation was made
	}
	return id, release, nil
}
