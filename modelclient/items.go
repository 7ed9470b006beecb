package modelclient

import (
	"bytes"
	"encoding/json"
)

// Item types the package knows the shape of.
const (
	ItemMessage              = "message"
	ItemFunctionCall         = "function_call"
	ItemFunctionCallOutput   = "function_call_output"
	ItemCustomToolCall       = "custom_tool_call"
	ItemCustomToolCallOutput = "custom_tool_call_output"
	ItemReasoning            = "reasoning"
)

// Item is one Responses API item: an input item of a request, or an output
// item of a response. An output item can be sent back as input as it is,
// which is how history (and a reasoning item's encrypted_content) goes
// back to the model.
//
// Which fields apply depends on Type; an item of a type not listed above
// keeps its JSON in Raw and is sent back verbatim.
type Item struct {
	Type string
	// ID is the item's id: the model's for an output item ("msg_...",
	// "fc_..."), the client's for its own ("msg_...", "fco_..."). Codex
	// 0.169 sends the ids back, so an item with one is sent with it.
	ID string
	// Status is an output item's status ("in_progress", "completed").
	Status string

	// Role is a message's "user", "assistant", "developer" or "system".
	Role string
	// Content is a message's parts (input_text, output_text, input_image)
	// or a reasoning item's raw reasoning (reasoning_text).
	Content []ContentPart
	// Phase is an assistant message's phase ("commentary",
	// "final_answer"), when the model gives one.
	Phase string

	// CallID, Name and Namespace identify a function or custom tool call
	// and its output.
	CallID    string
	Name      string
	Namespace string
	// Arguments is a function call's JSON arguments, as text.
	Arguments string
	// Input is a custom tool call's free-form input.
	Input string

	// Output is a tool call output's text; OutputContent, when non-nil, is
	// sent instead as a list of parts (for images).
	Output        string
	OutputContent []ContentPart

	// Summary is a reasoning item's summary parts (summary_text).
	Summary []ContentPart
	// EncryptedContent is a reasoning item's opaque state, to send back.
	EncryptedContent string

	// Raw is the item's JSON as received; it is what is sent for an item of
	// an unknown type.
	Raw json.RawMessage
}

// ContentPart is a part of a message, a reasoning summary or content, or a
// tool output.
type ContentPart struct {
	// Type is input_text, output_text, input_image, summary_text or
	// reasoning_text.
	Type string
	Text string
	// ImageURL and Detail are an input_image's.
	ImageURL string
	Detail   string
}

// MarshalJSON writes the part as the API takes it: an image with its URL,
// anything else with its text (even when empty).
func (p ContentPart) MarshalJSON() ([]byte, error) { return json.Marshal(p.wire()) }

// wirePart is a part as the API takes it. It and wireItem's shapes have no
// MarshalJSON of their own: encoding/json re-validates and compacts what a
// MarshalJSON returns, at every level it nests, which made a request's
// encoding several passes over the whole history (see Request.Body).
type wirePart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type wireImage struct {
	Type     string `json:"type"`
	ImageURL string `json:"image_url"`
	Detail   string `json:"detail,omitempty"`
}

func (p ContentPart) wire() any {
	if p.Type == "input_image" {
		return wireImage{p.Type, p.ImageURL, p.Detail}
	}
	return wirePart{p.Type, p.Text}
}

// wireParts is ps in their wire shapes; nil stays nil.
func wireParts(ps []ContentPart) []any {
	if ps == nil {
		return nil
	}
	out := make([]any, len(ps))
	for i, p := range ps {
		out[i] = p.wire()
	}
	return out
}

// UnmarshalJSON reads any part; unknown members are ignored.
func (p *ContentPart) UnmarshalJSON(b []byte) error {
	var w struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL string `json:"image_url"`
		Detail   string `json:"detail"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*p = ContentPart{Type: w.Type, Text: w.Text, ImageURL: w.ImageURL, Detail: w.Detail}
	return nil
}

// Message returns a message item with one text part: input_text for user,
// developer and system messages, output_text for assistant ones.
func Message(role, text string) Item {
	typ := "input_text"
	if role == "assistant" {
		typ = "output_text"
	}
	return Item{Type: ItemMessage, Role: role, Content: []ContentPart{{Type: typ, Text: text}}}
}

// FunctionCallOutput returns the item that answers call callID.
func FunctionCallOutput(callID, output string) Item {
	return Item{Type: ItemFunctionCallOutput, CallID: callID, Output: output}
}

// MarshalJSON writes the item in the shape of its type, as Codex sends it.
func (it Item) MarshalJSON() ([]byte, error) {
	if w := it.wire(); w != nil {
		return json.Marshal(w)
	}
	return it.Raw, nil
}

// wire is the item in the shape of its type, as Codex sends it, with no
// MarshalJSON below it; nil for an item of an unknown type with its JSON
// in Raw, which is sent as it came.
func (it Item) wire() any {
	parts := func(p []ContentPart) []any {
		if p == nil {
			return []any{}
		}
		return wireParts(p)
	}
	switch it.Type {
	case ItemMessage:
		return struct {
			Type    string `json:"type"`
			Role    string `json:"role"`
			Content []any  `json:"content"`
			Phase   string `json:"phase,omitempty"`
			Status  string `json:"status,omitempty"`
			ID      string `json:"id,omitempty"`
		}{it.Type, it.Role, parts(it.Content), it.Phase, it.Status, it.ID}
	case ItemFunctionCall:
		return struct {
			Type      string `json:"type"`
			Status    string `json:"status,omitempty"`
			ID        string `json:"id,omitempty"`
			Name      string `json:"name"`
			Namespace string `json:"namespace,omitempty"`
			Arguments string `json:"arguments"`
			CallID    string `json:"call_id"`
		}{it.Type, it.Status, it.ID, it.Name, it.Namespace, it.Arguments, it.CallID}
	case ItemCustomToolCall:
		return struct {
			Type   string `json:"type"`
			Status string `json:"status,omitempty"`
			ID     string `json:"id,omitempty"`
			CallID string `json:"call_id"`
			Name   string `json:"name"`
			Input  string `json:"input"`
		}{it.Type, it.Status, it.ID, it.CallID, it.Name, it.Input}
	case ItemFunctionCallOutput, ItemCustomToolCallOutput:
		var out any = it.Output
		if it.OutputContent != nil {
			out = wireParts(it.OutputContent)
		}
		return struct {
			Type   string `json:"type"`
			ID     string `json:"id,omitempty"`
			CallID string `json:"call_id"`
			Output any    `json:"output"`
		}{it.Type, it.ID, it.CallID, out}
	case ItemReasoning:
		return struct {
			Type             string `json:"type"`
			ID               string `json:"id,omitempty"`
			Summary          []any  `json:"summary"`
			Content          []any  `json:"content,omitempty"`
			EncryptedContent string `json:"encrypted_content,omitempty"`
		}{it.Type, it.ID, parts(it.Summary), wireParts(it.Content), it.EncryptedContent}
	}
	if len(it.Raw) > 0 {
		return nil
	}
	return struct {
		Type string `json:"type"`
	}{it.Type}
}

// UnmarshalJSON reads an item of any type and keeps its JSON in Raw.
func (it *Item) UnmarshalJSON(b []byte) error {
	var w struct {
		Type             string          `json:"type"`
		ID               string          `json:"id"`
		Status           string          `json:"status"`
		Role             string          `json:"role"`
		Content          []ContentPart   `json:"content"`
		Phase            string          `json:"phase"`
		CallID           string          `json:"call_id"`
		Name             string          `json:"name"`
		Namespace        string          `json:"namespace"`
		Arguments        string          `json:"arguments"`
		Input            string          `json:"input"`
		Output           json.RawMessage `json:"output"`
		Summary          []ContentPart   `json:"summary"`
		EncryptedContent string          `json:"encrypted_content"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*it = Item{
		Type: w.Type, ID: w.ID, Status: w.Status, Role: w.Role, Content: w.Content, Phase: w.Phase,
		CallID: w.CallID, Name: w.Name, Namespace: w.Namespace, Arguments: w.Arguments, Input: w.Input,
		Summary: w.Summary, EncryptedContent: w.EncryptedContent,
		Raw: bytes.Clone(b),
	}
	if len(w.Output) > 0 {
		if w.Output[0] == '"' {
			if err := json.Unmarshal(w.Output, &it.Output); err != nil {
				return err
			}
		} else if w.Output[0] == '[' {
			if err := json.Unmarshal(w.Output, &it.OutputContent); err != nil {
				return err
			}
		}
	}
	return nil
}

// Text returns the concatenated text of a message's or summary's parts.
func Text(parts []ContentPart) string {
	var b bytes.Buffer
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}
