package execproto

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// Params checking.
//
// Codex decodes params with serde, whose rules Go's decoders do not share:
//   - an absent member is not a zero one: a required member that is absent
//     is "missing field `x`";
//   - only an Option member may be null; null for a string, a boolean, a
//     list or a member with a default is refused;
//   - a struct may be sent as an array of its members in declaration order
//     (positional params); only trailing members with a default may be
//     left out, and nothing may follow the last member;
//   - an enum may be sent as its name or as {"name": null};
//   - unknown members are ignored.
//
// Each method's params are described by a Shape (shapes.go), and
// CheckParams turns what a client sent into the canonical object the Go
// types decode without surprise, or into a ParamsError in the client's own
// terms: "offset: expected a non-negative integer, got -1". Its messages
// never name Go types. Those that Codex words the same way for the same
// reason ("missing field `x`", "unknown variant `x`, expected `a` or `b`",
// and the messages about the params value as a whole) are Codex's, word for
// word.

// ParamsError is a params value that does not fit its method (-32602).
type ParamsError struct{ Message string }

func (e *ParamsError) Error() string { return e.Message }

func paramsErr(format string, a ...any) *ParamsError {
	return &ParamsError{Message: fmt.Sprintf(format, a...)}
}

type shapeKind uint8

const (
	kindString shapeKind = iota
	kindBool
	kindUint   // u64 or usize: 0 .. 2^64-1
	kindBytes  // a base64 string (Codex's ByteChunk)
	kindArray  // of elem
	kindMap    // string keys to elem
	kindStruct // fields
	kindEnum   // one of variants, as a string or {"variant": null}
	kindOpaque // a Codex struct codexd does not interpret: any object or array
	kindUnit   // no params: absent, null or {}
)

// Shape describes the JSON a params value, or one of its members, must
// have.
type Shape struct {
	kind     shapeKind
	name     string // serde's name of a struct, for whole-params messages
	fields   []Field
	elem     *Shape
	variants []string
}

// Field is one member of a struct shape.
type Field struct {
	Name  string
	Shape *Shape
	// Option: null means "none" and the member may be absent from an
	// object (but not from an array).
	Option bool
	// Default: the member may be absent from an object and from the end of
	// an array.
	Default bool
	// positional: the member exists only in the array form; in an object
	// a member of that name is unknown (and ignored).
	positional bool
}

var (
	stringShape = &Shape{kind: kindString}
	boolShape   = &Shape{kind: kindBool}
	uintShape   = &Shape{kind: kindUint}
	bytesShape  = &Shape{kind: kindBytes}
	unitShape   = &Shape{kind: kindUnit}
)

func arrayOf(s *Shape) *Shape { return &Shape{kind: kindArray, elem: s} }
func mapOf(s *Shape) *Shape   { return &Shape{kind: kindMap, elem: s} }
func enumOf(variants ...string) *Shape {
	return &Shape{kind: kindEnum, variants: variants}
}
func opaque(name string) *Shape { return &Shape{kind: kindOpaque, name: name} }
func structOf(name string, fields ...Field) *Shape {
	return &Shape{kind: kindStruct, name: name, fields: fields}
}

func req(name string, s *Shape) Field { return Field{Name: name, Shape: s} }
func opt(name string, s *Shape) Field { return Field{Name: name, Shape: s, Option: true} }
func optDefault(name string, s *Shape) Field {
	return Field{Name: name, Shape: s, Option: true, Default: true}
}
func withDefault(name string, s *Shape) Field { return Field{Name: name, Shape: s, Default: true} }

// CheckParams checks raw (absent params are nil) against the shape of
// method and returns params the Go types decode as Codex would read them:
// raw itself when it is an object of plain values (the common case, which
// costs no copy), else a canonical object of the known members that were
// given, with enums as strings and -0 as 0. A method without a shape gets
// its params back unchanged.
func CheckParams(method string, raw jsontext.Value) (jsontext.Value, error) {
	s := ParamsShapes[method]
	if s == nil {
		return raw, nil
	}
	return s.Check(raw)
}

// Check checks raw against s; see CheckParams.
func (s *Shape) Check(raw jsontext.Value) (jsontext.Value, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		trimmed = []byte("null")
	}
	n, err := parseNode(trimmed)
	if err != nil {
		return nil, paramsErr("params: %v", err)
	}
	if s.kind == kindUnit {
		return nil, checkUnit(n)
	}
	if s.kind != kindStruct {
		panic("execproto: params shapes are structs or units")
	}
	switch n.kind {
	case '{', '[':
	default:
		return nil, paramsErr("invalid type: %s, expected struct %s", serdeUnexpected(n), s.name)
	}
	// A first pass validates and finds out whether the params need
	// rewriting; only then does a second one write the canonical form.
	c := &checker{}
	if _, err := c.check(nil, s, n, "", true); err != nil {
		return nil, err
	}
	if !c.rewrite {
		return trimmed, nil
	}
	c.emit = true
	return c.check(nil, s, n, "", true)
}

// checkUnit accepts what serde accepts for a method without params.
func checkUnit(n *node) error {
	switch {
	case n.kind == 'n':
		return nil
	case n.kind == '{' && len(n.members) == 0:
		return nil
	case n.kind == '{':
		return paramsErr("invalid type: map, expected unit")
	case n.kind == '[':
		return paramsErr("invalid type: sequence, expected unit")
	}
	return paramsErr("invalid type: %s, expected unit", serdeUnexpected(n))
}

// serdeUnexpected words a value the way serde_json's "invalid type" does.
func serdeUnexpected(n *node) string {
	switch n.kind {
	case 'n':
		return "null"
	case 't', 'f':
		return "boolean `" + n.text() + "`"
	case '"':
		return "string " + strconv.Quote(n.text())
	case '0':
		return "number"
	case '[':
		return "sequence"
	}
	return "map"
}

// describe words a value for "got ..." in our messages.
func describe(n *node) string {
	switch n.kind {
	case 'n', 't', 'f', '0':
		return n.text()
	case '"':
		s := n.text()
		if len(s) > 40 {
			s = s[:40] + "…"
		}
		return strconv.Quote(s)
	case '[':
		return "an array"
	}
	return "an object"
}

func (s *Shape) expectation() string {
	switch s.kind {
	case kindString:
		return "a string"
	case kindBool:
		return "a boolean"
	case kindUint:
		return "a non-negative integer"
	case kindBytes:
		return "a base64 string"
	case kindArray:
		return "an array"
	case kindMap, kindStruct:
		return "an object"
	case kindEnum:
		switch len(s.variants) {
		case 1:
			return `"` + s.variants[0] + `"`
		case 2:
			return `"` + s.variants[0] + `" or "` + s.variants[1] + `"`
		}
		return "one of " + quoteList(s.variants, `"`)
	case kindOpaque:
		return "an object"
	}
	return "nothing"
}

func quoteList(vs []string, q string) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = q + v + q
	}
	return strings.Join(parts, ", ")
}

// unknownVariant is serde's message, which clients already know.
func unknownVariant(got string, variants []string) *ParamsError {
	var want string
	switch len(variants) {
	case 1:
		want = "`" + variants[0] + "`"
	case 2:
		want = "`" + variants[0] + "` or `" + variants[1] + "`"
	default:
		want = "one of " + quoteList(variants, "`")
	}
	return paramsErr("unknown variant `%s`, expected %s", got, want)
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func where(path string) string {
	if path == "" {
		return "params"
	}
	return path
}

// checker walks params against a shape. Its first pass (emit false) only
// validates, and notes whether the input differs from its canonical form;
// its second (emit true) writes that form.
type checker struct {
	emit    bool
	rewrite bool
}

// add appends b to out when writing.
func (c *checker) add(out []byte, b ...byte) []byte {
	if c.emit {
		return append(out, b...)
	}
	return out
}

func (c *checker) addName(out []byte, name string) []byte {
	if c.emit {
		out, _ = jsontext.AppendQuote(out, name)
		out = append(out, ':')
	}
	return out
}

// check validates n against s (and appends its canonical form to out when
// writing).
func (c *checker) check(out []byte, s *Shape, n *node, path string, top bool) ([]byte, error) {
	mismatch := func() ([]byte, error) {
		return nil, paramsErr("%s: expected %s, got %s", where(path), s.expectation(), describe(n))
	}
	switch s.kind {
	case kindString:
		if n.kind != '"' {
			return mismatch()
		}
		return c.add(out, n.raw...), nil
	case kindBool:
		if n.kind != 't' && n.kind != 'f' {
			return mismatch()
		}
		return c.add(out, n.raw...), nil
	case kindUint:
		if n.kind != '0' {
			return mismatch()
		}
		v, err := parseUint(n.text())
		if err != nil {
			return nil, paramsErr("%s: %v, got %s", where(path), err, n.text())
		}
		if string(n.raw) == "-0" {
			c.rewrite = true // Go's decoder refuses -0 for an unsigned number
		}
		if c.emit {
			out = strconv.AppendUint(out, v, 10)
		}
		return out, nil
	case kindBytes:
		if n.kind != '"' {
			return mismatch()
		}
		if err := checkBase64String(n.raw); err != nil {
			return nil, paramsErr("%s: expected a base64 string, got %s: %v", where(path), describe(n), err)
		}
		return c.add(out, n.raw...), nil
	case kindArray:
		if n.kind != '[' {
			return mismatch()
		}
		out = c.add(out, '[')
		for i, e := range n.elems {
			if i > 0 {
				out = c.add(out, ',')
			}
			var err error
			if out, err = c.check(out, s.elem, e, fmt.Sprintf("%s[%d]", where(path), i), false); err != nil {
				return nil, err
			}
		}
		return c.add(out, ']'), nil
	case kindMap:
		if n.kind != '{' {
			return mismatch()
		}
		out = c.add(out, '{')
		for i, m := range n.members {
			if i > 0 {
				out = c.add(out, ',')
			}
			out = c.addName(out, m.name)
			var err error
			if out, err = c.check(out, s.elem, m.value, join(where(path), m.name), false); err != nil {
				return nil, err
			}
		}
		return c.add(out, '}'), nil
	case kindEnum:
		return c.checkEnum(out, s, n, path)
	case kindOpaque:
		if n.kind != '{' && n.kind != '[' {
			return nil, paramsErr("%s: expected an object, got %s", where(path), describe(n))
		}
		if c.emit {
			out = appendNode(out, n)
		}
		return out, nil
	case kindStruct:
		switch n.kind {
		case '{':
			return c.checkObject(out, s, n, path)
		case '[':
			c.rewrite = true
			return c.checkPositional(out, s, n, path, top)
		}
		return mismatch()
	}
	return mismatch()
}

func (c *checker) checkEnum(out []byte, s *Shape, n *node, path string) ([]byte, error) {
	name := ""
	switch {
	case n.kind == '"':
		name = n.text()
	case n.kind == '{' && len(n.members) == 1 && n.members[0].value.kind == 'n':
		// serde's externally tagged form of a unit variant.
		name = n.members[0].name
		c.rewrite = true
	default:
		return nil, paramsErr("%s: expected %s, got %s", where(path), s.expectation(), describe(n))
	}
	for _, v := range s.variants {
		if v == name {
			if c.emit {
				out, _ = jsontext.AppendQuote(out, name)
			}
			return out, nil
		}
	}
	return nil, unknownVariant(name, s.variants)
}

// checkObject checks members in the order they came (serde reports the
// first member that does not fit), then the missing ones in declaration
// order.
func (c *checker) checkObject(out []byte, s *Shape, n *node, path string) ([]byte, error) {
	given := make([]*node, len(s.fields))
	for _, m := range n.members {
		for i, f := range s.fields {
			if f.Name == m.name && !f.positional {
				given[i] = m.value
				if !c.emit {
					if _, err := c.checkValue(nil, f, m.value, path); err != nil {
						return nil, err
					}
				}
				break
			}
		}
	}
	for i, f := range s.fields {
		if given[i] == nil && !f.Option && !f.Default && !f.positional {
			return nil, paramsErr("missing field `%s`", f.Name)
		}
	}
	return c.emitFields(out, s, given, path)
}

// checkPositional checks a struct sent as an array of its members.
func (c *checker) checkPositional(out []byte, s *Shape, n *node, path string, top bool) ([]byte, error) {
	if len(n.elems) > len(s.fields) {
		if top {
			return nil, paramsErr("invalid length %d, expected fewer elements in array", len(n.elems))
		}
		return nil, paramsErr("%s: expected at most %d elements (%s), got %d",
			where(path), len(s.fields), s.fieldList(), len(n.elems))
	}
	given := make([]*node, len(s.fields))
	for i, e := range n.elems {
		given[i] = e
		if !c.emit {
			if _, err := c.checkValue(nil, s.fields[i], e, path); err != nil {
				return nil, err
			}
		}
	}
	for i := len(n.elems); i < len(s.fields); i++ {
		if !s.fields[i].Default {
			if top {
				elements := "elements"
				if len(s.fields) == 1 {
					elements = "element"
				}
				// serde counts up to the member it found missing.
				return nil, paramsErr("invalid length %d, expected struct %s with %d %s", i, s.name, len(s.fields), elements)
			}
			return nil, paramsErr("%s: expected at least %d elements (%s), got %d",
				where(path), i+1, s.fieldList(), len(n.elems))
		}
	}
	return c.emitFields(out, s, given, path)
}

func (s *Shape) fieldList() string {
	names := make([]string, 0, len(s.fields))
	for _, f := range s.fields {
		if !f.positional {
			names = append(names, f.Name)
		}
	}
	return strings.Join(names, ", ")
}

// emitFields writes the canonical object of the members given: known,
// present and not null.
func (c *checker) emitFields(out []byte, s *Shape, given []*node, path string) ([]byte, error) {
	if !c.emit {
		return out, nil
	}
	out = append(out, '{')
	first := true
	for i, f := range s.fields {
		v := given[i]
		if v == nil || f.positional || (v.kind == 'n' && f.Option) {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = c.addName(out, f.Name)
		var err error
		if out, err = c.checkValue(out, f, v, path); err != nil {
			return nil, err
		}
	}
	return append(out, '}'), nil
}

// checkValue checks one member's value (null only for an Option).
func (c *checker) checkValue(out []byte, f Field, v *node, path string) ([]byte, error) {
	p := join(path, f.Name)
	if f.positional {
		p = where(path) + " (last element)"
	}
	if v.kind == 'n' {
		if f.Option {
			return out, nil
		}
		return nil, paramsErr("%s: expected %s, got null", p, f.Shape.expectation())
	}
	return c.check(out, f.Shape, v, p, false)
}

// parseUint reads a JSON number as serde reads a u64: an integer (-0 is 0)
// that fits in 64 bits.
func parseUint(text string) (uint64, error) {
	if text == "-0" {
		return 0, nil
	}
	if strings.ContainsAny(text, ".eE-") {
		return 0, errors.New("expected a non-negative integer")
	}
	v, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		return 0, errors.New("expected an integer no larger than 18446744073709551615")
	}
	return v, nil
}
