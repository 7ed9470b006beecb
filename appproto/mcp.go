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
	ItemTimes
}

// McpToolCallResult is the server's answer.
type McpToolCallResult struct {
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent,omitempty"`
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
