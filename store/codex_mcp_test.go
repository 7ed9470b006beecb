package store

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/agent"
)

// An MCP tool call goes into the rollout as Codex 0.169 writes it and comes
// back whole; Codex's own item (from one of its rollouts) reads too.
// Before, the item had no codec: every call's record was dropped with a
// warning.
func TestMCPToolCallRecord(t *testing.T) {
	ro := true
	in := &agent.MCPToolCall{ID: "call_1", Server: "tests", Tool: "echo", Arguments: json.RawMessage(`{"text":"hi"}`),
		Status: agent.ItemStatusCompleted, ReadOnlyHint: &ro, Duration: 2188566 * time.Nanosecond,
		Result: &agent.MCPResult{Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"hi"}`)}, StructuredContent: json.RawMessage(`{"a":1}`)}}
	b, err := encodeTurnItem(in)
	if err != nil {
		t.Fatal(err)
	}
	var shape map[string]any
	if err := json.Unmarshal(b, &shape); err != nil || shape["type"] != "McpToolCall" || shape["readOnlyHint"] != true ||
		shape["arguments"].(map[string]any)["text"] != "hi" || shape["duration"].(map[string]any)["nanos"] != float64(2188566) {
		t.Fatalf("encoded %s (%v)", b, err)
	}
	out, err := decodeTurnItem(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, agent.Item(in)) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", out, in)
	}
	failed := &agent.MCPToolCall{ID: "call_2", Server: "tests", Tool: "crash", Arguments: json.RawMessage("null"), Status: agent.ItemStatusFailed, Error: "MCP tool call requires approval"}
	b, _ = encodeTurnItem(failed)
	if out, err := decodeTurnItem(b); err != nil || !reflect.DeepEqual(out, agent.Item(failed)) {
		t.Fatalf("failed call: %s → %+v (%v)", b, out, err)
	}

	codex := `{"type": "McpToolCall", "id": "call_mock_1", "server": "tests", "tool": "echo", "arguments": {"text": 5}, "readOnlyHint": true, "status": "failed", "result": {"content": [{"type": "text", "text": "bad"}], "isError": true}, "duration": {"secs": 0, "nanos": 2188566}}`
	got, err := decodeTurnItem(jsontext.Value(codex))
	if err != nil {
		t.Fatal(err)
	}
	m, ok := got.(*agent.MCPToolCall)
	if !ok || m.ID != "call_mock_1" || m.Server != "tests" || m.Tool != "echo" || string(m.Arguments) != `{"text": 5}` || m.ReadOnlyHint == nil || !*m.ReadOnlyHint ||
		m.Status != agent.ItemStatusFailed || m.Result == nil || !m.Result.IsError || len(m.Result.Content) != 1 || m.Duration != 2188566*time.Nanosecond {
		t.Fatalf("Codex's item: %+v", got)
	}
}
