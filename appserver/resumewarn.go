package appserver

import (
	"context"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
)

// warnedResumer is a core that can load a stored thread handing back the
// load's warnings rather than queueing them on the thread (core.Core is).
type warnedResumer interface {
	ResumeThreadWarned(ctx context.Context, id string, o agent.Overrides) (*agent.Loaded, []string, error)
}

// resumeWarned loads thread id as the core's ResumeThread; the warnings
// of the load come back when the core can give them (a core that cannot
// queues them on the thread, and they follow the caller's answer), so
// that thread/resume and thread/revert send them first, as Codex 0.169
// does.
func (s *Server) resumeWarned(ctx context.Context, id string, o agent.Overrides) (*agent.Loaded, []string, error) {
	if r, ok := s.core.(warnedResumer); ok {
		return r.ResumeThreadWarned(ctx, id, o)
	}
	l, err := s.core.ResumeThread(ctx, id, o)
	return l, nil, err
}

// warnLocked queues the warnings of a thread's load for its subscribers.
func (t *thread) warnLocked(out *outbox, warnings []string) {
	for _, w := range warnings {
		t.toSubscribersLocked(out, appproto.Warning.Name(), appproto.WarningNotification{ThreadID: ptr(t.id), Message: w})
	}
}
