package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// This file is the rollout format of codexd before it wrote Codex's (see
// codex_line.go): every line had a format version "v" and payloads of its
// own. It is read to migrate such rollouts (migrate.go) and written only by
// tests.

// formatVersion is the "v" of every legacy line. A reader skips lines of a
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

// lineOutV1 is a legacy line as written; Payload is a *metaV1, an *eventV1 or the
// model item's jsontext.Value.
type lineOutV1 struct {
	Timestamp time.Time `json:"timestamp"`
	Type      string    `json:"type"`
	V         int       `json:"v"`
	TurnID    string    `json:"turn_id,omitempty"`
	Payload   any       `json:"payload"`
}

// storeV1 is the payload of a store record.
type storeV1 struct {
	Type string `json:"type"`
}

// encodeRecordV1 appends rec's line (with its newline) to dst. now stands in
// for a zero time.
func encodeRecordV1(dst []byte, rec Record, now time.Time) ([]byte, error) {
	out := lineOutV1{Timestamp: rec.Time, V: formatVersion, TurnID: rec.TurnID}
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

// encodeMetaLineV1 appends the session_meta line of m to dst.
func encodeMetaLineV1(dst []byte, m ThreadMeta) ([]byte, error) {
	return appendLine(dst, &lineOutV1{Timestamp: utc(m.CreatedAt), Type: recMeta, V: formatVersion, Payload: encodeMetaV1(m)})
}

// decodeLineV1 decodes one legacy line (without its newline). It never panics, and
// returns an error wrapping errQuiet for lines to skip silently.
func decodeLineV1(in *lineIn) (entry, error) {
	ts, err := parseTime(in.Timestamp)
	if err != nil {
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
	e := entry{Time: ts, TurnID: in.TurnID}
	switch in.Type {
	case recMeta:
		var d metaV1
		if err := jsonv2.Unmarshal(in.Payload, &d, jsonOpts); err != nil {
			return entry{}, err
		}
		m, err := decodeMetaV1(&d)
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
