package appserver

import (
	"cmp"
	"slices"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
)

// mcpApprovalMeta is the _meta of an MCP tool approval as Codex 0.169
// sends it, members in its order: the kind, the remember options, and
// what the client shows of the tool and the call.
type mcpApprovalMeta struct {
	Kind              string               `json:"codex_approval_kind"`
	Persist           []string             `json:"persist,omitzero"`
	ToolName          string               `json:"tool_name"`
	ToolAnnotations   *mcpToolAnnotations  `json:"tool_annotations,omitzero"`
	ToolTitle         string               `json:"tool_title,omitzero"`
	ToolDescription   string               `json:"tool_description,omitzero"`
	ToolParams        jsontext.Value       `json:"tool_params,omitzero"`
	ToolParamsDisplay *[]mcpParamToDisplay `json:"tool_params_display,omitzero"`
}

// mcpToolAnnotations are the tool's hints in MCP's ToolAnnotations order.
type mcpToolAnnotations struct {
	ReadOnlyHint    *bool `json:"readOnlyHint,omitzero"`
	DestructiveHint *bool `json:"destructiveHint,omitzero"`
	IdempotentHint  *bool `json:"idempotentHint,omitzero"`
	OpenWorldHint   *bool `json:"openWorldHint,omitzero"`
}

type mcpParamToDisplay struct {
	Name        string         `json:"name"`
	Value       jsontext.Value `json:"value"`
	DisplayName string         `json:"display_name"`
}

// emptyFormSchema is the form of an approval: nothing to fill in.
var emptyFormSchema = jsontext.Value(`{"type":"object","properties":{}}`)

func (t *thread) mcpApprovalLocked(ev agent.Event, m agent.MCPToolApprovalRequest, out *outbox) {
	meta := mcpApprovalMeta{Kind: "mcp_tool_call", ToolName: m.Tool, ToolTitle: m.Title, ToolDescription: m.Description}
	if m.Remember {
		meta.Persist = []string{"session", "always"}
	}
	if m.ReadOnlyHint != nil || m.DestructiveHint != nil || m.IdempotentHint != nil || m.OpenWorldHint != nil {
		meta.ToolAnnotations = &mcpToolAnnotations{m.ReadOnlyHint, m.DestructiveHint, m.IdempotentHint, m.OpenWorldHint}
	}
	if args := jsontext.Value(m.Arguments); len(args) > 0 && string(args) != "null" {
		meta.ToolParams = args
		var obj map[string]jsontext.Value
		if json.Unmarshal(args, &obj) == nil {
			display := make([]mcpParamToDisplay, 0, len(obj))
			for k, v := range obj {
				display = append(display, mcpParamToDisplay{Name: k, Value: v, DisplayName: k})
			}
			slices.SortFunc(display, func(a, b mcpParamToDisplay) int { return cmp.Compare(a.Name, b.Name) })
			meta.ToolParamsDisplay = &display
		}
	}
	metaJSON, _ := json.Marshal(meta)
	p := appproto.McpServerElicitationRequestParams{
		ThreadID: t.id, TurnID: optString(ev.TurnID), ServerName: m.Server, Mode: "form",
		Meta: metaJSON, Message: m.Message, RequestedSchema: emptyFormSchema,
	}
	t.issueLocked(&serverRequest{thread: t, turnID: ev.TurnID, kind: kindMCPApproval, callID: m.CallID, mcpServer: m.Server, mcpTool: m.Tool,
		req: &outRequest{method: appproto.McpServerElicitationRequest.Name(), params: p}}, out)
}

// mcpApprovalDecision reads a client's answer to an MCP tool approval as
// Codex 0.169 does: accept runs the call (with _meta.persist "session" or
// "always", the tool is allowed for the session; "always" also writes
// it into config.toml, see persistMCPToolApproval), decline and cancel
// refuse it, and an answer that is an error or does not decode declines.
func mcpApprovalDecision(r *serverRequest, resp appproto.McpServerElicitationRequestResponse, ok bool) agent.Op {
	op := agent.MCPToolApprovalDecision{CallID: r.callID, Decision: agent.Decline}
	if !ok {
		return op
	}
	switch resp.Action {
	case appproto.ElicitationAccept:
		op.Decision = agent.Accept
		var meta struct {
			Persist string `json:"persist"`
		}
		if len(resp.Meta) > 0 && json.Unmarshal(resp.Meta, &meta) == nil && (meta.Persist == "session" || meta.Persist == "always") {
			op.Decision = agent.AcceptForSession
		}
	case appproto.ElicitationCancel:
		op.Decision = agent.Cancel
	}
	return op
}
