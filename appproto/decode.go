package appproto

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/jsonrpc"
)

// InvalidRequest is the -32600 error Codex answers a request whose params
// do not decode with: "Invalid request: " and what was wrong.
func InvalidRequest(msg string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid request: " + msg}
}

// obsoletePermissionProfile lists the methods whose params Codex refuses
// when they still carry the removed permissionProfile member.
var obsoletePermissionProfile = map[string]bool{
	MethodThreadStart: true, MethodThreadResume: true, MethodThreadFork: true, MethodTurnStart: true,
}

// DecodeParams decodes the raw params of method into P the way Codex does,
// and returns Codex's error when they do not fit: -32600 "Invalid request:
// missing field `x`" for a required member absent at any depth (Go's
// decoder alone cannot tell absent from zero), "missing field `params`"
// when there are none, serde-style type errors, and -32602 for the
// obsolete permissionProfile member. Unknown members are ignored, as serde
// does.
func DecodeParams[P any](method string, raw jsontext.Value) (P, error) {
	var p P
	t := reflect.TypeFor[P]()
	trimmed := bytes.TrimSpace(raw)
	if t == reflect.TypeFor[NoParams]() {
		switch {
		case len(trimmed) == 0, string(trimmed) == "null":
			return p, nil
		case trimmed[0] == '{' && isEmptyObject(trimmed):
			return p, nil
		case trimmed[0] == '{':
			return p, InvalidRequest("invalid type: map, expected unit")
		}
		return p, InvalidRequest("invalid type: " + serdeKind(trimmed) + ", expected unit")
	}
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return p, InvalidRequest("missing field `params`")
	}
	if trimmed[0] != '{' {
		return p, InvalidRequest(fmt.Sprintf("invalid type: %s, expected struct %s", serdeKind(trimmed), t.Name()))
	}
	if obsoletePermissionProfile[method] && hasMember(trimmed, "permissionProfile") {
		return p, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
			"`permissionProfile` is no longer supported for `%s`; use `permissions` with a named profile id instead", method)}
	}
	if err := checkRequired(t, trimmed, 0); err != nil {
		return p, InvalidRequest(err.Error())
	}
	if err := json.Unmarshal(trimmed, &p); err != nil {
		return p, InvalidRequest(describe(err, trimmed))
	}
	return p, nil
}

func isEmptyObject(v []byte) bool {
	dec := jsontext.NewDecoder(bytes.NewReader(v))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return false
	}
	tok, err := dec.ReadToken()
	return err == nil && tok.Kind() == '}'
}

// members returns the top-level member values of a JSON object (the last
// one for a repeated name, as serde keeps).
func members(obj []byte) (map[string]jsontext.Value, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.ReadToken(); err != nil {
		return nil, err
	} else if tok.Kind() != '{' {
		return nil, errors.New("not an object")
	}
	out := make(map[string]jsontext.Value)
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		name := tok.String()
		start := dec.InputOffset()
		if _, err := dec.ReadValue(); err != nil {
			return nil, err
		}
		// Values read from the decoder are only valid until the next read;
		// the offsets slice the caller's bytes, which stay.
		out[name] = trimValue(obj[start:dec.InputOffset()])
	}
	return out, nil
}

// trimValue strips what precedes a value between two offsets: white space
// and the ':' or ',' separator.
func trimValue(b []byte) []byte { return bytes.TrimLeft(bytes.TrimSpace(b), ":, \t\r\n") }

func hasMember(obj []byte, name string) bool {
	m, err := members(obj)
	if err != nil {
		return false
	}
	_, ok := m[name]
	return ok
}

var (
	unmarshalerType   = reflect.TypeFor[json.Unmarshaler]()
	jsontextValueType = reflect.TypeFor[jsontext.Value]()
)

// maxCheckDepth bounds the walk; the transport caps nesting already.
const maxCheckDepth = 64

// checkRequired reports the first required member missing in v, which is
// to be decoded into t, or in any object nested in it. A struct field is
// required unless it is a pointer, a jsontext.Value, or tagged omitzero or
// omitempty (those are the optional members of the schema). Types with
// their own UnmarshalJSON check themselves.
func checkRequired(t reflect.Type, v []byte, depth int) error {
	if depth > maxCheckDepth {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == jsontextValueType || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if v[0] != '{' {
			return nil // a type error, which the decoder reports
		}
		m, err := members(v)
		if err != nil {
			return err
		}
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if f.Anonymous && name == "" {
				if err := checkRequired(f.Type, v, depth+1); err != nil {
					return err
				}
				continue
			}
			if name == "" {
				name = f.Name
			}
			val, present := m[name]
			if !present {
				optional := f.Type.Kind() == reflect.Pointer || f.Type == jsontextValueType ||
					strings.Contains(opts, "omitzero") || strings.Contains(opts, "omitempty")
				if !optional {
					return decodeError("missing field `%s`", name)
				}
				continue
			}
			if err := checkRequired(f.Type, val, depth+1); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if v[0] != '[' {
			return nil
		}
		dec := jsontext.NewDecoder(bytes.NewReader(v))
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		for dec.PeekKind() != ']' {
			start := dec.InputOffset()
			if _, err := dec.ReadValue(); err != nil {
				return err
			}
			el := trimValue(v[start:dec.InputOffset()])
			if err := checkRequired(t.Elem(), el, depth+1); err != nil {
				return err
			}
		}
	case reflect.Map:
		if v[0] != '{' {
			return nil
		}
		m, err := members(v)
		if err != nil {
			return err
		}
		for _, val := range m {
			if err := checkRequired(t.Elem(), val, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// describe turns a decoding error into serde's wording where it can.
func describe(err error, doc []byte) string {
	var de *DecodeError
	if errors.As(err, &de) {
		return de.Msg
	}
	var se *json.SemanticError
	if errors.As(err, &se) {
		if errors.As(se.Err, &de) {
			return de.Msg
		}
		if se.GoType != nil && se.JSONKind != 0 {
			val := se.JSONValue
			if val == nil && (se.JSONKind == '0' || se.JSONKind == '"') {
				val = lookup(doc, se.JSONPointer)
			}
			got := kindName(se.JSONKind, val)
			if se.JSONKind == '0' && strings.HasPrefix(got, "integer ") && isInteger(se.GoType) {
				// An integer out of the type's range (-1 for a u64):
				// serde calls it a wrong value, not a wrong type.
				return fmt.Sprintf("invalid value: %s, expected %s", got, expectedName(se.GoType))
			}
			return fmt.Sprintf("invalid type: %s, expected %s", got, expectedName(se.GoType))
		}
		if se.Err != nil {
			return se.Err.Error()
		}
	}
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) {
		return syn.Err.Error()
	}
	return err.Error()
}

func isInteger(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

func kindName(k jsontext.Kind, v jsontext.Value) string {
	switch k {
	case '"':
		if v != nil {
			return serdeKind(v)
		}
		return "string"
	case '0':
		if v != nil {
			return serdeKind(v)
		}
		return "integer"
	case 't', 'f':
		if k == 't' {
			return "boolean `true`"
		}
		return "boolean `false`"
	case 'n':
		return "null"
	case '{':
		return "map"
	case '[':
		return "sequence"
	}
	return k.String()
}

func expectedName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64:
		return "i64"
	case reflect.Int32:
		return "i32"
	case reflect.Int16, reflect.Int8:
		return "i16"
	case reflect.Uint, reflect.Uint64:
		return "u64"
	case reflect.Uint32:
		return "u32"
	case reflect.Uint16, reflect.Uint8:
		return "u16"
	case reflect.Slice, reflect.Array:
		return "a sequence"
	case reflect.Map:
		return "a map"
	case reflect.Struct:
		return "struct " + t.Name()
	}
	return t.String()
}

// lookup returns the value at ptr in doc, or nil.
func lookup(doc []byte, ptr jsontext.Pointer) jsontext.Value {
	cur := trimValue(doc)
	for tok := range ptr.Tokens() {
		if len(cur) == 0 {
			return nil
		}
		switch cur[0] {
		case '{':
			m, err := members(cur)
			if err != nil {
				return nil
			}
			cur = m[tok]
		case '[':
			idx, err := strconv.Atoi(tok)
			if err != nil {
				return nil
			}
			dec := jsontext.NewDecoder(bytes.NewReader(cur))
			if _, err := dec.ReadToken(); err != nil {
				return nil
			}
			var el []byte
			for i := 0; dec.PeekKind() != ']'; i++ {
				start := dec.InputOffset()
				if _, err := dec.ReadValue(); err != nil {
					return nil
				}
				if i == idx {
					el = trimValue(cur[start:dec.InputOffset()])
					break
				}
			}
			cur = el
		default:
			return nil
		}
	}
	return cur
}
