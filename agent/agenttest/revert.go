package agenttest

import (
	"context"
	"errors"

	"github.com/codexd/codexd/agent"
)

// ErrTurnNotFound is RevertThread's answer for a turn the thread lacks.
var ErrTurnNotFound = errors.New("agenttest: turn not found")

// RevertThread keeps the stored history before turn beforeTurnID,
// shutting the thread down if loaded (the caller resumes it).
func (c *Core) RevertThread(ctx context.Context, id, beforeTurnID string) error {
	c.mu.Lock()
	s := c.threads[id]
	if s == nil || s.info.Ephemeral {
		c.mu.Unlock()
		return agent.ErrThreadNotFound
	}
	th := s.loaded
	c.mu.Unlock()
	if th != nil {
		_, _ = th.Submit(ctx, agent.Shutdown{})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, turn := range s.history {
		if turn.ID == beforeTurnID {
			s.history = s.history[:i]
			s.loaded = nil
			return nil
		}
	}
	return ErrTurnNotFound
}
