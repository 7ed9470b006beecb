package core

import (
	"context"

	"github.com/codexd/codexd/agent"
)

// DeleteThread removes a stored thread: its rollout, live or archived,
// and its index rows. A loaded thread is shut down first and waited for,
// so that its writer is closed before the file goes.
func (c *Core) DeleteThread(ctx context.Context, id string) error {
	if err := c.unloadForStore(ctx, id); err != nil {
		return err
	}
	return c.cfg.Store.Delete(ctx, id)
}

// unloadForStore shuts thread id down, if it is loaded, and waits until
// its writer is closed, so the store may rewrite or remove its rollout; it
// fails with ErrThreadNotFound when there is no store to change.
func (c *Core) unloadForStore(ctx context.Context, id string) error {
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
	return nil
}
