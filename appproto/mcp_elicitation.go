package appproto

import "github.com/go-json-experiment/json/jsontext"

// McpServerElicitationRequest puts an MCP server's elicitation, or an MCP
// tool approval shaped as one (Codex 0.169 asks for those this way too),
// to the thread's subscribers.
var McpServerElicitationRequest = ServerRequest[McpServerElicitationRequestParams, McpServerElicitationRequestResponse]("mcpServer/elicitation/request")

// McpServerElicitationRequestParams are the request's params, members in
// Codex's order. Mode "form" has RequestedSchema; mode "url" has URL and
// ElicitationID.
type McpServerElicitationRequestParams struct {
	ThreadID   string  `json:"threadId"`
	TurnID     *string `json:"turnId"`
	ServerName string  `json:"serverName"`
	Mode       string  `json:"mode"`
	// Meta is the elicitation's _meta (null when the server sent none).
	Meta            jsontext.Value `json:"_meta,omitzero"`
	Message         string         `json:"message"`
	RequestedSchema jsontext.Value `json:"requestedSchema,omitzero"`
	URL             string         `json:"url,omitzero"`
	ElicitationID   string         `json:"elicitationId,omitzero"`
}

// McpServerElicitationRequestResponse is the client's answer: action
// "accept" (with content), "decline" or "cancel".
type McpServerElicitationRequestResponse struct {
	Action  string         `json:"action"`
	Content jsontext.Value `json:"content,omitzero"`
	Meta    jsontext.Value `json:"_meta,omitzero"`
}

// Elicitation actions.
const (
	ElicitationAccept  = "accept"
	ElicitationDecline = "decline"
	ElicitationCancel  = "cancel"
)
