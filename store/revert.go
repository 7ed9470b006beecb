package store

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// ErrTurnNotFound is returned by Revert for a turn the rollout lacks.
var ErrTurnNotFound = fmt.Errorf("store: turn not found")

// Revert replaces a thread's rollout with the part before turn
// beforeTurnID: its meta line and every record before the turn's first.
// The file is replaced atomically and re-indexed. As Delete, it refuses a
// thread with an open writer here (ErrThreadBusy) or in another process.
func (s *Local) Revert(ctx context.Context, id, beforeTurnID string) error {
	id, release, err := s.reserveIdle(id)
	if err != nil {
		return err
	}
	defer release()
	path, err := s.locate(ctx, id)
	if err != nil {
		return err
	}
	f, err := lockedRollout(id, path)
	if err != nil {
		return fmt.Errorf("store: cannot revert the rollout of %s: %w", id, err)
	}
	defer f.Close()
	meta, err := bufio.NewReader(f).ReadBytes('\n')
	if err != nil && len(meta) == 0 {
		return readError(id, err)
	}
	var kept []byte
	ord, cut := int64(1), false
	_, _, err = s.read(ctx, id, func(b []byte, e *entry) {
		if e.TurnID == beforeTurnID {
			cut = true
		}
		if cut {
			return
		}
		kept = append(append(kept, withOrdinal(b, ord)...), '\n')
		ord++
	})
	if err != nil {
		return err
	}
	if !cut {
		return fmt.Errorf("%w: %s", ErrTurnNotFound, beforeTurnID)
	}
	out := append(bytes.TrimSuffix(meta, []byte{'\n'}), '\n')
	out = append(out, kept...)
	tmp, err := os.CreateTemp(filepath.Dir(path), ".revert-*.jsonl")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// Readers wait while the file is replaced (they take moving shared).
	s.moving.Lock()
	err = os.Rename(tmp.Name(), path)
	s.moving.Unlock()
	if err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return notFoundIfMissing(id, err)
	}
	if _, err := s.indexFile(ctx, path, fi, false); err != nil {
		return readError(id, err)
	}
	return nil
}

// Revert opens the store if needed and reverts the thread (Local.Revert).
func (l *Lazy) Revert(ctx context.Context, id, beforeTurnID string) error {
	s, err := l.get(ctx)
	if err != nil {
		return err
	}
	return s.Revert(ctx, id, beforeTurnID)
}
