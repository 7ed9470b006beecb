package modelclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// longHistory is a session's history of turns turns, each a user message
// of about 2,000 bytes, a reasoning item, a command call and its output
// and an answer, with the characters JSON escapes (quotes, <, &, newlines,
// U+2028, invalid UTF-8) and an image and an item of an unknown type.
func longHistory(turns int) []Item {
	filler := strings.Repeat("context filler words <b>&\"quoted\"\n\t\u2028 ", 50)
	enc := strings.Repeat("gAAAAB", 100)
	items := []Item{Message("developer", "base instructions <x> & y")}
	for i := range turns {
		id := fmt.Sprint(i)
		items = append(items,
			Message("user", "turn "+id+"\n"+filler+"\xff"),
			Item{Type: ItemReasoning, ID: "rs_" + id, Summary: []ContentPart{{Type: "summary_text", Text: "thinking <hard>"}}, EncryptedContent: enc},
			Item{Type: ItemFunctionCall, ID: "fc_" + id, Status: "completed", Name: "exec_command", Arguments: `{"cmd":"echo <hi> && ls"}`, CallID: "call_" + id},
			Item{Type: ItemFunctionCallOutput, CallID: "call_" + id, Output: "Output:\n<hi>\n" + filler[:300]},
			Item{Type: ItemMessage, ID: "msg_" + id, Role: "assistant", Status: "completed", Phase: "final_answer", Content: []ContentPart{{Type: "output_text", Text: "done & dusted <ok>"}}},
		)
	}
	return append(items,
		Item{Type: ItemCustomToolCall, ID: "ctc", CallID: "c1", Name: "apply_patch", Input: "*** Begin Patch\n<x>"},
		Item{Type: ItemCustomToolCallOutput, CallID: "c1", OutputContent: []ContentPart{{Type: "input_text", Text: "ok"}, {Type: "input_image", ImageURL: "data:image/png;base64,AAAA", Detail: "high"}}},
		Item{Type: ItemMessage, Role: "user", Content: nil},
		Item{Type: ItemReasoning, ID: "rs_x", Content: []ContentPart{{Type: "reasoning_text", Text: "raw"}}},
		Item{Type: "web_search_call", Raw: json.RawMessage(`{"type":"web_search_call", "id":"ws_1","action":{"query":"<q>"}}`)},
		Item{Type: "local_shell_call"},
	)
}

// legacyItem and legacyPart encode as Item and ContentPart did before
// Request.Body wrote the input in one pass: each through a MarshalJSON of
// its own. The body's input must still be that, byte for byte.
type (
	legacyItem Item
	legacyPart ContentPart
)

func legacyParts(ps []ContentPart) []legacyPart {
	out := make([]legacyPart, len(ps))
	for i, p := range ps {
		out[i] = legacyPart(p)
	}
	return out
}

func (p legacyPart) MarshalJSON() ([]byte, error) {
	if p.Type == "input_image" {
		return json.Marshal(struct {
			Type     string `json:"type"`
			ImageURL string `json:"image_url"`
			Detail   string `json:"detail,omitempty"`
		}{p.Type, p.ImageURL, p.Detail})
	}
	return json.Marshal(struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{p.Type, p.Text})
}
func (it legacyItem) MarshalJSON() ([]byte, error) {
	parts := func(p []ContentPart) []legacyPart {
		if p == nil {
			return []legacyPart{}
		}
		return legacyParts(p)
	}
	switch it.Type {
	case ItemMessage:
		return json.Marshal(struct {
			Type    string       `json:"type"`
			Role    string       `json:"role"`
			Content []legacyPart `json:"content"`
			Phase   string       `json:"phase,omitempty"`
			Status  string       `json:"status,omitempty"`
			ID      string       `json:"id,omitempty"`
		}{it.Type, it.Role, parts(it.Content), it.Phase, it.Status, it.ID})
	case ItemFunctionCall:
		return json.Marshal(struct {
			Type      string `json:"type"`
			Status    string `json:"status,omitempty"`
			ID        string `json:"id,omitempty"`
			Name      string `json:"name"`
			Namespace string `json:"namespace,omitempty"`
			Arguments string `json:"arguments"`
			CallID    string `json:"call_id"`
		}{it.Type, it.Status, it.ID, it.Name, it.Namespace, it.Arguments, it.CallID})
	case ItemCustomToolCall:
		return json.Marshal(struct {
			Type   string `json:"type"`
			Status string `json:"status,omitempty"`
			ID     string `json:"id,omitempty"`
			CallID string `json:"call_id"`
			Name   string `json:"name"`
			Input  string `json:"input"`
		}{it.Type, it.Status, it.ID, it.CallID, it.Name, it.Input})
	case ItemFunctionCallOutput, ItemCustomToolCallOutput:
		var out any = it.Output
		if it.OutputContent != nil {
			out = legacyParts(it.OutputContent)
		}
		return json.Marshal(struct {
			Type   string `json:"type"`
			ID     string `json:"id,omitempty"`
			CallID string `json:"call_id"`
			Output any    `json:"output"`
		}{it.Type, it.ID, it.CallID, out})
	case ItemReasoning:
		var content []legacyPart
		if it.Content != nil {
			content = legacyParts(it.Content)
		}
		return json.Marshal(struct {
			Type             string       `json:"type"`
			ID               string       `json:"id,omitempty"`
			Summary          []legacyPart `json:"summary"`
			Content          []legacyPart `json:"content,omitempty"`
			EncryptedContent string       `json:"encrypted_content,omitempty"`
		}{it.Type, it.ID, parts(it.Summary), content, it.EncryptedContent})
	}
	if len(it.Raw) > 0 {
		return it.Raw, nil
	}
	return json.Marshal(struct {
		Type string `json:"type"`
	}{it.Type})
}

// legacyInput is the input member as the body carried it before.
func legacyInput(items []Item) []byte {
	l := make([]legacyItem, len(items))
	for i, it := range items {
		l[i] = legacyItem(it)
	}
	b, err := json.Marshal(l)
	if err != nil {
		panic(err)
	}
	return b
}

// The body's input is each item's own encoding, byte for byte: writing
// the history in one pass changed nothing a provider sees.
func TestBodyInputIsEachItemsEncoding(t *testing.T) {
	r := &Request{Model: "m", Input: longHistory(3), Tools: []json.RawMessage{json.RawMessage(`{"type":"function","name":"f"}`)},
		Reasoning: &Reasoning{Effort: "high"}, PromptCacheKey: "k", ClientMetadata: map[string]string{"a": "<b>"}}
	b, err := r.Body()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if want := legacyInput(r.Input); !bytes.Equal(m["input"], want) {
		t.Fatalf("input\n%s\nwant\n%s", m["input"], want)
	}
	// Each item's MarshalJSON is what it was, too.
	for _, it := range r.Input {
		got, err := json.Marshal(it)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(legacyItem(it))
		if !bytes.Equal(got, want) {
			t.Fatalf("item %s, want %s", got, want)
		}
	}
	// The members keep Codex's order.
	keys := []string{`{"model":`, `,"input":[`, `],"tools":[`, `,"tool_choice":"auto","parallel_tool_calls":false,"reasoning":{"effort":"high"},"store":false,"stream":true,"include":["reasoning.encrypted_content"],"prompt_cache_key":"k","client_metadata":{"a":"\u003cb\u003e"}}`}
	at := 0
	for _, k := range keys {
		i := bytes.Index(b[at:], []byte(k))
		if i < 0 {
			t.Fatalf("body lacks %s after byte %d:\n%s", k, at, b)
		}
		at += i + len(k)
	}
}

// BenchmarkRequestBody encodes the request of a 30-turn history (about
// 90 KB), the size a 32k-token window holds before it compacts.
func BenchmarkRequestBody(b *testing.B) {
	r := &Request{Model: "m", Input: longHistory(30)}
	body, err := r.Body()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Body(); err != nil {
			b.Fatal(err)
		}
	}
}
