package appserver

import (
	"context"
	"errors"
	"strings"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
)

// registerCompactReview binds thread/compact/start and review/start.
func registerCompactReview(s *Server) {
	register(s, appproto.ThreadCompactStart, s.threadCompactStart)
	register(s, appproto.ReviewStart, s.reviewStart)
	threadScoped(s, appproto.MethodThreadCompactStart, appproto.MethodReviewStart)
}

// threadCompactStart starts a compaction turn; a running turn is
// interrupted first, as in Codex. The empty answer precedes turn/started.
func (s *Server) threadCompactStart(ctx context.Context, c *call, p appproto.ThreadCompactStartParams) (appproto.ThreadCompactStartResponse, error) {
	t, err := s.loadedThread(p.ThreadID)
	if err != nil {
		return appproto.ThreadCompactStartResponse{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.st.unloaded {
		return appproto.ThreadCompactStartResponse{}, invalidRequest("thread not found: " + t.id)
	}
	if _, err := t.th.Submit(ctx, agent.Compact{}); err != nil {
		return appproto.ThreadCompactStartResponse{}, submitError("failed to start compaction: ", t.id, err)
	}
	c.respond(appproto.ThreadCompactStartResponse{}, nil)
	return appproto.ThreadCompactStartResponse{}, errDeferred
}

// reviewStart validates the target as Codex does and starts a review turn
// on the thread (delivery "inline", the only one).
func (s *Server) reviewStart(ctx context.Context, c *call, p appproto.ReviewStartParams) (appproto.ReviewStartResponse, error) {
	t, err := s.loadedThread(p.ThreadID)
	if err != nil {
		return appproto.ReviewStartResponse{}, err
	}
	if p.Delivery != nil && *p.Delivery != "inline" {
		return appproto.ReviewStartResponse{}, appproto.InvalidRequest("unknown variant `" + *p.Delivery + "`, expected `inline`")
	}
	target, err := reviewTarget(p.Target)
	if err != nil {
		return appproto.ReviewStartResponse{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.st.unloaded {
		return appproto.ReviewStartResponse{}, invalidRequest("thread not found: " + t.id)
	}
	turnID, err := t.th.Submit(ctx, agent.Review{Target: target})
	if err != nil {
		return appproto.ReviewStartResponse{}, submitError("failed to start review: ", t.id, err)
	}
	// As Codex answers: the turn carries the review's hint as its user
	// message (with the turn's id), and no root turn id.
	hint := appproto.UserMessageItem{Type: "userMessage", ID: turnID, Content: wireInputs([]agent.Input{{Type: "text", Text: target.Hint()}})}
	resp := appproto.ReviewStartResponse{ReviewThreadID: t.id, Turn: appproto.Turn{ID: turnID,
		Items: []appproto.ThreadItem{{UserMessage: &hint}}, ItemsView: appproto.ItemsNotLoaded, Status: appproto.TurnInProgress}}
	c.respond(resp, nil)
	return resp, errDeferred
}

// reviewTarget checks a target with Codex's messages: the variant's member
// is required and must not be blank.
func reviewTarget(w appproto.ReviewTarget) (agent.ReviewTarget, error) {
	out := agent.ReviewTarget{Type: w.Type}
	switch w.Type {
	case "uncommittedChanges":
	case "baseBranch":
		out.Branch = strings.TrimSpace(w.Branch)
		if out.Branch == "" {
			return out, invalidRequest("branch must not be empty")
		}
	case "commit":
		out.SHA = strings.TrimSpace(w.Sha)
		if out.SHA == "" {
			return out, invalidRequest("sha must not be empty")
		}
		if w.Title != nil {
			out.Title = strings.TrimSpace(*w.Title)
		}
	case "custom":
		out.Instructions = strings.TrimSpace(w.Instructions)
		if out.Instructions == "" {
			return out, invalidRequest("instructions must not be empty")
		}
	default:
		return out, appproto.InvalidRequest("unknown variant `" + w.Type + "`, expected one of `uncommittedChanges`, `baseBranch`, `commit`, `custom`")
	}
	return out, nil
}

// submitError maps what the core refuses a compaction or review with.
func submitError(prefix, threadID string, err error) error {
	var ns *agent.NotSteerableError
	switch {
	case errors.Is(err, agent.ErrThreadClosed):
		return invalidRequest("thread not found: " + threadID)
	case errors.As(err, &ns):
		return internalError(prefix + notSteerableDebug(ns))
	}
	return internalError(prefix + err.Error())
}

// notSteerableDebug is how Codex's turn/start names the refusal of input
// during a review or a compaction (the Debug form of its core error).
func notSteerableDebug(ns *agent.NotSteerableError) string {
	kind := "Review"
	if ns.TurnKind == "compact" {
		kind = "Compact"
	}
	return "ActiveTurnNotSteerable { turn_kind: " + kind + " }"
}

func asNotSteerable(err error) *agent.NotSteerableError {
	var ns *agent.NotSteerableError
	errors.As(err, &ns)
	return ns
}
