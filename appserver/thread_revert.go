package appserver

import (
	"context"
	"slices"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
)

// threadReverter is a core that can cut a stored thread's history
// (core.Core and agenttest.Core are).
type threadReverter interface {
	RevertThread(ctx context.Context, id, beforeTurnID string) error
}

func registerThreadRevert(s *Server) {
	register(s, appproto.ThreadRevert, s.threadRevert)
	threadScoped(s, appproto.MethodThreadRevert)
}

// threadRevert replaces a loaded thread's stored history with the turns
// before beforeTurnId, as Codex 0.169's thread/revert: files are left as
// they are. codexd unloads the thread, cuts its rollout and loads it
// again, so the model's next request holds only the kept turns; the
// thread's subscribers stay subscribed. Its connections see it notLoaded,
// then idle, then the reload's warnings; then the answer, and
// thread/reverted goes to every connection.
func (s *Server) threadRevert(ctx context.Context, c *call, p appproto.ThreadRevertParams) (appproto.ThreadRevertResponse, error) {
	var none appproto.ThreadRevertResponse
	id, err := appproto.ParseThreadID(p.ThreadID)
	if err != nil {
		return none, threadIDError(err)
	}
	rev, ok := s.core.(threadReverter)
	if !ok {
		return none, internalError("this core cannot revert threads")
	}
	t := s.thread(id)
	if t == nil {
		return none, invalidRequest("thread not found: " + id)
	}
	t.mu.Lock()
	found := false
	for _, h := range t.st.history {
		found = found || h.Turn.ID == p.BeforeTurnID
	}
	active, ephemeral := t.st.active != nil, t.st.info.Ephemeral
	subscribers := slices.Clone(t.st.subscribers)
	var reload agent.Overrides
	if t.st.settings.ServiceTier == "" {
		// Codex's reload restores the thread's settings, and a service
		// tier it had none of is restored, and recorded, as "default".
		reload.ServiceTier = ptr("default")
	}
	t.mu.Unlock()
	switch {
	case !found:
		return none, invalidRequest("turn not found: " + p.BeforeTurnID)
	case ephemeral:
		return none, invalidRequest("thread is not persisted and cannot be reverted: " + id)
	case active:
		return none, invalidRequest("cannot revert thread " + id + " while a turn is running")
	}
	t.shutdown()
	if err := rev.RevertThread(ctx, id, p.BeforeTurnID); err != nil {
		return none, coreError(err)
	}
	l, warnings, err := s.resumeWarned(ctx, id, reload)
	if err != nil {
		return none, coreError(err)
	}
	nt, fresh := s.loadThread(l)
	if nt == nil {
		return none, internalError("server is shutting down")
	}
	for _, sess := range subscribers {
		nt.subscribeLocked(sess)
	}
	// As Codex: the reloaded thread is idle again, then the reload's
	// warnings, then the answer and thread/reverted.
	var out outbox
	if fresh {
		nt.st.status = appproto.ThreadStatus{Type: appproto.StatusNotLoaded}
		nt.setStatusLocked(appproto.ThreadStatus{Type: appproto.StatusIdle}, &out)
	}
	nt.warnLocked(&out, warnings)
	out.flush()
	resp := appproto.ThreadRevertResponse{Thread: nt.wireLocked(false)}
	resp.Thread.Turns = []appproto.Turn{}
	s.answerThenAll(c, resp, newNote(appproto.ThreadReverted.Name(), appproto.ThreadIDNotification{ThreadID: id}))
	nt.mu.Unlock()
	return resp, errDeferred
}
