package store

import (
	"encoding/json"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/agent"
)

// An MCP tool call as Codex 0.169 writes it in a rollout's item_completed
// (observed): {"type":"McpToolCall","id","server","tool","arguments":
// JSON,"readOnlyHint","status","result":{"content":[…],"isError",
// "structuredContent"},"error":{"message"},"duration":{"secs","nanos"}}.

type mcpResult struct {
	Content           []jsontext.Value `json:"content"`
	StructuredContent jsontext.Value   `json:"structuredContent,omitzero"`
	IsError           bool             `json:"isError,omitzero"`
}

type mcpError struct {
	Message string `json:"message"`
}

func encodeMCPToolCall(it *agent.MCPToolCall) *turnItem {
	d := &turnItem{Type: tiMcpToolCall, ID: it.ID, Server: it.Server, Tool: it.Tool, ReadOnlyHint: it.ReadOnlyHint,
		Status: orString(string(it.Status), string(agent.ItemStatusInProgress)), Arguments: jsontext.Value("null")}
	if len(it.Arguments) > 0 && json.Valid(it.Arguments) {
		d.Arguments = jsontext.Value(it.Arguments)
	}
	if r := it.Result; r != nil {
		d.Result = &mcpResult{Content: []jsontext.Value{}, IsError: r.IsError}
		for _, c := range r.Content {
			if json.Valid(c) {
				d.Result.Content = append(d.Result.Content, jsontext.Value(c))
			}
		}
		if len(r.StructuredContent) > 0 && json.Valid(r.StructuredContent) {
			d.Result.StructuredContent = jsontext.Value(r.StructuredContent)
		}
	}
	if it.Error != "" {
		d.Error = &mcpError{Message: it.Error}
	}
	if it.Duration > 0 {
		d.Duration = &rustDuration{Secs: int64(it.Duration / time.Second), Nanos: int64(it.Duration % time.Second)}
	}
	return d
}

func decodeMCPToolCall(d *turnItem) *agent.MCPToolCall {
	it := &agent.MCPToolCall{ID: d.ID, Server: d.Server, Tool: d.Tool, Status: agent.ItemStatus(d.Status), ReadOnlyHint: d.ReadOnlyHint}
	if len(d.Arguments) > 0 {
		it.Arguments = json.RawMessage(d.Arguments)
	}
	if r := d.Result; r != nil {
		it.Result = &agent.MCPResult{IsError: r.IsError}
		for _, c := range r.Content {
			it.Result.Content = append(it.Result.Content, json.RawMessage(c))
		}
		if len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
			it.Result.StructuredContent = json.RawMessage(r.StructuredContent)
		}
	}
	if d.Error != nil {
		it.Error = d.Error.Message
	}
	if d.Duration != nil {
		it.Duration = time.Duration(d.Duration.Secs)*time.Second + time.Duration(d.Duration.Nanos)
	}
	return it
}
