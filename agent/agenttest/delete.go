package agenttest

import (
	"context"

	"github.com/codexd/codexd/agent"
)

// DeleteThread forgets a stored thread (shutting it down if loaded); an
// ephemeral or unknown one is agent.ErrThreadNotFound.
func (c *Core) DeleteThread(ctx context.Context, id string) error {
	c.mu.Lock()
	s := c.threads[id]
	if s == nil || s.info.Ephemeral {
		c.mu.Unlock()
		return agent.ErrThreadNotFound
	}
	delete(c.threads, id)
	th := s.loaded
	c.mu.Unlock()
	if th != nil {
		_, _ = th.Submit(ctx, agent.Shutdown{})
	}
	return nil
}
