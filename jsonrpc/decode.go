package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// Default limits of the bounded decoder.
const (
	DefaultMaxValues = 256 * 1024
	DefaultMaxDepth  = 128
)

// Limits bound what one message may cost to decode. The zero value means the
// defaults.
type Limits struct {
	// MaxValues is the budget of JSON values per message: the root, each
	// array element and each member value count one; member names are free.
	MaxValues int
	// MaxDepth caps the nesting of objects and arrays.
	MaxDepth int
}

func (l Limits) withDefaults() Limits {
	if l.MaxValues <= 0 {
		l.MaxValues = DefaultMaxValues
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	return l
}

// DecodeError says why a message was rejected and where: the byte offset in
// the message and, when inside a value, its JSON Pointer.
type DecodeError struct {
	Offset  int64
	Pointer string
	Reason  string
	// ID is the message's id when it was read before the failure, so that
	// the rejection can be answered; otherwise the zero ID.
	ID ID
	// Request reports whether the message had a "method" member before the
	// failure (or had one later; the decoder stops early, so false may also
	// mean "unknown").
	Request bool
}

func (e *DecodeError) Error() string {
	if e.Pointer != "" {
		return fmt.Sprintf("invalid message at byte %d (%s): %s", e.Offset, e.Pointer, e.Reason)
	}
	return fmt.Sprintf("invalid message at byte %d: %s", e.Offset, e.Reason)
}

// Is lets errors.Is(err, ErrInvalidMessage) match any DecodeError.
func (e *DecodeError) Is(target error) bool { return target == ErrInvalidMessage }

// ErrInvalidMessage matches every *DecodeError.
var ErrInvalidMessage = errors.New("jsonrpc: invalid message")

var decoderFree freeList[decodeState]

type decodeState struct {
	buf    bytes.Buffer
	dec    jsontext.Decoder
	input  []byte
	values int
	lim    Limits
}

// Decode parses one message in a single streaming pass over data.
//
// Every JSON value counts against lim.MaxValues, nesting is capped at
// lim.MaxDepth, and duplicate member names are rejected at every depth, all
// before any allocation proportional to the message: the decoder keeps no tree,
// and the returned Params, Result and Error.Data alias data itself, so numbers
// and strings survive byte for byte. The caller must not modify data while
// the message is in use.
func Decode(data []byte, lim Limits) (Message, error) {
	st := decoderFree.get()
	st.lim = lim.withDefaults()
	st.values = 0
	st.input = data
	// Reusing a bytes.Buffer wrapper lets jsontext parse in place instead of
	// copying the message into its own buffer.
	st.buf = *bytes.NewBuffer(data)
	st.dec.Reset(&st.buf)
	m, err := st.message()
	st.input = nil
	st.buf = bytes.Buffer{}
	st.dec.Reset(&st.buf)
	decoderFree.put(st)
	return m, err
}

// fields collects the top-level members while the message is being read.
type fields struct {
	id                  ID
	hasID, nullID       bool
	method              string
	hasMethod           bool
	params, result      jsontext.Value
	hasResult, hasError bool
	err                 *Error
	trace               *Trace
}

func (st *decodeState) fail(reason string, f *fields) error {
	e := &DecodeError{Offset: st.dec.InputOffset(), Reason: reason}
	if p := st.dec.StackPointer(); st.dec.StackDepth() > 1 || len(p) > 0 {
		e.Pointer = string(p)
	}
	if f != nil {
		e.ID = f.id
		e.Request = f.hasMethod
	}
	return e
}

func (st *decodeState) wrap(err error, f *fields) error {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		reason := se.Err.Error()
		if errors.Is(se.Err, jsontext.ErrDuplicateName) {
			reason = "duplicate member name"
		}
		e := &DecodeError{Offset: se.ByteOffset, Pointer: string(se.JSONPointer), Reason: reason}
		if f != nil {
			e.ID, e.Request = f.id, f.hasMethod
		}
		return e
	}
	return st.fail(err.Error(), f)
}

func (st *decodeState) count(f *fields) error {
	st.values++
	if st.values > st.lim.MaxValues {
		return st.fail(fmt.Sprintf("more than %d JSON values", st.lim.MaxValues), f)
	}
	return nil
}

func (st *decodeState) message() (Message, error) {
	d := &st.dec
	if d.PeekKind() != '{' {
		if len(bytes.TrimSpace(st.input)) == 0 {
			return nil, &DecodeError{Reason: "empty message"}
		}
		if k := d.PeekKind(); k == jsontext.KindInvalid {
			_, err := d.ReadToken()
			return nil, st.wrap(err, nil)
		}
		return nil, st.fail("message must be a JSON object", nil)
	}
	if _, err := d.ReadToken(); err != nil {
		return nil, st.wrap(err, nil)
	}
	var f fields
	if err := st.count(&f); err != nil {
		return nil, err
	}
	for d.PeekKind() != '}' {
		name, err := d.ReadValue() // names are free
		if err != nil {
			return nil, st.wrap(err, &f)
		}
		if err := st.member(name, &f); err != nil {
			return nil, err
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return nil, st.wrap(err, &f)
	}
	// Anything after the object (other than whitespace) is an error.
	if d.PeekKind() != jsontext.KindInvalid {
		return nil, st.fail("data after the message", &f)
	}
	if rest := d.UnreadBuffer(); len(bytes.TrimSpace(rest)) != 0 {
		return nil, st.fail("data after the message", &f)
	}
	return st.classify(&f)
}

func (st *decodeState) member(name jsontext.Value, f *fields) error {
	name = plainName(name) // "\u0069d" is "id" too
	switch string(name) {  // compiles to comparisons without allocating
	case `"id"`:
		raw, err := st.rawValue(f)
		if err != nil {
			return err
		}
		if raw[0] == '{' || raw[0] == '[' {
			return st.fail("id must be a string or an integer", f)
		}
		id, err := parseID(raw)
		if err != nil {
			return st.fail(err.Error(), f)
		}
		if !id.IsValid() {
			f.nullID = true
		}
		f.id, f.hasID = id, id.IsValid()
	case `"method"`:
		raw, err := st.rawValue(f)
		if err != nil {
			return err
		}
		if raw[0] != '"' {
			return st.fail("method must be a string", f)
		}
		f.method = unquote(raw)
		f.hasMethod = true
	case `"params"`:
		raw, err := st.rawValue(f)
		if err != nil {
			return err
		}
		f.params = raw
	case `"result"`:
		raw, err := st.rawValue(f)
		if err != nil {
			return err
		}
		f.result, f.hasResult = raw, true
	case `"error"`:
		raw, err := st.rawValue(f)
		if err != nil {
			return err
		}
		f.hasError = true
		if string(raw) != "null" {
			e, reason := parseErrorObject(raw)
			if e == nil {
				return st.fail(reason, f)
			}
			f.err = e
		}
	case `"trace"`:
		raw, err := st.rawValue(f)
		if err != nil {
			return err
		}
		if string(raw) != "null" {
			t, reason := parseTrace(raw)
			if t == nil {
				return st.fail(reason, f)
			}
			f.trace = t
		}
	default:
		// "jsonrpc" and unknown members are accepted and ignored, but they
		// still count against the budget.
		if _, err := st.rawValue(f); err != nil {
			return err
		}
	}
	return nil
}

// rawValue reads the next value while counting it and everything inside it,
// and returns its exact bytes.
func (st *decodeState) rawValue(f *fields) (jsontext.Value, error) {
	d := &st.dec
	switch d.PeekKind() {
	case '{', '[':
	default:
		v, err := d.ReadValue()
		if err != nil {
			return nil, st.wrap(err, f)
		}
		if err := st.count(f); err != nil {
			return nil, err
		}
		return v, nil
	}
	start := d.InputOffset()
	base := d.StackDepth()
	for {
		kind := d.PeekKind()
		if kind == '}' || kind == ']' {
			if _, err := d.ReadToken(); err != nil {
				return nil, st.wrap(err, f)
			}
			if d.StackDepth() == base {
				break
			}
			continue
		}
		// Inside an object, an even count means the next token is a name,
		// which is free.
		if k, n := d.StackIndex(d.StackDepth()); d.StackDepth() > base && k == '{' && n%2 == 0 {
			if _, err := d.ReadToken(); err != nil {
				return nil, st.wrap(err, f)
			}
			continue
		}
		if err := st.count(f); err != nil {
			return nil, err
		}
		if kind == '{' || kind == '[' {
			// Depth counts the message object itself as level 1.
			if d.StackDepth()+1 > st.lim.MaxDepth {
				return nil, st.fail(fmt.Sprintf("nesting deeper than %d", st.lim.MaxDepth), f)
			}
		}
		if _, err := d.ReadToken(); err != nil {
			return nil, st.wrap(err, f)
		}
		if d.StackDepth() == base {
			break
		}
	}
	raw := st.input[start:d.InputOffset()]
	// The offset before the value points just past the member name; skip the
	// colon and whitespace between them.
	raw = bytes.TrimLeft(raw, " \t\r\n:")
	return raw, nil
}

// plainName returns a member name with its escapes undone ("\u0063ode" is
// "code"), still quoted, so that it can be compared as written.
func plainName(name []byte) []byte {
	if bytes.IndexByte(name, '\\') < 0 {
		return name
	}
	return []byte(`"` + unquote(name) + `"`)
}

func unquote(raw []byte) string {
	if len(raw) >= 2 && bytes.IndexByte(raw[1:len(raw)-1], '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var buf [64]byte
	s, err := jsontext.AppendUnquote(buf[:0], raw)
	if err != nil {
		return string(raw)
	}
	return string(s)
}

func (st *decodeState) classify(f *fields) (Message, error) {
	switch {
	case f.hasMethod && f.nullID:
		return nil, &DecodeError{Request: true, Reason: "id must be a string or an integer"}
	case f.hasMethod:
		return &Request{ID: f.id, Method: f.method, Params: f.params, Trace: f.trace}, nil
	case f.hasResult:
		if !f.hasID {
			return nil, &DecodeError{Reason: "response without an id"}
		}
		return &Response{ID: f.id, Result: f.result}, nil
	case f.hasError && f.err != nil:
		if !f.hasID && !f.nullID {
			return nil, &DecodeError{Reason: "error response without an id"}
		}
		return &Response{ID: f.id, Error: f.err}, nil
	case f.hasError:
		return nil, &DecodeError{ID: f.id, Reason: "error must be an object with code and message"}
	}
	return nil, &DecodeError{ID: f.id, Reason: `message has none of "method", "result" or "error"`}
}

// parseErrorObject reads an error object that the budgeted walk has already
// validated; it allocates only the message and keeps data as raw bytes.
func parseErrorObject(raw []byte) (*Error, string) {
	if raw[0] != '{' {
		return nil, "error must be an object"
	}
	d := jsontext.NewDecoder(bytes.NewBuffer(raw))
	if _, err := d.ReadToken(); err != nil {
		return nil, err.Error()
	}
	e := &Error{}
	var hasCode, hasMessage bool
	for d.PeekKind() != '}' {
		name, err := d.ReadValue()
		if err != nil {
			return nil, err.Error()
		}
		v, err := d.ReadValue()
		if err != nil {
			return nil, err.Error()
		}
		switch string(plainName(name)) {
		case `"code"`:
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil || string(v) == "-0" { // -0 is a float to serde
				return nil, "error.code must be an integer"
			}
			e.Code, hasCode = n, true
		case `"message"`:
			if v[0] != '"' {
				return nil, "error.message must be a string"
			}
			e.Message, hasMessage = unquote(v), true
		case `"data"`:
			e.Data = v
		}
	}
	if !hasCode || !hasMessage {
		return nil, "error must have a code and a message"
	}
	return e, ""
}

func parseTrace(raw []byte) (*Trace, string) {
	if raw[0] != '{' {
		return nil, "trace must be an object"
	}
	d := jsontext.NewDecoder(bytes.NewBuffer(raw))
	if _, err := d.ReadToken(); err != nil {
		return nil, err.Error()
	}
	t := &Trace{}
	for d.PeekKind() != '}' {
		name, err := d.ReadValue()
		if err != nil {
			return nil, err.Error()
		}
		v, err := d.ReadValue()
		if err != nil {
			return nil, err.Error()
		}
		if v[0] != '"' {
			if string(v) == "null" {
				continue
			}
			if n := string(plainName(name)); n == `"traceparent"` || n == `"tracestate"` {
				return nil, "trace members must be strings"
			}
			continue
		}
		switch string(plainName(name)) {
		case `"traceparent"`:
			t.Traceparent = unquote(v)
		case `"tracestate"`:
			t.Tracestate = unquote(v)
		}
	}
	return t, ""
}
