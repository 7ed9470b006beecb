package mockmodel

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// obj is a JSON object that keeps its members in order, so the events
// read like the real API's.
type obj []kv

type kv struct {
	k string
	v any
}

// withNamespace adds a function call's namespace, as the Responses API
// sends it for a tool of a namespace, after its name.
func (o obj) withNamespace(ns string) obj {
	if ns == "" {
		return o
	}
	return append(o, kv{"namespace", ns})
}

func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.k)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(m.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// event is one SSE event; delay is waited before it is sent.
type event struct {
	name  string
	data  obj
	delay time.Duration
}

// idSource hands out the ids of one response ("msg_mock_3", ...).
type idSource interface{ next(prefix string) string }

// builder turns a Response into the events of one stream.
type builder struct {
	events  []event
	delay   time.Duration
	deltas  int // a delta was added already (the first is not delayed)
	tmpl    *strings.Replacer
	tmplJS  *strings.Replacer // for templates inside JSON text
	ids     idSource
	outText int // output size, for the usage
	reason  int
}

func (b *builder) add(name string, delta bool, members ...kv) {
	var d time.Duration
	if delta {
		if b.deltas > 0 {
			d = b.delay
		}
		b.deltas++
	}
	b.events = append(b.events, event{name: name, data: append(obj{{"type", name}}, members...), delay: d})
}

// split cuts s into at most n pieces of about equal length (never inside
// a rune).
func split(s string, n int) []string {
	if s == "" {
		return nil
	}
	runes := utf8.RuneCountInString(s)
	n = max(1, min(n, runes))
	per := (runes + n - 1) / n
	var out []string
	for s != "" {
		cut := 0
		for count := 0; cut < len(s) && count < per; count++ {
			_, w := utf8.DecodeRuneInString(s[cut:])
			cut += w
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

// build makes the whole event list of resp for r: created, in_progress,
// each output item with its deltas, and the terminal event.
func build(r *request, resp Response, model string, respID string, ids idSource) []event {
	b := &builder{delay: time.Duration(resp.DelayMs) * time.Millisecond, tmpl: r.templates(false), tmplJS: r.templates(true), ids: ids}
	created := time.Now().Unix()
	head := func(status string, output []any) obj {
		return obj{{"id", respID}, {"object", "response"}, {"created_at", created}, {"status", status}, {"model", model}, {"output", output}}
	}
	b.add("response.created", false, kv{"response", append(head("in_progress", []any{}), kv{"usage", nil})})
	b.add("response.in_progress", false, kv{"response", append(head("in_progress", []any{}), kv{"usage", nil})})

	var items []any
	for i, o := range resp.Output {
		n := o.Deltas
		if n == 0 {
			n = resp.Deltas
		}
		items = append(items, b.item(i, o, n))
	}
	if items == nil {
		items = []any{}
	}

	switch {
	case resp.Fail != nil:
		code, msg := resp.Fail.Code, resp.Fail.Message
		if code == "" {
			code = "server_error"
		}
		if msg == "" {
			msg = "The mock model failed."
		}
		b.add("response.failed", false, kv{"response", append(head("failed", items), kv{"error", obj{{"code", code}, {"message", msg}}}, kv{"usage", nil})})
	case resp.Incomplete != "":
		b.add("response.incomplete", false, kv{"response", append(head("incomplete", items), kv{"incomplete_details", obj{{"reason", resp.Incomplete}}}, kv{"usage", nil})})
	default:
		u := resp.Usage
		if u == nil {
			in := int64(len(r.body)/4 + 1)
			out := int64(b.outText/4 + 1)
			u = &Usage{InputTokens: in, OutputTokens: out, ReasoningTokens: int64(b.reason / 4), TotalTokens: in + out}
		}
		usage := obj{
			{"input_tokens", u.InputTokens},
			{"input_tokens_details", obj{{"cached_tokens", u.CachedTokens}}},
			{"output_tokens", u.OutputTokens},
			{"output_tokens_details", obj{{"reasoning_tokens", u.ReasoningTokens}}},
			{"total_tokens", u.TotalTokens},
		}
		b.add("response.completed", false, kv{"response", append(head("completed", items), kv{"usage", usage})})
	}
	for i := range b.events {
		b.events[i].data = append(b.events[i].data, kv{"sequence_number", i})
	}
	return b.events
}

// item adds the events of output item i and returns the finished item.
func (b *builder) item(i int, o Output, deltas int) obj {
	switch o.Type {
	case "function_call":
		id, callID := b.ids.next("fc_mock_"), o.CallID
		if callID == "" {
			callID = b.ids.next("call_mock_")
		}
		args := b.arguments(o.Arguments)
		b.outText += len(args)
		b.add("response.output_item.added", false, kv{"output_index", i}, kv{"item", obj{{"id", id}, {"type", "function_call"}, {"status", "in_progress"}, {"arguments", ""}, {"call_id", callID}, {"name", o.Name}}.withNamespace(o.Namespace)})
		for _, d := range split(args, max(deltas, 1)) {
			b.add("response.function_call_arguments.delta", true, kv{"item_id", id}, kv{"output_index", i}, kv{"delta", d})
		}
		b.add("response.function_call_arguments.done", false, kv{"item_id", id}, kv{"output_index", i}, kv{"arguments", args})
		done := obj{{"id", id}, {"type", "function_call"}, {"status", "completed"}, {"arguments", args}, {"call_id", callID}, {"name", o.Name}}.withNamespace(o.Namespace)
		b.add("response.output_item.done", false, kv{"output_index", i}, kv{"item", done})
		return done

	case "custom_tool_call":
		id, callID := b.ids.next("ctc_mock_"), o.CallID
		if callID == "" {
			callID = b.ids.next("call_mock_")
		}
		input := b.tmpl.Replace(o.Input)
		b.outText += len(input)
		b.add("response.output_item.added", false, kv{"output_index", i}, kv{"item", obj{{"id", id}, {"type", "custom_tool_call"}, {"status", "in_progress"}, {"call_id", callID}, {"name", o.Name}, {"input", ""}}})
		for _, d := range split(input, max(deltas, 1)) {
			b.add("response.custom_tool_call_input.delta", true, kv{"item_id", id}, kv{"output_index", i}, kv{"delta", d})
		}
		b.add("response.custom_tool_call_input.done", false, kv{"item_id", id}, kv{"output_index", i}, kv{"input", input})
		done := obj{{"id", id}, {"type", "custom_tool_call"}, {"status", "completed"}, {"call_id", callID}, {"name", o.Name}, {"input", input}}
		b.add("response.output_item.done", false, kv{"output_index", i}, kv{"item", done})
		return done

	case "web_search_call":
		// The provider's own web search: the item and its progress events,
		// then the search done with its action (Input is the query).
		id := b.ids.next("ws_mock_")
		query := b.tmpl.Replace(o.Input)
		b.add("response.output_item.added", false, kv{"output_index", i}, kv{"item", obj{{"id", id}, {"type", "web_search_call"}, {"status", "in_progress"}}})
		for _, ev := range []string{"in_progress", "searching", "completed"} {
			b.add("response.web_search_call."+ev, false, kv{"item_id", id}, kv{"output_index", i})
		}
		done := obj{{"id", id}, {"type", "web_search_call"}, {"status", "completed"}, {"action", obj{{"type", "search"}, {"query", query}}}}
		b.add("response.output_item.done", false, kv{"output_index", i}, kv{"item", done})
		return done

	case "reasoning":
		id := b.ids.next("rs_mock_")
		b.add("response.output_item.added", false, kv{"output_index", i}, kv{"item", obj{{"id", id}, {"type", "reasoning"}, {"summary", []any{}}}})
		var summary []any
		for si, s := range o.Summary {
			s = b.tmpl.Replace(s)
			b.reason += len(s)
			b.add("response.reasoning_summary_part.added", false, kv{"item_id", id}, kv{"output_index", i}, kv{"summary_index", si}, kv{"part", obj{{"type", "summary_text"}, {"text", ""}}})
			for _, d := range split(s, max(deltas, 2)) {
				b.add("response.reasoning_summary_text.delta", true, kv{"item_id", id}, kv{"output_index", i}, kv{"summary_index", si}, kv{"delta", d})
			}
			b.add("response.reasoning_summary_text.done", false, kv{"item_id", id}, kv{"output_index", i}, kv{"summary_index", si}, kv{"text", s})
			part := obj{{"type", "summary_text"}, {"text", s}}
			b.add("response.reasoning_summary_part.done", false, kv{"item_id", id}, kv{"output_index", i}, kv{"summary_index", si}, kv{"part", part})
			summary = append(summary, part)
		}
		if summary == nil {
			summary = []any{}
		}
		done := obj{{"id", id}, {"type", "reasoning"}, {"summary", summary}}
		if o.Text != "" {
			t := b.tmpl.Replace(o.Text)
			b.reason += len(t)
			for _, d := range split(t, max(deltas, 2)) {
				b.add("response.reasoning_text.delta", true, kv{"item_id", id}, kv{"output_index", i}, kv{"content_index", 0}, kv{"delta", d})
			}
			b.add("response.reasoning_text.done", false, kv{"item_id", id}, kv{"output_index", i}, kv{"content_index", 0}, kv{"text", t})
			done = append(done, kv{"content", []any{obj{{"type", "reasoning_text"}, {"text", t}}}})
		}
		done = append(done, kv{"encrypted_content", "mock-encrypted:" + base64.StdEncoding.EncodeToString([]byte(id))})
		b.add("response.output_item.done", false, kv{"output_index", i}, kv{"item", done})
		return done
	}

	// message
	id := b.ids.next("msg_mock_")
	text := b.tmpl.Replace(o.Text)
	b.outText += len(text)
	added := obj{{"id", id}, {"type", "message"}, {"status", "in_progress"}, {"content", []any{}}, {"role", "assistant"}}
	if o.Phase != "" {
		added = append(added, kv{"phase", o.Phase})
	}
	b.add("response.output_item.added", false, kv{"output_index", i}, kv{"item", added})
	empty := obj{{"type", "output_text"}, {"annotations", []any{}}, {"logprobs", []any{}}, {"text", ""}}
	b.add("response.content_part.added", false, kv{"item_id", id}, kv{"output_index", i}, kv{"content_index", 0}, kv{"part", empty})
	if deltas == 0 {
		deltas = 3
	}
	for _, d := range split(text, deltas) {
		b.add("response.output_text.delta", true, kv{"item_id", id}, kv{"output_index", i}, kv{"content_index", 0}, kv{"delta", d}, kv{"logprobs", []any{}})
	}
	b.add("response.output_text.done", false, kv{"item_id", id}, kv{"output_index", i}, kv{"content_index", 0}, kv{"text", text}, kv{"logprobs", []any{}})
	part := obj{{"type", "output_text"}, {"annotations", []any{}}, {"logprobs", []any{}}, {"text", text}}
	b.add("response.content_part.done", false, kv{"item_id", id}, kv{"output_index", i}, kv{"content_index", 0}, kv{"part", part})
	done := obj{{"id", id}, {"type", "message"}, {"status", "completed"}, {"content", []any{part}}, {"role", "assistant"}}
	if o.Phase != "" {
		done = append(done, kv{"phase", o.Phase})
	}
	b.add("response.output_item.done", false, kv{"output_index", i}, kv{"item", done})
	return done
}

// arguments renders a function call's arguments as JSON text, filling the
// templates inside its strings.
func (b *builder) arguments(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "{}"
	}
	if s, ok := v.(string); ok {
		return b.tmplJS.Replace(s)
	}
	out, err := json.Marshal(b.fill(v))
	if err != nil {
		return "{}"
	}
	return string(out)
}

func (b *builder) fill(v any) any {
	switch v := v.(type) {
	case string:
		return b.tmpl.Replace(v)
	case map[string]any:
		for k, e := range v {
			v[k] = b.fill(e)
		}
	case []any:
		for i, e := range v {
			v[i] = b.fill(e)
		}
	}
	return v
}

// errorBody is the JSON of an HTTP error answer, with the API's usual
// texts for the common statuses.
func errorBody(status int, e *ErrorBody, retryAfter string) []byte {
	var def ErrorBody
	switch {
	case status == 429:
		wait := "1s"
		if retryAfter != "" {
			wait = retryAfter + "s"
		}
		def = ErrorBody{Message: "Rate limit reached for the mock model. Please try again in " + wait + ".", Type: "requests", Code: "rate_limit_exceeded"}
	case status == 401:
		def = ErrorBody{Message: "Incorrect API key provided.", Type: "invalid_request_error", Code: "invalid_api_key"}
	case status >= 500:
		def = ErrorBody{Message: "The server had an error while processing your request.", Type: "server_error", Code: "server_error"}
	default:
		def = ErrorBody{Message: fmt.Sprintf("The mock model answered %d.", status), Type: "invalid_request_error"}
	}
	if e != nil {
		if e.Message != "" {
			def.Message = e.Message
		}
		if e.Type != "" {
			def.Type = e.Type
		}
		if e.Code != "" {
			def.Code = e.Code
		}
	}
	var code any
	if def.Code != "" {
		code = def.Code
	}
	body, _ := json.Marshal(obj{{"error", obj{{"message", def.Message}, {"type", def.Type}, {"param", nil}, {"code", code}}}})
	return body
}
