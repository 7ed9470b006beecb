package agent

import (
	"context"
	"encoding/json"
	"time"
)

// MCPToolCall is a call of a tool of an MCP server. Its ID is the model's
// call id.
type MCPToolCall struct {
	ID     string
	Server string
	Tool   string
	// Arguments are the call's JSON arguments (null when none).
	Arguments json.RawMessage
	Status    ItemStatus
	// Result is the server's answer, once there is one; Error says why
	// there is none (or why the call failed before reaching the server).
	Result   *MCPResult
	Error    string
	Duration time.Duration
	// ReadOnlyHint is the tool's readOnlyHint annotation (nil: none).
	ReadOnlyHint *bool
}

func (i *MCPToolCall) ItemID() string { return i.ID }
func (*MCPToolCall) isItem()          {}

// MCPResult is an MCP tools/call result: its content blocks and
// structured content as the server sent them.
type MCPResult struct {
	Content           []json.RawMessage
	StructuredContent json.RawMessage
	IsError           bool
}

// MCPToolCallProgress is a progress notification of a running MCPToolCall.
type MCPToolCallProgress struct {
	ItemID  string
	Message string
}

func (MCPToolCallProgress) isEventMsg() {}

// MCPTool is a tool of an MCP server as the model is offered it.
type MCPTool struct {
	// Server and Name are the raw names, for the call.
	Server string
	Name   string
	// Namespace and Callable are the model-visible names.
	Namespace   string
	Callable    string
	Title       string
	Description string
	InputSchema json.RawMessage
	// Annotations are the server's hints (nil: not given).
	ReadOnlyHint    *bool
	DestructiveHint *bool
	IdempotentHint  *bool
	OpenWorldHint   *bool
	// ApprovalMode is the configured mode: "auto", "prompt", "approve",
	// "writes" or "" (unset, which is "auto").
	ApprovalMode string
}

// MCPToolApprovalRequest asks whether an MCP tool call may run. The core
// waits for an MCPToolApprovalDecision with the same CallID; the call's
// MCPToolCall item is started and stays in progress meanwhile.
type MCPToolApprovalRequest struct {
	CallID string
	// Server and Tool are the raw names; Title and Description the tool's.
	Server, Tool       string
	Title, Description string
	// Message is the question put to the user.
	Message string
	// Arguments are the call's arguments (nil when the model gave none).
	Arguments json.RawMessage
	// The tool's annotations, as in MCPTool (all nil: none given).
	ReadOnlyHint, DestructiveHint, IdempotentHint, OpenWorldHint *bool
	// Remember: the user may allow this tool for the rest of the session
	// (AcceptForSession).
	Remember bool
}

// MCPToolApprovalDecision answers an MCPToolApprovalRequest: Accept,
// AcceptForSession, Decline or Cancel (neither of the last two interrupts
// the turn; the model is told).
type MCPToolApprovalDecision struct {
	CallID   string
	Decision Decision
}

func (MCPToolApprovalRequest) isEventMsg() {}
func (MCPToolApprovalDecision) isOp()      {}

// MCPConnector is what the core needs of the MCP servers of one thread
// (package mcp implements it). Its methods never wait for a server to
// start, except Call, which may restart a crashed server.
type MCPConnector interface {
	// Tools are the tools of the servers that are ready (or were, and
	// crashed: their tools stay offered, and a call restarts them).
	Tools() []MCPTool
	// Call calls a tool; progress gets the server's progress messages.
	// Cancelling ctx cancels the MCP request.
	Call(ctx context.Context, server, tool string, args json.RawMessage, progress func(string)) (*MCPResult, error)
	// ListResources, ListResourceTemplates and ReadResource answer the
	// resource tools; server "" means every server (not for a read).
	// They return the JSON text the model gets.
	ListResources(ctx context.Context, server, cursor string) (string, error)
	ListResourceTemplates(ctx context.Context, server, cursor string) (string, error)
	ReadResource(ctx context.Context, server, uri string) (string, error)
	// HasServers reports whether any server is configured (the resource
	// tools are offered then).
	HasServers() bool
	// AwaitRequired waits for the required servers, each for its startup
	// timeout; the error names those that did not start.
	AwaitRequired(ctx context.Context) error
	Close()
}

// MCPElicitation is an MCP server's elicitation/create request: a form
// (Mode "form", with RequestedSchema) or a page to open (Mode "url").
type MCPElicitation struct {
	Server  string
	Mode    string
	Message string
	// RequestedSchema is the form's JSON schema, as the server sent it.
	RequestedSchema json.RawMessage
	URL             string
	ElicitationID   string
	// Meta is the request's _meta (nil when none).
	Meta json.RawMessage
}

// MCPElicitationResult is the answer that goes back to the server: Action
// "accept" (with Content), "decline" or "cancel".
type MCPElicitationResult struct {
	Action  string
	Content map[string]any
}

// MCPElicitFunc puts a server's elicitation to the user and returns the
// answer; it returns when ctx ends (with "cancel").
type MCPElicitFunc func(ctx context.Context, e MCPElicitation) MCPElicitationResult

// MCPElicitationRequest puts an MCP server's elicitation to the user
// during a turn. The core waits for an MCPElicitationAnswer with the same
// ID; when the turn ends first, the server gets "cancel".
type MCPElicitationRequest struct {
	ID          string
	Elicitation MCPElicitation
}

// MCPElicitationAnswer answers an MCPElicitationRequest.
type MCPElicitationAnswer struct {
	ID     string
	Result MCPElicitationResult
}

// MCPElicitationWithdrawn says that the MCP server gave up on the
// MCPElicitationRequest with this ID before it was answered (it cancelled
// its elicitation/create): nobody should answer it any more.
type MCPElicitationWithdrawn struct {
	ID string
}

func (MCPElicitationRequest) isEventMsg()   {}
func (MCPElicitationWithdrawn) isEventMsg() {}
func (MCPElicitationAnswer) isOp()          {}
