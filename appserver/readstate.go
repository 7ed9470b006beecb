package appserver

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
)

// Read state, as Codex 0.169 keeps it for IDEs' unread marks: one first
// unread position per thread, and a revision that guards the client's
// edits against results it has not seen.
//
//   - A turn that ends with a result worth the user's attention makes the
//     thread unread from that turn on, unless it already was unread from an
//     earlier position: a completed turn whose final answer is not empty
//     (and does not say <decision>DONT_NOTIFY</decision>), a failed turn, or
//     an interrupted one that had completed an answer. Each such turn takes
//     a new revision and goes to the thread's subscribers as
//     thread/readState/changed; a turn is published once.
//   - thread/readState/update marks the thread read (no position) or unread
//     from its start, if the client's expectedRevision is the current one;
//     otherwise it is refused with the current state in the error's data,
//     never retried for the client.
//   - Only threads a user drives have read state: not ephemeral ones, not
//     those of an unknown source, not those a client classified other than
//     "user" (the TUI's title job). A thread has it once it has a rollout
//     (its first turn); before any mark its revision is "initial:<id>".
//
// Codex keeps the receipts in its state database; codexd keeps them for
// the server's lifetime (README [read-state-memory]).
type readStates struct {
	mu sync.Mutex
	m  map[string]*readReceipt
}

type readReceipt struct {
	firstUnread   *string // nil: read; "": the thread's start; else a turn id
	revision      string
	lastPublished string // the last turn published, so that none is twice
}

// readEligible says whether a thread has read state, by what clients see
// of it.
func readEligible(info agent.ThreadInfo) bool {
	if info.Ephemeral || !info.Materialized {
		return false
	}
	if info.ThreadSource != "" && info.ThreadSource != "user" {
		return false
	}
	switch info.Source {
	case "", "unknown", "subagent", "internal":
		return false
	}
	return !strings.HasPrefix(info.Source, "subagent")
}

// snapshot is a thread's read state as thread/read and thread/list report
// it; nil when it has none.
func (r *readStates) snapshot(info agent.ThreadInfo) *appproto.ThreadReadState {
	if !readEligible(info) {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rs := wireReadState(info.ID, r.m[info.ID])
	return &rs
}

// list is thread/list's readStates: the eligible threads of a page.
func (r *readStates) list(infos []agent.ThreadInfo) map[string]appproto.ThreadReadState {
	out := make(map[string]appproto.ThreadReadState, len(infos))
	for _, info := range infos {
		if rs := r.snapshot(info); rs != nil {
			out[info.ID] = *rs
		}
	}
	return out
}

func wireReadState(id string, rc *readReceipt) appproto.ThreadReadState {
	if rc == nil {
		return appproto.ThreadReadState{FirstUnread: jsontext.Value("null"), Revision: "initial:" + id}
	}
	return appproto.ThreadReadState{FirstUnread: wireUnread(rc.firstUnread), Revision: rc.revision}
}

func wireUnread(p *string) jsontext.Value {
	switch {
	case p == nil:
		return jsontext.Value("null")
	case *p == "":
		return jsontext.Value(`{"type":"threadStart"}`)
	}
	b, _ := jsontext.AppendQuote(nil, *p)
	return jsontext.Value(`{"type":"turn","turnId":` + string(b) + `}`)
}

// publish records that turnID ended with a result for the user; it
// returns the new state, or false when nothing changed (the turn was
// published already).
func (r *readStates) publish(id, turnID string) (appproto.ThreadReadState, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = make(map[string]*readReceipt)
	}
	rc := r.m[id]
	if rc == nil {
		rc = &readReceipt{}
		r.m[id] = rc
	} else if rc.lastPublished == turnID {
		return appproto.ThreadReadState{}, false
	}
	if rc.firstUnread == nil {
		rc.firstUnread = ptr(turnID)
	}
	rc.revision = uuid.NewString()
	rc.lastPublished = turnID
	return wireReadState(id, rc), true
}

// errReadStateConflict is an update against a revision that is not the
// current one; state is the current one.
type errReadStateConflict struct{ state appproto.ThreadReadState }

func (errReadStateConflict) Error() string { return "read state changed" }

// update applies a client's mark if expected is the current revision.
func (r *readStates) update(id, expected string, read bool) (appproto.ThreadReadState, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = make(map[string]*readReceipt)
	}
	rc := r.m[id]
	if cur := wireReadState(id, rc); cur.Revision != expected {
		return appproto.ThreadReadState{}, errReadStateConflict{cur}
	}
	if rc == nil {
		rc = &readReceipt{}
		r.m[id] = rc
	}
	rc.firstUnread = nil
	if !read {
		rc.firstUnread = ptr("")
	}
	rc.revision = uuid.NewString()
	return wireReadState(id, rc), nil
}

// publishAttentionLocked runs when the active turn a ends: a result worth
// the user's attention makes the thread unread (see readStates), and its
// subscribers hear of it.
func (t *thread) publishAttentionLocked(a *activeTurn, m agent.TurnCompleted, out *outbox) {
	info := t.st.info
	info.Materialized = true // the turn that ends has been written
	if !readEligible(info) {
		return
	}
	var final *string
	if v := a.item(a.lastAgent); v != nil {
		if am, ok := v.item.(*agent.AgentMessage); ok {
			final = &am.Text
		}
	}
	failed := m.Status == agent.TurnStatusFailed || m.Error != nil
	var visible bool
	switch m.Status {
	case agent.TurnStatusInterrupted:
		visible = failed || final != nil
	default:
		switch {
		case failed:
			visible = true
		case final == nil, strings.Contains(*final, "<decision>DONT_NOTIFY</decision>"):
			visible = false
		default:
			visible = strings.TrimSpace(*final) != ""
		}
	}
	if !visible {
		return
	}
	if rs, changed := t.srv.reads.publish(t.id, a.id); changed {
		t.toSubscribersLocked(out, appproto.ThreadReadStateChanged.Name(),
			appproto.ThreadReadStateChangedNotification{ThreadID: t.id, ReadState: rs})
	}
}

// threadReadStateUpdate is thread/readState/update.
func (s *Server) threadReadStateUpdate(ctx context.Context, c *call, p appproto.ThreadReadStateUpdateParams) (appproto.ThreadReadStateUpdateResponse, error) {
	id, err := appproto.ParseThreadID(p.ThreadID)
	if err != nil {
		return appproto.ThreadReadStateUpdateResponse{}, invalidParams("invalid thread id: " + err.Error())
	}
	var read bool
	switch p.Operation.Type {
	case "read":
		read = true
	case "unread":
	default:
		return appproto.ThreadReadStateUpdateResponse{}, appproto.InvalidRequest(
			"Invalid request: unknown variant `" + p.Operation.Type + "`, expected `read` or `unread`")
	}
	unavailable := invalidRequest("thread read state unavailable")
	if t := s.thread(id); t != nil {
		// Under the thread's lock, so that the change and its
		// notification are ordered with the thread's own events; the
		// subscribers hear of it before the caller's answer, as in Codex.
		t.mu.Lock()
		if !t.st.unloaded {
			if !readEligible(t.st.info) {
				t.mu.Unlock()
				return appproto.ThreadReadStateUpdateResponse{}, unavailable
			}
			rs, err := s.reads.update(id, p.ExpectedRevision, read)
			if err != nil {
				t.mu.Unlock()
				return appproto.ThreadReadStateUpdateResponse{}, readStateError(err)
			}
			var out outbox
			t.toSubscribersLocked(&out, appproto.ThreadReadStateChanged.Name(),
				appproto.ThreadReadStateChangedNotification{ThreadID: t.id, ReadState: rs})
			resp := appproto.ThreadReadStateUpdateResponse{ReadState: rs}
			out.respond(c, resp, nil)
			t.mu.Unlock()
			out.flush()
			return resp, errDeferred
		}
		t.mu.Unlock()
	}
	info, _, err := s.core.ReadThread(ctx, id, false)
	if errors.Is(err, agent.ErrThreadNotFound) {
		return appproto.ThreadReadStateUpdateResponse{}, invalidRequest("thread not loaded: " + id)
	} else if err != nil {
		return appproto.ThreadReadStateUpdateResponse{}, coreError(err)
	}
	if !readEligible(info) {
		return appproto.ThreadReadStateUpdateResponse{}, unavailable
	}
	rs, err := s.reads.update(id, p.ExpectedRevision, read)
	if err != nil {
		return appproto.ThreadReadStateUpdateResponse{}, readStateError(err)
	}
	return appproto.ThreadReadStateUpdateResponse{ReadState: rs}, nil
}

func readStateError(err error) error {
	var conflict errReadStateConflict
	if !errors.As(err, &conflict) {
		return err
	}
	data, _ := json.Marshal(map[string]any{"reason": "readStateConflict", "readState": conflict.state}, json.Deterministic(true))
	e := invalidRequest("read state changed")
	e.Data = data
	return e
}
