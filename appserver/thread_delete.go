package appserver

import (
	"context"
	"errors"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
)

// threadDeleter is a core that can delete stored threads (core.Core and
// agenttest.Core are).
type threadDeleter interface {
	DeleteThread(ctx context.Context, id string) error
}

func registerThreadDelete(s *Server) {
	register(s, appproto.ThreadDelete, s.threadDelete)
	threadScoped(s, appproto.MethodThreadDelete)
}

// threadDelete removes a thread's rollout and index entry as Codex 0.169
// does: a loaded thread is unloaded first (every connection sees it
// notLoaded), even one with no rollout yet; an ephemeral one cannot be
// deleted. The answer {} is followed by thread/deleted to everyone.
func (s *Server) threadDelete(ctx context.Context, c *call, p appproto.ThreadIDParams) (appproto.EmptyResponse, error) {
	var none appproto.EmptyResponse
	id, err := appproto.ParseThreadID(p.ThreadID)
	if err != nil {
		return none, threadIDError(err)
	}
	del, ok := s.core.(threadDeleter)
	if !ok {
		return none, internalError("this core cannot delete threads")
	}
	wasLoaded := false
	if t := s.thread(id); t != nil {
		t.mu.Lock()
		ephemeral := t.st.info.Ephemeral
		t.mu.Unlock()
		if ephemeral {
			return none, invalidRequest("thread is not persisted and cannot be deleted: " + id)
		}
		t.shutdown()
		wasLoaded = true
	}
	err = del.DeleteThread(ctx, id)
	switch {
	case errors.Is(err, agent.ErrThreadNotFound) && !wasLoaded:
		return none, invalidRequest("no rollout found for thread id " + id)
	case errors.Is(err, agent.ErrThreadNotFound):
		// A loaded thread with no rollout yet: unloading it was all.
	case err != nil:
		return none, coreError(err)
	}
	s.answerThenAll(c, none, newNote(appproto.ThreadDeleted.Name(), appproto.ThreadIDNotification{ThreadID: id}))
	return none, errDeferred
}
