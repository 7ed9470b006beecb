package core

import (
	"context"
	"errors"

	"github.com/codexd/codexd/store"
)

// ErrTurnNotFound is RevertThread's answer for a turn the thread lacks.
var ErrTurnNotFound = store.ErrTurnNotFound

// RevertThread keeps only the history before turn beforeTurnID in the
// thread's rollout. A loaded thread is shut down and waited for first;
// the caller loads it again (ResumeThread rebuilds it from the rollout, so
// the model then gets only the kept turns).
func (c *Core) RevertThread(ctx context.Context, id, beforeTurnID string) error {
	if err := c.unloadForStore(ctx, id); err != nil {
		return err
	}
	err := c.cfg.Store.Revert(ctx, id, beforeTurnID)
	if errors.Is(err, store.ErrTurnNotFound) {
		return ErrTurnNotFound
	}
	return err
}
