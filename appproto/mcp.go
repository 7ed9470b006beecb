package appproto

import "encoding/json"

// McpToolCallItem is a call of an MCP server's tool (ThreadItem type
// "mcpToolCall"); it travels in ThreadItem.Other.
type McpToolCallItem struct {
	Type      string             `json:"type"`
	ID        string             `json:"id"`
	Server    string             `json:"server"`
	Tool      string             `json:"tool"`
	Status    string             `json:"status"`
	Arguments json.RawMessage    `json:"arguments"`
	Result    *McpToolCallResult `json:"result"`
	Error     *McpToolCallError  `json:"error"`
	// DurationMs is set once the call ended.
	DurationMs *int64 `json:"durationMs"`
	// AppContext, McpAppUi and PluginID are null (no apps or plugins
	// here); ReadOnlyHint is the tool's annotation, as Codex 0.169 sends
	// them.
	AppContext   json.RawMessage `json:"appContext"`
	McpAppUi     json.RawMessage `json:"mcpAppUi"`
	PluginID     *string         `json:"pluginId"`
	ReadOnlyHint *bool           `json:"readOnlyHint"`
	ItemTimes
}

// McpToolCallResult is the server's answer.
type McpToolCallResult struct {
	Content []json.RawMessage `json:"content"`
	// StructuredContent and Meta are null when the server sent none.
	StructuredContent json.RawMessage `json:"structuredContent"`
	Meta              json.RawMessage `json:"_meta"`
}

// McpToolCallError says why a call has no result.
type McpToolCallError struct {
	Message string `json:"message"`
}

// McpToolCallProgressNotification is item/mcpToolCall/progress.
type McpToolCallProgressNotification struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
	ItemID   string `json:"itemId"`
	Message  string `json:"message"`
}
