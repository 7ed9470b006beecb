package modelclient

import (
	"encoding/json"
	"math"
)

// Event is one event of a response stream: one of the types below.
type Event interface{ isEvent() }

// Created is response.created.
type Created struct{ ResponseID string }

// OutputItemAdded is response.output_item.added: an item starts. Its
// content is usually empty yet; deltas follow.
type OutputItemAdded struct {
	OutputIndex int
	Item        Item
}

// OutputItemDone is response.output_item.done: the finished item, which
// is what goes into the history.
type OutputItemDone struct {
	OutputIndex int
	Item        Item
}

// OutputTextDelta is response.output_text.delta: text of a message.
type OutputTextDelta struct {
	ItemID                    string
	OutputIndex, ContentIndex int
	Delta                     string
}

// FunctionCallArgumentsDelta is response.function_call_arguments.delta.
type FunctionCallArgumentsDelta struct {
	ItemID      string
	OutputIndex int
	Delta       string
}

// CustomToolCallInputDelta is response.custom_tool_call_input.delta.
type CustomToolCallInputDelta struct {
	ItemID      string
	OutputIndex int
	Delta       string
}

// ReasoningSummaryPartAdded is response.reasoning_summary_part.added: a
// new summary section starts.
type ReasoningSummaryPartAdded struct {
	ItemID                    string
	OutputIndex, SummaryIndex int
}

// ReasoningSummaryTextDelta is response.reasoning_summary_text.delta.
type ReasoningSummaryTextDelta struct {
	ItemID                    string
	OutputIndex, SummaryIndex int
	Delta                     string
}

// ReasoningTextDelta is response.reasoning_text.delta (raw reasoning, from
// models that show it).
type ReasoningTextDelta struct {
	ItemID                    string
	OutputIndex, ContentIndex int
	Delta                     string
}

// Completed is response.completed, the last event of a stream.
type Completed struct {
	ResponseID string
	// Usage is nil when the response reported none.
	Usage *Usage
}

// Usage is a response's token usage.
type Usage struct {
	InputTokens           int64
	CachedInputTokens     int64
	OutputTokens          int64
	ReasoningOutputTokens int64
	TotalTokens           int64
}

func (Created) isEvent()                    {}
func (OutputItemAdded) isEvent()            {}
func (OutputItemDone) isEvent()             {}
func (OutputTextDelta) isEvent()            {}
func (FunctionCallArgumentsDelta) isEvent() {}
func (CustomToolCallInputDelta) isEvent()   {}
func (ReasoningSummaryPartAdded) isEvent()  {}
func (ReasoningSummaryTextDelta) isEvent()  {}
func (ReasoningTextDelta) isEvent()         {}
func (Completed) isEvent()                  {}

// wireEvent holds the members of every event this package reads.
type wireEvent struct {
	Type         string          `json:"type"`
	Response     *wireResponse   `json:"response"`
	Item         json.RawMessage `json:"item"`
	ItemID       string          `json:"item_id"`
	OutputIndex  int             `json:"output_index"`
	ContentIndex int             `json:"content_index"`
	SummaryIndex int             `json:"summary_index"`
	Delta        string          `json:"delta"`
	// The error event's members.
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
	// A provider's bare {"error": {...}} event.
	Error *wireError `json:"error"`
}

type wireResponse struct {
	ID                string     `json:"id"`
	Usage             *wireUsage `json:"usage"`
	Error             *wireError `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
}

type wireError struct {
	Code    json.RawMessage `json:"code"`
	Type    string          `json:"type"`
	Message string          `json:"message"`
}

type wireUsage struct {
	InputTokens        int64 `json:"input_tokens"`
	InputTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int64 `json:"output_tokens"`
	OutputTokensDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int64 `json:"total_tokens"`
}

// codeString reads an error code, which providers send as a string, a
// number or null.
func codeString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// decodeEvent turns one SSE data payload into an Event, or into the error
// that ends the stream (*ResponseError). It returns (nil, nil) for an
// event to skip: an unknown type, or data that does not parse (Codex skips
// those too).
func decodeEvent(data []byte) (Event, error) {
	var w wireEvent
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, nil
	}
	switch w.Type {
	case "response.output_item.added", "response.output_item.done", "response.output_text.delta",
		"response.function_call_arguments.delta", "response.custom_tool_call_input.delta",
		"response.reasoning_summary_part.added", "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		// Codex reads the indices as u32: an event with one that does
		// not fit does not parse, and is skipped.
		if !u32(w.OutputIndex) || !u32(w.ContentIndex) || !u32(w.SummaryIndex) {
			return nil, nil
		}
	}
	switch w.Type {
	case "response.created":
		if w.Response == nil {
			return Created{}, nil
		}
		return Created{ResponseID: w.Response.ID}, nil
	case "response.output_item.added", "response.output_item.done":
		var it Item
		if len(w.Item) == 0 || json.Unmarshal(w.Item, &it) != nil {
			return nil, nil
		}
		if w.Type == "response.output_item.added" {
			return OutputItemAdded{OutputIndex: w.OutputIndex, Item: it}, nil
		}
		return OutputItemDone{OutputIndex: w.OutputIndex, Item: it}, nil
	case "response.output_text.delta":
		return OutputTextDelta{ItemID: w.ItemID, OutputIndex: w.OutputIndex, ContentIndex: w.ContentIndex, Delta: w.Delta}, nil
	case "response.function_call_arguments.delta":
		return FunctionCallArgumentsDelta{ItemID: w.ItemID, OutputIndex: w.OutputIndex, Delta: w.Delta}, nil
	case "response.custom_tool_call_input.delta":
		return CustomToolCallInputDelta{ItemID: w.ItemID, OutputIndex: w.OutputIndex, Delta: w.Delta}, nil
	case "response.reasoning_summary_part.added":
		return ReasoningSummaryPartAdded{ItemID: w.ItemID, OutputIndex: w.OutputIndex, SummaryIndex: w.SummaryIndex}, nil
	case "response.reasoning_summary_text.delta":
		return ReasoningSummaryTextDelta{ItemID: w.ItemID, OutputIndex: w.OutputIndex, SummaryIndex: w.SummaryIndex, Delta: w.Delta}, nil
	case "response.reasoning_text.delta":
		return ReasoningTextDelta{ItemID: w.ItemID, OutputIndex: w.OutputIndex, ContentIndex: w.ContentIndex, Delta: w.Delta}, nil
	case "response.completed":
		c := Completed{}
		if w.Response != nil {
			c.ResponseID = w.Response.ID
			if u := w.Response.Usage; u != nil {
				c.Usage = &Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.TotalTokens}
				if u.InputTokensDetails != nil {
					c.Usage.CachedInputTokens = u.InputTokensDetails.CachedTokens
				}
				if u.OutputTokensDetails != nil {
					c.Usage.ReasoningOutputTokens = u.OutputTokensDetails.ReasoningTokens
				}
			}
		}
		return c, nil
	case "response.failed":
		e := &ResponseError{Event: w.Type}
		if w.Response != nil {
			e.ResponseID = w.Response.ID
			if w.Response.Error != nil {
				e.Code, e.Message = codeString(w.Response.Error.Code), w.Response.Error.Message
			}
		}
		e.RetryAfter = parseTryAgain(e.Message)
		return nil, e
	case "response.incomplete":
		e := &ResponseError{Event: w.Type, Code: "unknown"}
		if w.Response != nil {
			e.ResponseID = w.Response.ID
			if d := w.Response.IncompleteDetails; d != nil && d.Reason != "" {
				e.Code = d.Reason
			}
		}
		return nil, e
	case "error":
		e := &ResponseError{Event: "error", Code: codeString(w.Code), Message: w.Message}
		if w.Error != nil && e.Message == "" {
			e.Code, e.Message = codeString(w.Error.Code), w.Error.Message
		}
		e.RetryAfter = parseTryAgain(e.Message)
		return nil, e
	case "":
		// Not an event of the Responses API; some servers send a bare
		// {"error": {...}} object.
		if w.Error != nil {
			e := &ResponseError{Event: "error", Code: codeString(w.Error.Code), Message: w.Error.Message}
			if e.Code == "" {
				e.Code = w.Error.Type
			}
			e.RetryAfter = parseTryAgain(e.Message)
			return nil, e
		}
	}
	return nil, nil // an unknown or uninteresting event: skipped
}

// u32 reports whether an index is one the Responses API can send.
func u32(i int) bool { return i >= 0 && int64(i) <= math.MaxUint32 }
