package appserver

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
)

// mcpElicitationLocked puts an MCP server's elicitation to the thread's
// subscribers as Codex 0.169 does: mcpServer/elicitation/request with the
// server's form (or URL) and its _meta (null when it sent none). The
// rules of every server request hold: the first answer wins, a turn
// boundary withdraws it (the core then tells the server "cancel"), and
// with no subscriber left it is declined; a server that cancels it has it
// withdrawn at once.
func (t *thread) mcpElicitationLocked(ev agent.Event, m agent.MCPElicitationRequest, out *outbox) {
	e := m.Elicitation
	meta := jsontext.Value(e.Meta)
	if len(meta) == 0 {
		meta = jsontext.Value("null")
	}
	p := appproto.McpServerElicitationRequestParams{
		ThreadID: t.id, TurnID: optString(ev.TurnID), ServerName: e.Server, Mode: e.Mode, Meta: meta, Message: e.Message,
	}
	if e.Mode == "url" {
		p.URL, p.ElicitationID = e.URL, e.ElicitationID
	} else {
		p.RequestedSchema = jsontext.Value(e.RequestedSchema)
		if len(p.RequestedSchema) == 0 {
			p.RequestedSchema = emptyFormSchema
		}
	}
	t.issueLocked(&serverRequest{thread: t, turnID: ev.TurnID, kind: kindMCPElicitation, callID: m.ID,
		req: &outRequest{method: appproto.McpServerElicitationRequest.Name(), params: p}}, out)
}

// mcpElicitationWithdrawnLocked withdraws the request of an elicitation
// its MCP server gave up on (the core has answered the server already):
// every recipient gets serverRequest/resolved now, where Codex 0.169
// leaves the request pending to the turn's end (README
// [mcp-elicitation-withdrawn]).
func (t *thread) mcpElicitationWithdrawnLocked(m agent.MCPElicitationWithdrawn, out *outbox) {
	for _, r := range t.st.requests {
		if r.kind == kindMCPElicitation && r.callID == m.ID {
			t.withdrawLocked(r, out)
			t.refreshFlagsLocked(out)
			return
		}
	}
}

// mcpElicitationAnswer reads a client's answer for the server: accept
// with its content (an object), decline or cancel; an error answer, or
// one that does not decode, declines.
func mcpElicitationAnswer(r *serverRequest, resp appproto.McpServerElicitationRequestResponse, ok bool) agent.Op {
	op := agent.MCPElicitationAnswer{ID: r.callID, Result: agent.MCPElicitationResult{Action: appproto.ElicitationDecline}}
	if !ok {
		return op
	}
	switch resp.Action {
	case appproto.ElicitationAccept:
		var content map[string]any
		if len(resp.Content) > 0 && string(resp.Content) != "null" && json.Unmarshal(resp.Content, &content) != nil {
			return op // content that is not an object cannot go to the server
		}
		op.Result = agent.MCPElicitationResult{Action: appproto.ElicitationAccept, Content: content}
	case appproto.ElicitationCancel:
		op.Result.Action = appproto.ElicitationCancel
	}
	return op
}
