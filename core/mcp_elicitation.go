package core

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/codexd/codexd/agent"
)

var elicitSeq atomic.Uint64

// elicit puts an MCP server's elicitation to the thread's user, through
// the running turn: the turn emits MCPElicitationRequest and waits for the
// answer. Without a running turn there is no one to ask, and the server
// is declined; when the turn ends, or the server gives up (ctx), first,
// the server gets "cancel", and a server that gave up has its request
// withdrawn (MCPElicitationWithdrawn).
func (t *thread) elicit(ctx context.Context, e agent.MCPElicitation) agent.MCPElicitationResult {
	t.mu.Lock()
	var tr *turn
	if len(t.queue) > 0 && !t.queue[0].ending && t.queue[0].ctx.Err() == nil {
		tr = t.queue[0]
	}
	t.mu.Unlock()
	if tr == nil {
		return agent.MCPElicitationResult{Action: "decline"}
	}
	if r, decided := elicitationByPolicy(tr.settings, e); decided {
		return r
	}
	id := fmt.Sprintf("mcp-elicitation-%d", elicitSeq.Add(1))
	ch := tr.request(id)
	tr.emit(agent.MCPElicitationRequest{ID: id, Elicitation: e})
	select {
	case op := <-ch:
		a, _ := op.(agent.MCPElicitationAnswer)
		switch a.Result.Action {
		case "accept", "decline", "cancel":
			return a.Result
		}
		return agent.MCPElicitationResult{Action: "decline"}
	case <-tr.ctx.Done():
		tr.dropRequest(id)
	case <-ctx.Done():
		// The server gave up (notifications/cancelled): withdraw the
		// question now rather than at the turn's end, unless an answer
		// took it first.
		if tr.takeRequest(id) {
			tr.emit(agent.MCPElicitationWithdrawn{ID: id})
		}
	}
	return agent.MCPElicitationResult{Action: "cancel"}
}

// elicitationByPolicy answers an elicitation without asking when Codex
// 0.169's approval policy does: under never with full access (Codex's
// auto-approved MCP prompts) a form that asks for nothing is accepted
// (can_auto_accept_elicitation); otherwise never declines, and so does
// granular without mcp_elicitations (elicitation_is_rejected_by_policy).
func elicitationByPolicy(s agent.Settings, e agent.MCPElicitation) (agent.MCPElicitationResult, bool) {
	full := s.Sandbox.Mode == agent.SandboxDangerFullAccess || s.Sandbox.Mode == agent.SandboxExternal
	if s.Approval == agent.ApprovalNever && full && emptyForm(e) {
		return agent.MCPElicitationResult{Action: "accept", Content: map[string]any{}}, true
	}
	switch {
	case s.Approval == agent.ApprovalNever,
		s.Approval == agent.ApprovalGranular && (s.Granular == nil || !s.Granular.MCPElicitations):
		return agent.MCPElicitationResult{Action: "decline"}, true
	}
	return agent.MCPElicitationResult{}, false
}

// emptyForm reports whether e is a form whose schema has no properties.
func emptyForm(e agent.MCPElicitation) bool {
	if e.Mode != "form" {
		return false
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	return json.Unmarshal(e.RequestedSchema, &schema) == nil && len(schema.Properties) == 0
}
