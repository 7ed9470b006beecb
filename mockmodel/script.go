package mockmodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Script is a list of rules; see the package doc for the file format.
type Script struct {
	Rules []Rule `json:"rules"`
}

// Rule answers the requests it matches.
type Rule struct {
	Name    string   `json:"name,omitempty"`
	When    Match    `json:"when"`
	Times   int      `json:"times,omitempty"`
	Respond Response `json:"respond"`
}

// Match holds a rule's conditions; a zero field is no condition.
type Match struct {
	Request        int    `json:"request,omitempty"`
	UserContains   string `json:"userContains,omitempty"`
	LastInput      string `json:"lastInput,omitempty"`
	CallID         string `json:"callId,omitempty"`
	OutputContains string `json:"outputContains,omitempty"`
	Step           *int   `json:"step,omitempty"`
	Tool           string `json:"tool,omitempty"`
	HasSchema      *bool  `json:"hasSchema,omitempty"`
}

// Response is what a rule answers: an HTTP error (Status set and not 200)
// or a stream of Output items.
type Response struct {
	Status       int               `json:"status,omitempty"`
	RetryAfter   string            `json:"retryAfter,omitempty"`
	RetryAfterMs int               `json:"retryAfterMs,omitempty"`
	Error        *ErrorBody        `json:"error,omitempty"`
	Headers      map[string]string `json:"headers,omitempty"`

	Output     []Output   `json:"output,omitempty"`
	Deltas     int        `json:"deltas,omitempty"`
	DelayMs    int        `json:"delayMs,omitempty"`
	CutAfter   int        `json:"cutAfter,omitempty"`
	StallAfter int        `json:"stallAfter,omitempty"`
	Fail       *ErrorBody `json:"fail,omitempty"`
	Incomplete string     `json:"incomplete,omitempty"`
	Usage      *Usage     `json:"usage,omitempty"`
}

// ErrorBody is an API error: the body of an HTTP error, or the error of
// response.failed.
type ErrorBody struct {
	Message string `json:"message,omitempty"`
	Type    string `json:"type,omitempty"`
	Code    string `json:"code,omitempty"`
}

// Output is one output item of a streamed response.
type Output struct {
	// Type is message, function_call, custom_tool_call, reasoning or
	// web_search_call (the provider's web search; Input is its query).
	Type string `json:"type"`
	// Text is a message's text, or a reasoning item's raw reasoning.
	Text  string `json:"text,omitempty"`
	Phase string `json:"phase,omitempty"`
	// Deltas is how many output_text deltas a message is split into
	// (default: the response's Deltas, else 3); function call arguments
	// come in one delta unless it is set.
	Deltas int    `json:"deltas,omitempty"`
	Name   string `json:"name,omitempty"`
	// Namespace is a function call's namespace (an MCP server's
	// "mcp__SERVER"), when the tool is in one.
	Namespace string          `json:"namespace,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	CallID    string          `json:"callId,omitempty"`
	Input     string          `json:"input,omitempty"`
	Summary   []string        `json:"summary,omitempty"`
}

// Usage overrides the computed token usage of response.completed.
type Usage struct {
	InputTokens     int64 `json:"input_tokens"`
	CachedTokens    int64 `json:"cached_tokens"`
	OutputTokens    int64 `json:"output_tokens"`
	ReasoningTokens int64 `json:"reasoning_tokens"`
	TotalTokens     int64 `json:"total_tokens"`
}

// ParseScript reads a script; unknown members are errors, so that a typo
// does not silently match every request.
func ParseScript(data []byte) (*Script, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("mock script: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("mock script: trailing data after the script")
	}
	for i, r := range s.Rules {
		if err := r.Respond.validate(); err != nil {
			return nil, fmt.Errorf("mock script: rule %d%s: %w", i+1, ruleName(r), err)
		}
	}
	return &s, nil
}

// LoadScript reads a script file.
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func ruleName(r Rule) string {
	if r.Name == "" {
		return ""
	}
	return " (" + r.Name + ")"
}

func (r *Response) validate() error {
	if r.Status != 0 && (r.Status < 200 || r.Status > 599) {
		return fmt.Errorf("status %d is not an HTTP status", r.Status)
	}
	if r.Deltas < 0 || r.DelayMs < 0 || r.CutAfter < 0 || r.StallAfter < 0 || r.RetryAfterMs < 0 {
		return fmt.Errorf("deltas, delayMs, cutAfter, stallAfter and retryAfterMs must not be negative")
	}
	for i, o := range r.Output {
		switch o.Type {
		case "message", "reasoning", "custom_tool_call", "web_search_call":
		case "function_call":
			if o.Name == "" {
				return fmt.Errorf("output %d: a function_call needs a name", i+1)
			}
			if len(o.Arguments) > 0 {
				var v any
				if err := json.Unmarshal(o.Arguments, &v); err != nil {
					return fmt.Errorf("output %d: arguments: %w", i+1, err)
				}
				switch v.(type) {
				case string, map[string]any:
				default:
					return fmt.Errorf("output %d: arguments must be an object or a JSON string", i+1)
				}
			}
		default:
			return fmt.Errorf("output %d: unknown type %q (message, function_call, custom_tool_call, reasoning, web_search_call)", i+1, o.Type)
		}
		if o.Deltas < 0 {
			return fmt.Errorf("output %d: deltas must not be negative", i+1)
		}
	}
	return nil
}

// request is what the mock reads of a Responses API request.
type request struct {
	n     int
	body  []byte
	model string
	instr string // the request's instructions member
	input []inputItem
	tools []string
	// nsTools are the functions of the request's namespace tools, as
	// {namespace, name}.
	nsTools [][2]string
	schema  json.RawMessage // text.format.schema, when json_schema
	decoded bool            // the body was a JSON object
}

type inputItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

func parseRequest(n int, body []byte) *request {
	r := &request{n: n, body: body}
	var w struct {
		Model        string      `json:"model"`
		Instructions string      `json:"instructions"`
		Input        []inputItem `json:"input"`
		Tools        []struct {
			Type  string `json:"type"`
			Name  string `json:"name"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"tools"`
		Text *struct {
			Format *struct {
				Type   string          `json:"type"`
				Schema json.RawMessage `json:"schema"`
			} `json:"format"`
		} `json:"text"`
	}
	if json.Unmarshal(body, &w) != nil {
		return r
	}
	r.decoded = true
	r.model, r.input, r.instr = w.Model, w.Input, w.Instructions
	for _, t := range w.Tools {
		r.tools = append(r.tools, t.Name)
		if t.Type == "namespace" {
			for _, f := range t.Tools {
				r.nsTools = append(r.nsTools, [2]string{t.Name, f.Name})
			}
		}
	}
	if w.Text != nil && w.Text.Format != nil && w.Text.Format.Type == "json_schema" {
		r.schema = w.Text.Format.Schema
		if len(r.schema) == 0 {
			r.schema = json.RawMessage(`{}`)
		}
	}
	return r
}

// text renders content that is a string or a list of parts with text.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// lastUser returns the index of the last user message, or -1.
func (r *request) lastUser() int {
	for i := len(r.input) - 1; i >= 0; i-- {
		if it := r.input[i]; it.Type == "message" && it.Role == "user" || it.Type == "" && it.Role == "user" {
			return i
		}
	}
	return -1
}

func (r *request) prompt() string {
	if i := r.lastUser(); i >= 0 {
		return text(r.input[i].Content)
	}
	return ""
}

// step counts the tool outputs that follow the last user message.
func (r *request) step() int {
	n := 0
	for _, it := range r.input[r.lastUser()+1:] {
		if it.Type == "function_call_output" || it.Type == "custom_tool_call_output" {
			n++
		}
	}
	return n
}

// lastOutput returns the last tool output item, if any.
func (r *request) lastOutput() (inputItem, bool) {
	for i := len(r.input) - 1; i >= 0; i-- {
		if t := r.input[i].Type; t == "function_call_output" || t == "custom_tool_call_output" {
			return r.input[i], true
		}
	}
	return inputItem{}, false
}

// call returns the function call with id callID, if any.
func (r *request) call(callID string) (inputItem, bool) {
	for _, it := range r.input {
		if it.Type == "function_call" && it.CallID == callID {
			return it, true
		}
	}
	return inputItem{}, false
}

func (r *request) hasTool(name string) bool {
	for _, t := range r.tools {
		if t == name {
			return true
		}
	}
	return false
}

func (m *Match) matches(r *request) bool {
	if m.Request != 0 && m.Request != r.n {
		return false
	}
	if m.UserContains != "" && !strings.Contains(r.prompt(), m.UserContains) {
		return false
	}
	if m.LastInput != "" && (len(r.input) == 0 || r.input[len(r.input)-1].Type != m.LastInput) {
		return false
	}
	if m.CallID != "" {
		if len(r.input) == 0 {
			return false
		}
		last := r.input[len(r.input)-1]
		if !strings.HasSuffix(last.Type, "_output") || last.CallID != m.CallID {
			return false
		}
	}
	if m.OutputContains != "" {
		out, ok := r.lastOutput()
		if !ok || !strings.Contains(text(out.Output), m.OutputContains) {
			return false
		}
	}
	if m.Step != nil && *m.Step != r.step() {
		return false
	}
	if m.Tool != "" && !r.hasTool(m.Tool) {
		return false
	}
	if m.HasSchema != nil && *m.HasSchema != (r.schema != nil) {
		return false
	}
	return true
}

// templates fills {{prompt}}, {{output}}, {{rawOutput}}, {{callId}} and
// {{n}} for r. With inJSON the values are escaped for use inside a JSON
// string (arguments given as JSON text).
func (r *request) templates(inJSON bool) *strings.Replacer {
	raw, callID := "", ""
	if out, ok := r.lastOutput(); ok {
		raw, callID = text(out.Output), out.CallID
	}
	esc := func(s string) string {
		if !inJSON {
			return s
		}
		b, _ := json.Marshal(s)
		return string(b[1 : len(b)-1])
	}
	return strings.NewReplacer(
		"{{prompt}}", esc(r.prompt()),
		"{{output}}", esc(commandOutput(raw)),
		"{{rawOutput}}", esc(raw),
		"{{callId}}", esc(callID),
		"{{n}}", fmt.Sprint(r.n),
	)
}

// commandOutput keeps what follows "Output:\n" in Codex's tool output
// ("Chunk ID: …\nWall time: …\nProcess exited with code 0\n…\nOutput:\n…"),
// or what follows the "Output:" that ends an MCP output's first part.
func commandOutput(s string) string {
	if i := strings.Index(s, "Output:\n"); i >= 0 {
		s = s[i+len("Output:\n"):]
	} else if i := strings.Index(s, "\nOutput:"); i >= 0 {
		// An MCP tool's output as Codex sends it: a content list whose
		// first part ends with "Output:" (the parts are joined).
		s = s[i+len("\nOutput:"):]
	}
	return strings.TrimRight(s, "\n")
}
