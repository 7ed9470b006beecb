// Package prompt holds what the agent core sends to a model and what comes
// back, in the shapes of the OpenAI Responses API: history items, the request
// body, and the stream of events a response is made of.
//
// It is the seam between the core's turn loop and a model client: the core
// builds a Request from its history, a Client streams it, and the core turns
// Events into items. The package knows no HTTP, no SSE and no turn; it must
// never import a model client, a store or a front-end.
package prompt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Item is one entry of a conversation's model history, serialised exactly
// as the Responses API takes it in `input` (and as Codex's rollouts keep
// it): a message, a reasoning item, a function call or its output.
type Item struct {
	Type string `json:"type"`
	ID   string `json:"id,omitempty"`
	// Message.
	Role    string    `json:"role,omitempty"`
	Content []Content `json:"content,omitempty"`
	Phase   string    `json:"phase,omitempty"`
	// Reasoning.
	Summary          []Summary `json:"summary,omitempty"`
	EncryptedContent *string   `json:"encrypted_content,omitempty"`
	// Function call (and custom tool call). Namespace is the namespace
	// tool the function belongs to (an MCP server's "mcp__NAME").
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	Input     string `json:"input,omitempty"`
	CallID    string `json:"call_id,omitempty"`
	// Function call output: a text, or (OutputContent, non-nil) a list of
	// parts, as view_image answers with an image; either goes in "output".
	Output        *string   `json:"output,omitempty"`
	OutputContent []Content `json:"-"`
	Status        string    `json:"status,omitempty"`
	// Tools are an additional_tools item's tool definitions.
	Tools []json.RawMessage `json:"tools,omitempty"`

	// Raw is the JSON of an item of a type this package does not know
	// (web_search_call...), sent back and stored as it came.
	Raw json.RawMessage `json:"-"`
}

// known reports whether the item's type is one whose fields Item holds.
func (it *Item) known() bool {
	switch it.Type {
	case TypeMessage, TypeReasoning, TypeFunctionCall, TypeFunctionCallOutput,
		TypeCustomToolCall, TypeCustomToolCallOutput, TypeAdditionalTools:
		return true
	}
	return false
}

type plainItem Item

// outputParts is an item whose output is a list of parts: its Output
// field, shallower, hides plainItem's.
type outputParts struct {
	plainItem
	Output json.RawMessage `json:"output,omitempty"`
}

// MarshalJSON writes an item of an unknown type as it came.
func (it Item) MarshalJSON() ([]byte, error) {
	if !it.known() && len(it.Raw) > 0 {
		return it.Raw, nil
	}
	if it.OutputContent != nil {
		parts, err := json.Marshal(it.OutputContent)
		if err != nil {
			return nil, err
		}
		return json.Marshal(outputParts{plainItem(it), parts})
	}
	return json.Marshal(plainItem(it))
}

// UnmarshalJSON keeps the JSON of an item of an unknown type.
func (it *Item) UnmarshalJSON(b []byte) error {
	var w outputParts
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	p := w.plainItem
	switch out := bytes.TrimSpace(w.Output); {
	case len(out) > 0 && out[0] == '[':
		if err := json.Unmarshal(out, &p.OutputContent); err != nil {
			return err
		}
		if p.OutputContent == nil {
			p.OutputContent = []Content{}
		}
	case len(out) > 0 && string(out) != "null":
		if err := json.Unmarshal(out, &p.Output); err != nil {
			return err
		}
	}
	*it = Item(p)
	if !it.known() {
		it.Raw = append(json.RawMessage(nil), b...)
	}
	return nil
}

// Item types.
const (
	TypeMessage              = "message"
	TypeReasoning            = "reasoning"
	TypeFunctionCall         = "function_call"
	TypeFunctionCallOutput   = "function_call_output"
	TypeCustomToolCall       = "custom_tool_call"
	TypeCustomToolCallOutput = "custom_tool_call_output"
	// TypeWebSearchCall is a search the provider's web_search tool made;
	// it is kept whole (Raw) and shown as a webSearch item.
	TypeWebSearchCall = "web_search_call"
	// TypeAdditionalTools is the developer item that carries a code-mode
	// model's tools.
	TypeAdditionalTools = "additional_tools"
)

// Content is one part of a message.
type Content struct {
	// Type is "input_text", "output_text" or "input_image".
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
	// Detail is an input_image's detail level ("high", "original"...).
	Detail string `json:"detail,omitempty"`
}

// Summary is one part of a reasoning summary.
type Summary struct {
	Type string `json:"type"` // "summary_text"
	Text string `json:"text"`
}

// Message builds a message item with one text part.
func Message(role, text string) Item {
	typ := "input_text"
	if role == "assistant" {
		typ = "output_text"
	}
	return Item{Type: TypeMessage, Role: role, Content: []Content{{Type: typ, Text: text}}}
}

// FunctionOutput builds the output item of a function call.
func FunctionOutput(callID, output string) Item {
	return Item{Type: TypeFunctionCallOutput, CallID: callID, Output: &output}
}

// Text concatenates the text parts of a message.
func (it *Item) Text() string {
	if len(it.Content) == 1 {
		return it.Content[0].Text
	}
	// A model's item may have any number of parts: += would be quadratic.
	var b strings.Builder
	for _, c := range it.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// Request is the body of `POST {base_url}/responses`, as Codex sends it,
// plus the few facts a client turns into headers.
type Request struct {
	Model        string            `json:"model"`
	Instructions string            `json:"instructions,omitempty"`
	Input        []Item            `json:"input"`
	Tools        []json.RawMessage `json:"tools"`
	// OmitTools leaves the tools member out, as Codex does for a code-mode
	// model (whose tools are in an additional_tools item).
	OmitTools         bool          `json:"-"`
	ToolChoice        string        `json:"tool_choice"`
	ParallelToolCalls bool          `json:"parallel_tool_calls"`
	Reasoning         *Reasoning    `json:"reasoning,omitempty"`
	Store             bool          `json:"store"`
	Stream            bool          `json:"stream"`
	Include           []string      `json:"include"`
	PromptCacheKey    string        `json:"prompt_cache_key,omitempty"`
	Text              *TextControls `json:"text,omitempty"`
	ServiceTier       string        `json:"service_tier,omitempty"`
	// ClientMetadata is Codex's client_metadata: the ids of the session,
	// thread, turn and window, and the turn metadata as JSON text.
	ClientMetadata map[string]string `json:"client_metadata,omitempty"`

	// Header facts, not part of the body.
	ThreadID   string `json:"-"`
	TurnID     string `json:"-"`
	Originator string `json:"-"`
	// Headers are sent with this request (x-codex-turn-metadata,
	// x-codex-window-id, ...).
	Headers map[string]string `json:"-"`
}

// Reasoning controls the model's reasoning.
type Reasoning struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary,omitempty"`
	// Context is "all_turns" for the models that keep the reasoning of
	// earlier turns.
	Context string `json:"context,omitempty"`
}

// TextControls carries the verbosity and the output schema of a turn.
type TextControls struct {
	Verbosity string      `json:"verbosity,omitempty"`
	Format    *TextFormat `json:"format,omitempty"`
}

// TextFormat is a JSON-schema output format.
type TextFormat struct {
	Type   string          `json:"type"` // "json_schema"
	Name   string          `json:"name"`
	Strict bool            `json:"strict"`
	Schema json.RawMessage `json:"schema"`
}

// EventKind names a stream event.
type EventKind int

const (
	// Created: the response began (response.created).
	Created EventKind = iota
	// ItemAdded: an output item began (response.output_item.added).
	ItemAdded
	// ItemDone: an output item is complete (response.output_item.done).
	ItemDone
	// TextDelta: text of a message (response.output_text.delta).
	TextDelta
	// ArgumentsDelta: arguments of a function call.
	ArgumentsDelta
	// ReasoningSummaryDelta and ReasoningSummaryPartAdded: the reasoning
	// summary; ReasoningTextDelta: raw reasoning text.
	ReasoningSummaryDelta
	ReasoningSummaryPartAdded
	ReasoningTextDelta
	// Completed: the response ended (response.completed), with usage.
	Completed
	// Retrying: the client is retrying the request after a retryable
	// failure; Err says why and Delay how long it waits.
	Retrying
)

// Event is one event of a streamed response.
type Event struct {
	Kind         EventKind
	Item         *Item  // ItemAdded, ItemDone
	ItemID       string // deltas
	Delta        string
	SummaryIndex int
	ContentIndex int
	ResponseID   string // Created, Completed
	Usage        *Usage // Completed
	// Retrying.
	Attempt int
	Delay   time.Duration
	Err     error
}

// Usage is a response's token usage.
type Usage struct {
	InputTokens           int64
	CachedInputTokens     int64
	OutputTokens          int64
	ReasoningOutputTokens int64
	TotalTokens           int64
}

// Stream is one response being received.
type Stream interface {
	// Next returns the next event. After Completed it returns io.EOF. A
	// failure is an error, preferably a *Error.
	Next() (Event, error)
	// Close releases the response (cancelling it if it is still running).
	Close() error
}

// Client sends requests to a model provider.
type Client interface {
	// Stream sends req and returns its stream once the response started
	// (request-level retries, reported as Retrying events to onRetry,
	// happen before it returns).
	Stream(ctx context.Context, req *Request, onRetry func(Event)) (Stream, error)
}

// Error is a model error, classified with Codex's names.
type Error struct {
	Message string
	// Info is Codex's codexErrorInfo ("internalServerError",
	// "unauthorized", "responseStreamDisconnected", "usageLimitExceeded",
	// ...).
	Info       string
	HTTPStatus int
	// Stream reports an idle or cut stream, which the core retries up to
	// stream_max_retries times.
	Stream bool
	Err    error
}

func (e *Error) Error() string {
	if e.Message != "" {
		return e.Message
	}
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("model error (HTTP %d)", e.HTTPStatus)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrMissingAPIKey: the provider's key is not set.
var ErrMissingAPIKey = errors.New("missing API key")

// AsError classifies err as a *Error, wrapping unknown errors.
func AsError(err error) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	return &Error{Message: err.Error(), Err: err}
}
