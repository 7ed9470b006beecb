package appserver

import (
	"maps"
	"slices"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/jsonrpc"
)

// serverRequest is a question of the core (an approval, user input) put to
// the subscribers of its thread. All fields but req are guarded by the
// thread's mu.
//
// Invariant: while unresolved, it is in thread.st.requests and each
// recipient knows it by the id in recipients (in its session's table).
// Resolving it (first answer, turn boundary, no subscriber left) removes it
// from both, exactly once, and tells every recipient with
// serverRequest/resolved; at most one decision reaches the core.
type serverRequest struct {
	thread     *thread
	turnID     string
	kind       requestKind
	callID     string
	approvalID string
	req        *outRequest
	recipients map[*session]int64
	// mcpServer and mcpTool name the tool of an MCP tool approval.
	mcpServer, mcpTool string
	resolved           bool
}

type requestKind uint8

const (
	kindExec requestKind = iota
	kindPatch
	kindInput
	kindMCPApproval
	kindMCPElicitation
)

func (t *thread) execApprovalLocked(ev agent.Event, m agent.ExecApprovalRequest, out *outbox) {
	p := appproto.CommandExecutionRequestApprovalParams{
		Kind: "command", ThreadID: t.id, TurnID: ev.TurnID, ItemID: m.CallID, ApprovalID: optString(m.ApprovalID),
		Reason: optString(m.Reason), StartedAtMs: ev.Time.UnixMilli(), EnvironmentID: ptr("local"),
		Command: optString(m.Command), Cwd: optString(m.Cwd), CommandActions: wireActions(m.Actions),
		ProposedExecpolicyAmendment: m.ProposedAmendment,
	}
	for _, d := range m.Decisions {
		p.AvailableDecisions = append(p.AvailableDecisions, appproto.CommandApprovalDecision{Decision: string(d)})
	}
	if len(m.ProposedAmendment) > 0 && slices.Contains(m.Decisions, agent.Accept) {
		// Codex offers the amendment next to a plain accept.
		i := slices.Index(m.Decisions, agent.Accept) + 1
		p.AvailableDecisions = slices.Insert(p.AvailableDecisions, i, appproto.CommandApprovalDecision{
			Decision: appproto.DecisionAcceptWithAmendment, Amendment: m.ProposedAmendment})
	}
	t.issueLocked(&serverRequest{thread: t, turnID: ev.TurnID, kind: kindExec, callID: m.CallID, approvalID: m.ApprovalID,
		req: &outRequest{method: appproto.CommandExecutionRequestApproval.Name(), params: p}}, out)
}

func (t *thread) patchApprovalLocked(ev agent.Event, m agent.PatchApprovalRequest, out *outbox) {
	p := appproto.FileChangeRequestApprovalParams{ThreadID: t.id, TurnID: ev.TurnID, ItemID: m.CallID,
		StartedAtMs: ev.Time.UnixMilli(), Reason: optString(m.Reason), GrantRoot: optString(m.GrantRoot)}
	t.issueLocked(&serverRequest{thread: t, turnID: ev.TurnID, kind: kindPatch, callID: m.CallID,
		req: &outRequest{method: appproto.FileChangeRequestApproval.Name(), params: p}}, out)
}

func (t *thread) userInputLocked(ev agent.Event, m agent.UserInputRequest, out *outbox) {
	qs := make([]appproto.ToolRequestUserInputQuestion, len(m.Questions))
	for i, q := range m.Questions {
		wq := appproto.ToolRequestUserInputQuestion{ID: q.ID, Header: q.Header, Question: q.Question, IsOther: q.IsOther, IsSecret: q.IsSecret}
		if q.Options != nil {
			opts := make([]appproto.ToolRequestUserInputOption, len(q.Options))
			for j, o := range q.Options {
				opts[j] = appproto.ToolRequestUserInputOption{Label: o.Label, Description: o.Description}
			}
			wq.Options = &opts
		}
		qs[i] = wq
	}
	p := appproto.ToolRequestUserInputParams{ThreadID: t.id, TurnID: ev.TurnID, ItemID: m.CallID, Questions: qs, IsBlocking: true}
	t.issueLocked(&serverRequest{thread: t, turnID: ev.TurnID, kind: kindInput, callID: m.CallID,
		req: &outRequest{method: appproto.ToolRequestUserInput.Name(), params: p}}, out)
}

// issueLocked puts r to every subscriber. With none to answer it, it is
// cancelled at once and the core told, so that no waiter is stranded.
func (t *thread) issueLocked(r *serverRequest, out *outbox) {
	r.recipients = make(map[*session]int64, len(t.st.subscribers))
	t.st.requests = append(t.st.requests, r)
	t.refreshFlagsLocked(out)
	for _, s := range t.st.subscribers {
		t.sendRequestLocked(r, s, out)
	}
	if len(r.recipients) == 0 {
		t.cancelLocked(r, out)
	}
}

func (t *thread) sendRequestLocked(r *serverRequest, s *session, out *outbox) {
	if id, ok := s.issue(r); ok {
		r.recipients[s] = id
		out.request(s, id, r.req)
	}
}

// replayLocked sends the pending requests to a new subscriber, as Codex
// does on thread/resume.
func (t *thread) replayLocked(s *session, out *outbox) {
	for _, r := range t.st.requests {
		if _, ok := r.recipients[s]; !ok {
			t.sendRequestLocked(r, s, out)
		}
	}
}

// refreshFlagsLocked keeps the active status's flags in step with the
// pending requests.
func (t *thread) refreshFlagsLocked(out *outbox) {
	if t.st.active == nil || t.st.status.Type != appproto.StatusActive {
		return
	}
	var approval, input bool
	for _, r := range t.st.requests {
		if r.kind == kindInput {
			input = true
		} else {
			approval = true
		}
	}
	flags := []string{}
	if approval {
		flags = append(flags, appproto.FlagWaitingOnApproval)
	}
	if input {
		flags = append(flags, appproto.FlagWaitingOnUserInput)
	}
	t.setStatusLocked(appproto.ThreadStatus{Type: appproto.StatusActive, ActiveFlags: flags}, out)
}

// resolveLocked takes r out of the pending set and tells every recipient.
// It reports false if r was resolved already.
func (t *thread) resolveLocked(r *serverRequest, out *outbox) bool {
	if r.resolved {
		return false
	}
	r.resolved = true
	if i := slices.Index(t.st.requests, r); i >= 0 {
		t.st.requests = slices.Delete(t.st.requests, i, i+1)
	}
	sessions := slices.Collect(maps.Keys(r.recipients))
	sortSessions(sessions)
	for _, s := range sessions {
		id := r.recipients[s]
		s.forget(id)
		out.note(s, newNote(appproto.ServerRequestResolved.Name(),
			appproto.ServerRequestResolvedNotification{ThreadID: t.id, RequestID: jsonrpc.Int64ID(id)}))
	}
	return true
}

// withdrawLocked resolves r without telling the core anything: its turn
// is over and the core has dropped its waiter.
func (t *thread) withdrawLocked(r *serverRequest, out *outbox) {
	t.resolveLocked(r, out)
}

// withdrawAllLocked withdraws every pending request (a turn boundary).
func (t *thread) withdrawAllLocked(out *outbox) {
	for _, r := range slices.Clone(t.st.requests) {
		t.withdrawLocked(r, out)
	}
}

// cancelLocked resolves r for want of anyone to answer it, and tells the
// core: a command or change is cancelled (which interrupts the turn),
// questions get no answers.
func (t *thread) cancelLocked(r *serverRequest, out *outbox) {
	if !t.resolveLocked(r, out) {
		return
	}
	var op agent.Op
	switch r.kind {
	case kindExec:
		op = agent.ExecDecision{CallID: r.callID, ApprovalID: r.approvalID, Decision: agent.Cancel}
	case kindPatch:
		op = agent.PatchDecision{CallID: r.callID, Decision: agent.Cancel}
	case kindInput:
		op = agent.UserInputAnswer{CallID: r.callID, Answers: map[string][]string{}}
	case kindMCPApproval:
		op = agent.MCPToolApprovalDecision{CallID: r.callID, Decision: agent.Cancel}
	case kindMCPElicitation:
		op = agent.MCPElicitationAnswer{ID: r.callID, Result: agent.MCPElicitationResult{Action: appproto.ElicitationDecline}}
	}
	t.submitDecisionLocked(op)
	t.refreshFlagsLocked(out)
}

// orphanedRequestsLocked forgets sess as a recipient; when no subscriber
// is left, the pending requests are cancelled.
func (t *thread) orphanedRequestsLocked(sess *session, out *outbox) {
	for _, r := range t.st.requests {
		delete(r.recipients, sess)
	}
	if len(t.st.subscribers) > 0 {
		return
	}
	for _, r := range slices.Clone(t.st.requests) {
		t.cancelLocked(r, out)
	}
}

func (t *thread) submitDecisionLocked(op agent.Op) {
	if _, err := t.th.Submit(background, op); err != nil {
		// The core dropped the waiter already (its turn ended): nothing to do.
		t.srv.log.Debug("app-server: decision not taken", "thread", t.id, "err", err)
	}
}

// answer takes a client's answer to the server request it knows as id.
// It runs on the connection's reader and never blocks: the thread's
// listener resolves the request in order with the thread's events.
func (s *Server) answer(sess *session, id int64, result any, rerr *jsonrpc.Error) {
	r := sess.take(id)
	if r == nil {
		// Answered already (another client won), withdrawn, or never sent.
		s.log.Debug("app-server: answer to no pending server request", "id", id)
		return
	}
	r.thread.post(cmdAnswer{r: r, result: result, rerr: rerr})
}

// cmdAnswer resolves a server request with a client's answer; the first
// answer wins.
type cmdAnswer struct {
	r      *serverRequest
	result any // jsontext.Value from a JSON client, a typed value in process
	rerr   *jsonrpc.Error
}

func (c cmdAnswer) run(t *thread, out *outbox) {
	r := c.r
	if !t.resolveLocked(r, out) {
		return
	}
	if r.kind == kindMCPApproval && c.rerr == nil && mcpPersistAlways(c.result) {
		// Before the call runs, as in Codex; a failure leaves the
		// approval to the session (the decision below).
		if err := t.srv.persistMCPToolApproval(r.mcpServer, r.mcpTool); err != nil {
			t.srv.log.Warn("app-server: failed to persist MCP tool approval", "server", r.mcpServer, "tool", r.mcpTool, "err", err)
		}
	}
	t.submitDecisionLocked(decision(r, c.result, c.rerr))
	t.refreshFlagsLocked(out)
}

// decision maps a client's answer onto the core's decision. An error
// answer, or one that does not decode, fails the request: the command is
// denied and its item fails; questions get no answers.
func decision(r *serverRequest, result any, rerr *jsonrpc.Error) agent.Op {
	switch r.kind {
	case kindExec:
		op := agent.ExecDecision{CallID: r.callID, ApprovalID: r.approvalID, Decision: agent.RequestFailed}
		resp, ok := typed(result, appproto.CommandExecutionRequestApproval.DecodeResponse)
		if rerr != nil || !ok {
			return op
		}
		switch d := resp.Decision; d.Decision {
		case appproto.DecisionAccept:
			op.Decision = agent.Accept
		case appproto.DecisionAcceptForSession:
			op.Decision = agent.AcceptForSession
		case appproto.DecisionAcceptWithAmendment:
			op.Decision, op.Amendment = agent.Accept, d.Amendment
		case appproto.DecisionApplyNetworkAmendment:
			op.Decision = agent.Accept
			if networkDenied(d.Network) {
				op.Decision = agent.Decline
			}
		case appproto.DecisionDecline:
			op.Decision = agent.Decline
		case appproto.DecisionCancel:
			op.Decision = agent.Cancel
		}
		return op
	case kindPatch:
		op := agent.PatchDecision{CallID: r.callID, Decision: agent.RequestFailed}
		resp, ok := typed(result, appproto.FileChangeRequestApproval.DecodeResponse)
		if rerr != nil || !ok {
			return op
		}
		switch resp.Decision {
		case appproto.DecisionAccept:
			op.Decision = agent.Accept
		case appproto.DecisionAcceptForSession:
			op.Decision = agent.AcceptForSession
		case appproto.DecisionDecline:
			op.Decision = agent.Decline
		case appproto.DecisionCancel:
			op.Decision = agent.Cancel
		}
		return op
	case kindMCPApproval:
		resp, ok := typed(result, appproto.McpServerElicitationRequest.DecodeResponse)
		return mcpApprovalDecision(r, resp, ok && rerr == nil)
	case kindMCPElicitation:
		resp, ok := typed(result, appproto.McpServerElicitationRequest.DecodeResponse)
		return mcpElicitationAnswer(r, resp, ok && rerr == nil)
	}
	op := agent.UserInputAnswer{CallID: r.callID, Answers: map[string][]string{}}
	resp, ok := typed(result, appproto.ToolRequestUserInput.DecodeResponse)
	if rerr != nil || !ok {
		return op
	}
	for q, a := range resp.Answers {
		op.Answers[q] = a.Answers
	}
	return op
}

// typed reads an answer: a JSON client's raw result, or an in-process
// client's value (or pointer) of the response type.
func typed[R any](result any, decode func(jsontext.Value) (R, error)) (R, bool) {
	switch v := result.(type) {
	case R:
		return v, true
	case *R:
		if v != nil {
			return *v, true
		}
	case jsontext.Value:
		r, err := decode(v)
		return r, err == nil
	}
	var zero R
	return zero, false
}

func networkDenied(raw jsontext.Value) bool {
	var w struct {
		NetworkPolicyAmendment struct {
			Action string `json:"action"`
		} `json:"network_policy_amendment"`
	}
	return json.Unmarshal(raw, &w) == nil && w.NetworkPolicyAmendment.Action == "deny"
}
