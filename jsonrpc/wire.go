package jsonrpc

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// ID is a request id: a string or a 64-bit integer. The zero ID is not a
// valid id; it stands for the null id of an error that answers a message
// whose id could not be read.
//
// IDs are comparable, so they can key maps; the integer 1 and the string "1"
// are different keys, as they are different ids on the wire.
type ID struct {
	str  string
	num  int64
	kind idKind
}

type idKind uint8

const (
	idNone idKind = iota
	idInt
	idString
)

// Int64ID returns the integer id n.
func Int64ID(n int64) ID { return ID{num: n, kind: idInt} }

// StringID returns the string id s.
func StringID(s string) ID { return ID{str: s, kind: idString} }

// IsValid reports whether id is a string or an integer (not the null id).
func (id ID) IsValid() bool { return id.kind != idNone }

// IsInt reports whether id is an integer id.
func (id ID) IsInt() bool { return id.kind == idInt }

// Int returns the integer value of an integer id, and 0 otherwise.
func (id ID) Int() int64 { return id.num }

// Str returns the string value of a string id, and "" otherwise.
func (id ID) Str() string { return id.str }

// String formats id as it appears on the wire.
func (id ID) String() string { return string(id.appendJSON(nil)) }

// MarshalJSON encodes id as it appears on the wire.
func (id ID) MarshalJSON() ([]byte, error) { return id.appendJSON(nil), nil }

// UnmarshalJSON decodes a string or integer id; null yields the zero ID.
func (id *ID) UnmarshalJSON(b []byte) error {
	v, err := parseID(b)
	if err != nil {
		return err
	}
	*id = v
	return nil
}

func (id ID) appendJSON(dst []byte) []byte {
	switch id.kind {
	case idInt:
		return strconv.AppendInt(dst, id.num, 10)
	case idString:
		b, err := jsontext.AppendQuote(dst, id.str)
		if err != nil { // invalid UTF-8: quote it lossily rather than fail a write
			return strconv.AppendQuote(dst, id.str)
		}
		return b
	}
	return append(dst, "null"...)
}

var errBadID = errors.New("id must be a string or an integer")

func parseID(raw []byte) (ID, error) {
	if len(raw) == 0 {
		return ID{}, errBadID
	}
	switch raw[0] {
	case '"':
		var buf [64]byte
		s, err := jsontext.AppendUnquote(buf[:0], raw)
		if err != nil {
			return ID{}, err
		}
		return StringID(string(s)), nil
	case 'n':
		return ID{}, nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if string(raw) == "-0" { // serde_json reads -0 as a float
			return ID{}, errBadID
		}
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return ID{}, fmt.Errorf("id %s is not a 64-bit integer", raw)
		}
		return Int64ID(n), nil
	}
	return ID{}, errBadID
}

// Trace is the W3C trace context that a request may carry in its "trace"
// member. The engine carries it from an inbound request into the handler's
// context, and from a caller's context onto outgoing requests.
type Trace struct {
	Traceparent string `json:"traceparent,omitempty"`
	Tracestate  string `json:"tracestate,omitempty"`
}

// Request is an inbound or outbound request or notification. A request has a
// valid ID; a notification has none.
type Request struct {
	ID     ID
	Method string
	// Params holds the exact bytes of the "params" member, or nil when the
	// member was absent. Handlers decode it once into their own type.
	Params jsontext.Value
	// Trace is the request's trace context, or nil.
	Trace *Trace
}

// IsCall reports whether r expects a response.
func (r *Request) IsCall() bool { return r.ID.IsValid() }

// Response is the answer to a request: a result or an error.
type Response struct {
	ID ID
	// Result holds the exact bytes of the "result" member; nil for an error.
	Result jsontext.Value
	// Error is the remote error; nil for a result.
	Error *Error
}

// Message is a decoded message: a *Request or a *Response.
type Message interface{ isMessage() }

func (*Request) isMessage()  {}
func (*Response) isMessage() {}

// appendRequest encodes r without a "jsonrpc" member, as Codex does.
func appendRequest(dst []byte, r *Request) []byte {
	dst = append(dst, '{')
	if r.ID.IsValid() {
		dst = append(dst, `"id":`...)
		dst = r.ID.appendJSON(dst)
		dst = append(dst, ',')
	}
	dst = append(dst, `"method":`...)
	dst, _ = jsontext.AppendQuote(dst, r.Method)
	if r.Params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, r.Params...)
	}
	if r.Trace != nil {
		dst = appendTrace(dst, r.Trace)
	}
	return append(dst, '}')
}

// appendTrace appends the ,"trace":{...} member.
func appendTrace(dst []byte, t *Trace) []byte {
	dst = append(dst, `,"trace":{`...)
	sep := false
	if t.Traceparent != "" {
		dst = append(dst, `"traceparent":`...)
		dst, _ = jsontext.AppendQuote(dst, t.Traceparent)
		sep = true
	}
	if t.Tracestate != "" {
		if sep {
			dst = append(dst, ',')
		}
		dst = append(dst, `"tracestate":`...)
		dst, _ = jsontext.AppendQuote(dst, t.Tracestate)
	}
	return append(dst, '}')
}

// appendResponse encodes r without a "jsonrpc" member, as Codex does.
func appendResponse(dst []byte, r *Response) []byte {
	dst = append(dst, `{"id":`...)
	dst = r.ID.appendJSON(dst)
	if r.Error != nil {
		dst = append(dst, `,"error":`...)
		dst = r.Error.appendJSON(dst)
	} else {
		dst = append(dst, `,"result":`...)
		if r.Result == nil {
			dst = append(dst, "null"...)
		} else {
			dst = append(dst, r.Result...)
		}
	}
	return append(dst, '}')
}

// EncodeMessage returns the wire form of a *Request or *Response.
func EncodeMessage(m Message) []byte {
	switch m := m.(type) {
	case *Request:
		return appendRequest(nil, m)
	case *Response:
		return appendResponse(nil, m)
	}
	return nil
}
