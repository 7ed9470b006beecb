package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// mockResponses is a minimal OpenAI Responses API (POST /v1/responses,
// streamed as server-sent events) that drives one tool call:
//
//   - a request whose input has no function_call_output for callID is
//     answered with one function_call item, exec_command {"cmd": cmd};
//   - a request that carries that output is answered with a final assistant
//     message, finalText.
//
// The event shapes are those of Codex's own mock helpers
// (codex-rs/core/tests/common/responses.rs: ev_response_created,
// ev_function_call, ev_assistant_message, ev_completed).
type mockResponses struct {
	callID    string
	cmd       string
	finalText string

	mu       sync.Mutex
	requests []responsesRequest
	// toolOutput is the output Codex reported for callID, once it has.
	toolOutput string
	gotOutput  chan struct{} // closed when toolOutput is set
	other      []string      // method and path of requests that are not /responses
}

// responsesRequest is the part of a Responses API request the mock reads.
type responsesRequest struct {
	Model string `json:"model"`
	Input []struct {
		Type   string          `json:"type"`
		CallID string          `json:"call_id"`
		Output json.RawMessage `json:"output"`
	} `json:"input"`
	Tools []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
}

func newMockResponses(callID, cmd, finalText string) *mockResponses {
	return &mockResponses{callID: callID, cmd: cmd, finalText: finalText, gotOutput: make(chan struct{})}
}

func (m *mockResponses) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		m.mu.Lock()
		m.other = append(m.other, r.Method+" "+r.URL.Path)
		m.mu.Unlock()
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad json: "+err.Error(), http.StatusBadRequest)
		return
	}
	output, answered := "", false
	for _, it := range req.Input {
		if it.Type == "function_call_output" && it.CallID == m.callID {
			output, answered = decodeToolOutput(it.Output), true
		}
	}
	m.mu.Lock()
	m.requests = append(m.requests, req)
	if answered && m.toolOutput == "" {
		m.toolOutput = output
		close(m.gotOutput)
	}
	m.mu.Unlock()

	respID := fmt.Sprintf("resp-%d", len(m.snapshot()))
	var events []map[string]any
	events = append(events, map[string]any{
		"type": "response.created", "response": map[string]any{"id": respID},
	})
	if answered {
		events = append(events, map[string]any{
			"type": "response.output_item.done",
			"item": map[string]any{
				"type": "message", "role": "assistant", "id": "msg-1",
				"content": []map[string]any{{"type": "output_text", "text": m.finalText}},
			},
		})
	} else {
		args, _ := json.Marshal(map[string]any{"cmd": m.cmd, "yield_time_ms": 10000})
		events = append(events, map[string]any{
			"type": "response.output_item.done",
			"item": map[string]any{
				"type": "function_call", "id": "fc-1", "call_id": m.callID,
				"name": "exec_command", "arguments": string(args),
			},
		})
	}
	events = append(events, map[string]any{
		"type": "response.completed",
		"response": map[string]any{"id": respID, "usage": map[string]any{
			"input_tokens": 0, "input_tokens_details": nil,
			"output_tokens": 0, "output_tokens_details": nil,
			"total_tokens": 0,
		}},
	})
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for _, ev := range events {
		data, _ := json.Marshal(ev)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev["type"], data)
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// decodeToolOutput renders a function_call_output's output, which is a
// string or a list of content items, as text.
func decodeToolOutput(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var items []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &items) == nil {
		var b strings.Builder
		for _, it := range items {
			b.WriteString(it.Text)
		}
		return b.String()
	}
	return string(raw)
}

func (m *mockResponses) snapshot() []responsesRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]responsesRequest(nil), m.requests...)
}
