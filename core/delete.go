package core

import (
	"context"

	"github.com/codexd/codexd/agent"
)

// DeleteThread removes a stored thread: its rollout, live or archived,
// and its index rows. A loaded thread is shut down first and waited for,
// so that its writer is closed before the file goes.
func (c *Core) DeleteThread(ctx context.Context, id string) error {
	if t := c.loaded(id); t != nil {
		_, _ = t.Submit(ctx, agent.Shutdown{})
		select {
		case <-t.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if c.cfg.Store == nil {
		return agent.ErrThreadNotFound
	}
	return c.cfg.Store.Delete(ctx, id)
}
