package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/agent"
)

// formatVersion is written as "v" on every line. A reader skips lines of a
// later version (with a warning) rather than misreading them.
const formatVersion = 1

// Record types on disk.
const (
	recMeta  = "session_meta"
	recEvent = "event"
	recModel = "model"
	// recStore lines are the store's own: {"type":"unarchived"} marks
	// when a thread came back from the archive (it counts as an update,
	// as in Codex).
	recStore = "store"
)

// Store record kinds.
const storeUnarchived = "unarchived"

// lineOut is a line as written; Payload is a *metaV1, an *eventV1 or the
// model item's jsontext.Value.
type lineOut struct {
	Timestamp time.Time `json:"timestamp"`
	Type      string    `json:"type"`
	V         int       `json:"v"`
	TurnID    string    `json:"turn_id,omitempty"`
	Payload   any       `json:"payload"`
}

// lineIn is a line as read; the payload is decoded once the type is known.
type lineIn struct {
	Timestamp time.Time      `json:"timestamp"`
	Type      string         `json:"type"`
	V         int            `json:"v"`
	TurnID    string         `json:"turn_id"`
	Payload   jsontext.Value `json:"payload"`
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
}

// storeV1 is the payload of a store record.
type storeV1 struct {
	Type string `json:"type"`
}

var (
	// errForeign: a session_meta line that is not ours (Codex's own).
	errForeign = errors.New("not a codexd rollout")
	// errQuiet wraps what a reader skips without a warning: record and
	// event types added by a later codexd.
	errQuiet = errors.New("skipped")
)

// jsonOpts are lenient about what the bytes hold, strict about the shape (a
// line is read whole or skipped): invalid UTF-8 (a command's output, say)
// is replaced with U+FFFD rather than failing an append, and a model item is
// the core's JSON taken as it is, duplicate member names included.
var jsonOpts = jsonv2.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))

// encodeRecord appends rec's line (with its newline) to dst. now stands in
// for a zero time.
func encodeRecord(dst []byte, rec Record, now time.Time) ([]byte, error) {
	out := lineOut{Timestamp: rec.Time, V: formatVersion, TurnID: rec.TurnID}
	if out.Timestamp.IsZero() {
		out.Timestamp = now
	}
	out.Timestamp = out.Timestamp.UTC()
	switch {
	case rec.store != "":
		if rec.Event != nil || rec.Model != nil {
			return dst, fmt.Errorf("%w: a store record carries nothing else", ErrInvalidRecord)
		}
		out.Type, out.Payload = recStore, &storeV1{Type: rec.store}
	case rec.Event != nil && rec.Model == nil:
		ev, err := encodeEvent(rec.Event)
		if err != nil {
			return dst, err
		}
		out.Type, out.Payload = recEvent, ev
	case rec.Event == nil && rec.Model != nil:
		v := jsontext.Value(append([]byte(nil), rec.Model...))
		// Compact validates and puts the value on one line.
		if err := v.Compact(); err != nil {
			return dst, fmt.Errorf("%w: model item: %v", ErrInvalidRecord, err)
		}
		out.Type, out.Payload = recModel, v
	default:
		return dst, fmt.Errorf("%w: want exactly one of Event and Model", ErrInvalidRecord)
	}
	return appendLine(dst, &out)
}

// encodeMetaLine appends the session_meta line of m to dst.
func encodeMetaLine(dst []byte, m ThreadMeta) ([]byte, error) {
	return appendLine(dst, &lineOut{Timestamp: utc(m.CreatedAt), Type: recMeta, V: formatVersion, Payload: encodeMeta(m)})
}

func appendLine(dst []byte, out *lineOut) ([]byte, error) {
	b, err := jsonv2.Marshal(out, jsonOpts)
	if err != nil {
		return dst, fmt.Errorf("%w: %v", ErrInvalidRecord, err)
	}
	if len(b) > maxLine {
		return dst, fmt.Errorf("%w: a %s line of %d bytes is over the %d-byte limit of a rollout line", ErrRecordTooLarge, out.Type, len(b), maxLine)
	}
	dst = append(dst, b...)
	return append(dst, '\n'), nil
}

// decodeLine decodes one line (without its newline). It never panics, and
// returns an error wrapping errQuiet for lines to skip silently.
func decodeLine(b []byte) (entry, error) {
	var in lineIn
	if err := jsonv2.Unmarshal(b, &in, jsonOpts); err != nil {
		return entry{}, err
	}
	if in.V > formatVersion {
		return entry{}, fmt.Errorf("format version %d is newer than %d", in.V, formatVersion)
	}
	if in.V < 1 {
		return entry{}, fmt.Errorf("missing format version")
	}
	if len(in.Payload) == 0 {
		return entry{}, fmt.Errorf("missing payload")
	}
	e := entry{Time: in.Timestamp, TurnID: in.TurnID}
	switch in.Type {
	case recMeta:
		var d metaV1
		if err := jsonv2.Unmarshal(in.Payload, &d, jsonOpts); err != nil {
			return entry{}, err
		}
		m, err := decodeMeta(&d)
		if err != nil {
			return entry{}, err
		}
		e.Meta = &m
	case recEvent:
		var d eventV1
		if err := jsonv2.Unmarshal(in.Payload, &d, jsonOpts); err != nil {
			return entry{}, err
		}
		msg, err := decodeEvent(&d)
		var unknown errUnknownEvent
		if errors.As(err, &unknown) {
			return entry{}, fmt.Errorf("%w: %v", errQuiet, err)
		}
		if err != nil {
			return entry{}, err
		}
		e.Event = msg
	case recModel:
		e.Model = json.RawMessage(in.Payload)
	case recStore:
		var d storeV1
		if err := jsonv2.Unmarshal(in.Payload, &d, jsonOpts); err != nil {
			return entry{}, err
		}
		if d.Type != storeUnarchived {
			return entry{}, fmt.Errorf("%w: unknown store record %q", errQuiet, d.Type)
		}
		e.Store = d.Type
	default:
		return entry{}, fmt.Errorf("%w: unknown record type %q", errQuiet, in.Type)
	}
	return e, nil
}
