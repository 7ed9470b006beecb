package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/agent"
)

// Rollouts are written in Codex 0.169's format (codex-rs protocol crate,
// RolloutLine and RolloutItem), so that Codex lists, reads and resumes the
// threads codexd wrote, and codexd those Codex wrote:
//
//	{"timestamp":"2026-01-02T03:04:05.678Z","ordinal":0,"type":"session_meta","payload":{"id":…,"cwd":…,"codexd":{…}}}
//	{"timestamp":…,"ordinal":1,"type":"event_msg","payload":{"type":"task_started","turn_id":…}}
//	{"timestamp":…,"ordinal":2,"type":"turn_context","payload":{"cwd":…,"model":…,"codexd":{…}}}
//	{"timestamp":…,"ordinal":3,"type":"response_item","payload":<a model-history item, verbatim>}
//	{"timestamp":…,"ordinal":4,"type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage",…}}}
//	{"timestamp":…,"ordinal":5,"type":"compacted","payload":{"message":…,"replacement_history":[…]}}
//	{"timestamp":…,"ordinal":6,"type":"codexd","payload":{"type":"unarchived"}}
//
// What Codex has no field for goes in a "codexd" member of the payload
// (serde ignores members it does not know), and the store's own records
// are lines of type "codexd", which Codex skips like any line it cannot
// read. Every line carries its ordinal: Codex 0.169 refuses to resume a
// paginated rollout whose last line has none.

// Line types of Codex's rollouts.
const (
	lineSessionMeta  = "session_meta"
	lineEventMsg     = "event_msg"
	lineResponseItem = "response_item"
	lineTurnContext  = "turn_context"
	lineCompacted    = "compacted"
	// lineCodexd lines are the store's own: {"type":"unarchived"} marks
	// when a thread came back from the archive (it counts as an update).
	lineCodexd = "codexd"
)

// timeLayout is how Codex writes a line's timestamp (UTC, milliseconds).
const timeLayout = "2006-01-02T15:04:05.000Z"

// lineIn is a line as read, of either format: Codex's (with an ordinal)
// or codexd's legacy one (with "v"). The payload is decoded once the type
// is known.
type lineIn struct {
	Timestamp string         `json:"timestamp"`
	Ordinal   *int64         `json:"ordinal"`
	Type      string         `json:"type"`
	V         int            `json:"v"`
	TurnID    string         `json:"turn_id"`
	Payload   jsontext.Value `json:"payload"`
}

// lineOut is a line as written.
type lineOut struct {
	Timestamp string `json:"timestamp"`
	Ordinal   int64  `json:"ordinal"`
	Type      string `json:"type"`
	Payload   any    `json:"payload"`
}

// entry is a decoded line. Exactly one of Meta, Event, Model and Store is
// set.
type entry struct {
	Time   time.Time
	TurnID string
	Meta   *ThreadMeta
	Event  agent.EventMsg
	Model  json.RawMessage
	Store  string
	// Ordinal is the line's, or -1.
	Ordinal int64
	// Legacy: the line is in codexd's legacy format.
	Legacy bool
}

var (
	// errForeign: a file that holds no thread (no session_meta, nothing
	// that decodes).
	errForeign = errors.New("not a rollout")
	// errQuiet wraps what a reader skips without a warning: Codex's lines
	// that rebuild nothing codexd keeps (world_state, token_usage_record,
	// the events of a live stream), and types added later.
	errQuiet = errors.New("skipped")
)

// jsonOpts are lenient about what the bytes hold, strict about the shape (a
// line is read whole or skipped): invalid UTF-8 (a command's output, say)
// is replaced with U+FFFD rather than failing an append, and a model item is
// the core's JSON taken as it is, duplicate member names included.
var jsonOpts = jsonv2.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))

// lineCtx is what encoding a line needs beyond the record: the thread's id
// (Codex's item_completed names it) and the next line's ordinal, which
// each encoded line takes.
type lineCtx struct {
	thread  string
	ordinal int64
}

// encodeRecord appends rec's line (with its newline) to dst, in Codex's
// format, with ordinal 0 and no thread id. now stands in for a zero time.
func encodeRecord(dst []byte, rec Record, now time.Time) ([]byte, error) {
	return encodeLine(dst, rec, now, &lineCtx{})
}

// encodeLine appends rec's line to dst and advances lc's ordinal.
func encodeLine(dst []byte, rec Record, now time.Time, lc *lineCtx) ([]byte, error) {
	t := rec.Time
	if t.IsZero() {
		t = now
	}
	out := lineOut{Timestamp: formatTime(t), Ordinal: lc.ordinal}
	switch {
	case rec.store != "":
		if rec.Event != nil || rec.Model != nil {
			return dst, fmt.Errorf("%w: a store record carries nothing else", ErrInvalidRecord)
		}
		out.Type, out.Payload = lineCodexd, &storeV1{Type: rec.store}
	case rec.Event != nil && rec.Model == nil:
		typ, p, err := encodeEventMsg(rec.Event, rec.TurnID, lc.thread, t)
		if err != nil {
			return dst, err
		}
		out.Type, out.Payload = typ, p
	case rec.Event == nil && rec.Model != nil:
		v := jsontext.Value(append([]byte(nil), rec.Model...))
		// Compact validates and puts the value on one line.
		if err := v.Compact(); err != nil {
			return dst, fmt.Errorf("%w: model item: %v", ErrInvalidRecord, err)
		}
		out.Type, out.Payload = lineResponseItem, v
		if body, ok := compactedBody(v); ok {
			out.Type, out.Payload = lineCompacted, body
		}
	default:
		return dst, fmt.Errorf("%w: want exactly one of Event and Model", ErrInvalidRecord)
	}
	dst, err := appendLine(dst, &out)
	if err == nil {
		lc.ordinal++
	}
	return dst, err
}

// encodeMetaLine appends the session_meta line of m (ordinal 0) to dst.
func encodeMetaLine(dst []byte, m ThreadMeta) ([]byte, error) {
	return appendLine(dst, &lineOut{Timestamp: formatTime(m.CreatedAt), Type: lineSessionMeta, Payload: encodeSessionMeta(m)})
}

func appendLine(dst []byte, out any) ([]byte, error) {
	b, err := jsonv2.Marshal(out, jsonOpts)
	if err != nil {
		return dst, fmt.Errorf("%w: %v", ErrInvalidRecord, err)
	}
	if len(b) > maxLine {
		return dst, fmt.Errorf("%w: a line of %d bytes is over the %d-byte limit of a rollout line", ErrRecordTooLarge, len(b), maxLine)
	}
	dst = append(dst, b...)
	return append(dst, '\n'), nil
}

// compactedBody is the payload of Codex's compacted line for a model item
// that is the core's compaction record ({"type":"compacted",...}): the
// object without its type. Codex keeps the record as a line of its own.
func compactedBody(v jsontext.Value) (jsontext.Value, bool) {
	var probe struct {
		Type string `json:"type"`
	}
	if len(v) == 0 || v[0] != '{' || jsonv2.Unmarshal(v, &probe, jsonOpts) != nil || probe.Type != lineCompacted {
		return nil, false
	}
	var members map[string]jsontext.Value
	if jsonv2.Unmarshal(v, &members, jsonOpts) != nil {
		return nil, false
	}
	delete(members, "type")
	b, err := jsonv2.Marshal(members, jsonv2.Deterministic(true))
	if err != nil {
		return nil, false
	}
	return b, true
}

// compactedItem is the model item of a compacted line's payload: the
// object with "type":"compacted" first.
func compactedItem(p jsontext.Value) (json.RawMessage, error) {
	p = bytes.TrimSpace(p)
	if len(p) < 2 || p[0] != '{' {
		return nil, fmt.Errorf("compacted payload is not an object")
	}
	rest := bytes.TrimSpace(p[1:])
	out := []byte(`{"type":"compacted"`)
	if len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...), nil
}

// decodeLine decodes one line (without its newline), of either format. It
// never panics, and returns an error wrapping errQuiet for lines to skip
// silently.
func decodeLine(b []byte) (entry, error) {
	var in lineIn
	if err := jsonv2.Unmarshal(b, &in, jsonOpts); err != nil {
		return entry{}, err
	}
	if in.V != 0 {
		e, err := decodeLineV1(&in)
		e.Ordinal, e.Legacy = -1, true
		return e, err
	}
	if len(in.Payload) == 0 {
		return entry{}, fmt.Errorf("missing payload")
	}
	ts, err := parseTime(in.Timestamp)
	if err != nil {
		return entry{}, err
	}
	e := entry{Time: ts, Ordinal: -1}
	if in.Ordinal != nil && *in.Ordinal >= 0 {
		e.Ordinal = *in.Ordinal
	}
	switch in.Type {
	case lineSessionMeta:
		m, err := decodeSessionMeta(in.Payload)
		if err != nil {
			return entry{}, err
		}
		e.Meta = &m
	case lineEventMsg:
		if err := decodeEventMsg(in.Payload, &e); err != nil {
			return entry{}, err
		}
	case lineTurnContext:
		if err := decodeTurnContext(in.Payload, &e); err != nil {
			return entry{}, err
		}
	case lineResponseItem:
		e.Model = json.RawMessage(in.Payload)
	case lineCompacted:
		m, err := compactedItem(in.Payload)
		if err != nil {
			return entry{}, err
		}
		e.Model = m
	case lineCodexd:
		var d storeV1
		if err := jsonv2.Unmarshal(in.Payload, &d, jsonOpts); err != nil {
			return entry{}, err
		}
		if d.Type != storeUnarchived {
			return entry{}, fmt.Errorf("%w: unknown codexd record %q", errQuiet, d.Type)
		}
		e.Store = d.Type
	default:
		return entry{}, fmt.Errorf("%w: line type %q", errQuiet, in.Type)
	}
	return e, nil
}

// formatTime is a time as Codex writes it; the zero time is the epoch.
func formatTime(t time.Time) string {
	return t.UTC().Format(timeLayout)
}

// parseTime reads a line's timestamp: RFC 3339, as both formats write it.
func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad timestamp %q", s)
	}
	return t.UTC(), nil
}

// withOrdinal is line (one JSON object) with its top-level "ordinal" set
// to n, its other members as they were. A line that is not an object is
// returned as it is.
func withOrdinal(line []byte, n int64) []byte {
	dec := jsontext.NewDecoder(bytes.NewReader(line), jsonOpts)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return line
	}
	out := make([]byte, 0, len(line)+16)
	out = append(out, '{')
	first := true
	add := func(name string, v []byte) {
		if !first {
			out = append(out, ',')
		}
		first = false
		q, _ := jsontext.AppendQuote(nil, name)
		out = append(append(append(out, q...), ':'), v...)
	}
	set := false
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return line
		}
		name := tok.String()
		raw, err := dec.ReadValue()
		if err != nil {
			return line
		}
		v := append([]byte(nil), raw...)
		if name == "ordinal" {
			if set {
				continue
			}
			v, set = jsontext.Value(fmt.Sprint(n)), true
		}
		add(name, v)
		if name == "timestamp" && !set {
			add("ordinal", []byte(fmt.Sprint(n)))
			set = true
		}
	}
	if !set {
		add("ordinal", []byte(fmt.Sprint(n)))
	}
	return append(out, '}')
}
