package modelclient

import (
	"encoding/json"
	"net/http"
)

// Request is one model call. Its body is what Codex 0.169 sends: model,
// instructions (if any), input, tools, tool_choice, parallel_tool_calls,
// reasoning, store, stream, include, service_tier, prompt_cache_key, text,
// client_metadata.
type Request struct {
	Model string
	// Instructions is the top-level "instructions" key. Codex 0.169 sends
	// none and puts its system prompt in a developer message instead.
	Instructions string
	// Input is the history, oldest first.
	Input []Item
	// Tools are the tool definitions, as the API takes them.
	Tools []json.RawMessage
	// OmitTools sends no tools member at all (Codex's request to a
	// code-mode model, whose tools are an input item).
	OmitTools bool
	// ToolChoice defaults to "auto".
	ToolChoice        string
	ParallelToolCalls bool
	// Reasoning is sent when non-nil.
	Reasoning *Reasoning
	Store     bool
	// Include defaults to ["reasoning.encrypted_content"] when Reasoning is
	// set, else [].
	Include        []string
	ServiceTier    string
	PromptCacheKey string
	// Verbosity is text.verbosity ("low", "medium", "high").
	Verbosity string
	// OutputSchema, a JSON Schema, asks for a structured answer
	// (text.format {type: json_schema, name: codex_output_schema, strict}).
	OutputSchema   json.RawMessage
	ClientMetadata map[string]string
	// Header is sent with this request on top of the provider's headers
	// (session ids, originator, turn metadata, ...).
	Header http.Header
}

// Reasoning is the request's reasoning settings.
type Reasoning struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary,omitempty"`
	// Context is "all_turns" for the models that keep earlier turns'
	// reasoning (Codex sends it to the Responses "lite" models).
	Context string `json:"context,omitempty"`
}

type textControls struct {
	Verbosity string      `json:"verbosity,omitempty"`
	Format    *textFormat `json:"format,omitempty"`
}

type textFormat struct {
	Type   string          `json:"type"`
	Strict bool            `json:"strict"`
	Schema json.RawMessage `json:"schema"`
	Name   string          `json:"name"`
}

type requestBody struct {
	Model             string             `json:"model"`
	Instructions      string             `json:"instructions,omitempty"`
	Input             []any              `json:"input"`
	Tools             *[]json.RawMessage `json:"tools,omitempty"`
	ToolChoice        string             `json:"tool_choice"`
	ParallelToolCalls bool               `json:"parallel_tool_calls"`
	Reasoning         *Reasoning         `json:"reasoning,omitempty"`
	Store             bool               `json:"store"`
	Stream            bool               `json:"stream"`
	Include           []string           `json:"include"`
	ServiceTier       string             `json:"service_tier,omitempty"`
	PromptCacheKey    string             `json:"prompt_cache_key,omitempty"`
	Text              *textControls      `json:"text,omitempty"`
	ClientMetadata    map[string]string  `json:"client_metadata,omitempty"`
}

// Body returns the JSON body of r, as Stream sends it.
func (r *Request) Body() ([]byte, error) {
	b := requestBody{
		Model:             r.Model,
		Instructions:      r.Instructions,
		Input:             wireInput(r.Input),
		ToolChoice:        r.ToolChoice,
		ParallelToolCalls: r.ParallelToolCalls,
		Reasoning:         r.Reasoning,
		Store:             r.Store,
		Stream:            true,
		Include:           r.Include,
		ServiceTier:       r.ServiceTier,
		PromptCacheKey:    r.PromptCacheKey,
		ClientMetadata:    r.ClientMetadata,
	}
	if !r.OmitTools {
		tools := r.Tools
		if tools == nil {
			tools = []json.RawMessage{}
		}
		b.Tools = &tools
	}
	if b.ToolChoice == "" {
		b.ToolChoice = "auto"
	}
	if b.Include == nil {
		b.Include = []string{}
		if r.Reasoning != nil {
			b.Include = []string{"reasoning.encrypted_content"}
		}
	}
	if r.Verbosity != "" || len(r.OutputSchema) > 0 {
		b.Text = &textControls{Verbosity: r.Verbosity}
		if len(r.OutputSchema) > 0 {
			b.Text.Format = &textFormat{Type: "json_schema", Strict: true, Schema: r.OutputSchema, Name: "codex_output_schema"}
		}
	}
	return json.Marshal(b)
}

// wireInput is the history in its wire shapes, so that the body is encoded
// in one pass: through Item's MarshalJSON, encoding/json would validate and
// compact each item's and each part's encoding again, and a request of a
// long session spent most of its encoding time doing so.
func wireInput(items []Item) []any {
	out := make([]any, len(items))
	for i, it := range items {
		if w := it.wire(); w != nil {
			out[i] = w
		} else {
			out[i] = it.Raw
		}
	}
	return out
}
