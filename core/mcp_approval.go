package core

import (
	"encoding/json"
	"fmt"

	"github.com/codexd/codexd/agent"
)

// The outcomes of an MCP tool approval that stop the call, in Codex
// 0.169's words (the model and the mcpToolCall item's error get them).
const (
	mcpRejected      = "user rejected MCP tool call"
	mcpCancelled     = "user cancelled MCP tool call"
	mcpNeverApproves = "MCP tool call requires approval, but approval policy is never"
)

// mcpAnnotated reports whether the server gave the tool annotations (the
// read-only hint is always known when it did).
func mcpAnnotated(t *agent.MCPTool) bool { return t.ReadOnlyHint != nil }

// mcpHintsAskApproval is Codex 0.169's reading of a tool's hints: a
// destructive tool asks, a read-only one does not, and any other asks
// unless it says it is neither destructive nor open-world (a tool without
// annotations asks).
func mcpHintsAskApproval(t *agent.MCPTool) bool {
	if t.DestructiveHint != nil && *t.DestructiveHint {
		return true
	}
	if t.ReadOnlyHint != nil && *t.ReadOnlyHint {
		return false
	}
	return t.DestructiveHint == nil || *t.DestructiveHint || t.OpenWorldHint == nil || *t.OpenWorldHint
}

// mcpApprovalAsked decides, as Codex 0.169 does for a configured server,
// whether a call of t needs the user's approval under its approval mode:
// "approve" never asks, "prompt" always does, "writes" asks for all but a
// read-only tool, and "auto" (the default) follows the hints.
func mcpApprovalAsked(t *agent.MCPTool) bool {
	switch t.ApprovalMode {
	case "approve":
		return false
	case "prompt":
		return true
	case "writes":
		ro := t.ReadOnlyHint != nil && *t.ReadOnlyHint
		destructive := t.DestructiveHint != nil && *t.DestructiveHint
		return !ro || destructive
	}
	return mcpHintsAskApproval(t)
}

// mcpAutoMode reports whether t's mode is "auto", the only one under
// which an approval may be remembered for the session.
func mcpAutoMode(t *agent.MCPTool) bool { return t.ApprovalMode == "" || t.ApprovalMode == "auto" }

func mcpApprovalKey(t *agent.MCPTool) string { return t.Server + "\x00" + t.Name }

// approveMCPCall asks, when Codex would, whether a call of tool may run.
// It returns "" when the call may run, or the refusal the model and the
// item get; interrupted is true when the turn ended while it waited (the
// item is then left as Codex leaves it, without a completion).
func (tr *turn) approveMCPCall(callID string, tool *agent.MCPTool, args json.RawMessage) (refusal string, interrupted bool) {
	s := tr.settings
	fullAccess := s.Approval == agent.ApprovalNever &&
		(s.Sandbox.Mode == agent.SandboxDangerFullAccess || s.Sandbox.Mode == agent.SandboxExternal)
	if fullAccess || !mcpApprovalAsked(tool) {
		return "", false
	}
	t := tr.t
	remember := mcpAutoMode(tool)
	t.mu.Lock()
	approved := remember && t.approvedMCPTools[mcpApprovalKey(tool)]
	t.mu.Unlock()
	if approved {
		return "", false
	}
	if s.Approval == agent.ApprovalNever {
		return mcpNeverApproves, false
	}
	req := agent.MCPToolApprovalRequest{
		CallID: callID, Server: tool.Server, Tool: tool.Name, Title: tool.Title, Description: tool.Description,
		Message:   fmt.Sprintf("Allow the %s MCP server to run tool %q?", tool.Server, tool.Name),
		Arguments: args, Remember: remember,
	}
	if mcpAnnotated(tool) {
		req.ReadOnlyHint, req.DestructiveHint, req.IdempotentHint, req.OpenWorldHint =
			tool.ReadOnlyHint, tool.DestructiveHint, tool.IdempotentHint, tool.OpenWorldHint
	}
	ch := tr.request(callID)
	tr.emit(req)
	op, ok := tr.await(callID, ch)
	if !ok {
		return "", true
	}
	d, _ := op.(agent.MCPToolApprovalDecision)
	switch d.Decision {
	case agent.Accept:
		return "", false
	case agent.AcceptForSession:
		if remember {
			t.mu.Lock()
			if t.approvedMCPTools == nil {
				t.approvedMCPTools = map[string]bool{}
			}
			t.approvedMCPTools[mcpApprovalKey(tool)] = true
			t.mu.Unlock()
		}
		return "", false
	case agent.Cancel:
		return mcpCancelled, false
	}
	return mcpRejected, false
}
