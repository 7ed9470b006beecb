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
// method and returns the canonical params: an object holding the known
// members that were given and not null, with enums as strings. A method
// without a shape gets its params back unchanged.
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
	var out []byte
	out, err = s.check(out, n, "", true)
	if err != nil {
		return nil, err
	}
	return out, nil
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
		return "boolean `" + n.text + "`"
	case '"':
		return "string " + strconv.Quote(n.text)
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
		return n.text
	case '"':
		s := n.text
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

// check appends the canonical form of n, which must fit s, to out.
func (s *Shape) check(out []byte, n *node, path string, top bool) ([]byte, error) {
	mismatch := func() ([]byte, error) {
		return nil, paramsErr("%s: expected %s, got %s", where(path), s.expectation(), describe(n))
	}
	switch s.kind {
	case kindString:
		if n.kind != '"' {
			return mismatch()
		}
		return jsontext.AppendQuote(out, n.text)
	case kindBool:
		if n.kind != 't' && n.kind != 'f' {
			return mismatch()
		}
		return append(out, n.text...), nil
	case kindUint:
		if n.kind != '0' {
			return mismatch()
		}
		v, err := parseUint(n.text)
		if err != nil {
			return nil, paramsErr("%s: %v, got %s", where(path), err, n.text)
		}
		return strconv.AppendUint(out, v, 10), nil
	case kindBytes:
		if n.kind != '"' {
			return mismatch()
		}
		if err := CheckBase64(n.text); err != nil {
			return nil, paramsErr("%s: expected a base64 string, got %s: %v", where(path), describe(n), err)
		}
		return jsontext.AppendQuote(out, n.text)
	case kindArray:
		if n.kind != '[' {
			return mismatch()
		}
		out = append(out, '[')
		for i, e := range n.elems {
			if i > 0 {
				out = append(out, ',')
			}
			var err error
			if out, err = s.elem.check(out, e, fmt.Sprintf("%s[%d]", where(path), i), false); err != nil {
				return nil, err
			}
		}
		return append(out, ']'), nil
	case kindMap:
		if n.kind != '{' {
			return mismatch()
		}
		out = append(out, '{')
		for i, m := range n.members {
			if i > 0 {
				out = append(out, ',')
			}
			out, _ = jsontext.AppendQuote(out, m.name)
			out = append(out, ':')
			var err error
			if out, err = s.elem.check(out, m.value, join(where(path), m.name), false); err != nil {
				return nil, err
			}
		}
		return append(out, '}'), nil
	case kindEnum:
		return s.checkEnum(out, n, path)
	case kindOpaque:
		if n.kind != '{' && n.kind != '[' {
			return nil, paramsErr("%s: expected an object, got %s", where(path), describe(n))
		}
		return appendNode(out, n), nil
	case kindStruct:
		switch n.kind {
		case '{':
			return s.checkObject(out, n, path)
		case '[':
			return s.checkPositional(out, n, path, top)
		}
		return mismatch()
	}
	return mismatch()
}

func (s *Shape) checkEnum(out []byte, n *node, path string) ([]byte, error) {
	name := ""
	switch {
	case n.kind == '"':
		name = n.text
	case n.kind == '{' && len(n.members) == 1 && n.members[0].value.kind == 'n':
		// serde's externally tagged form of a unit variant.
		name = n.members[0].name
	default:
		return nil, paramsErr("%s: expected %s, got %s", where(path), s.expectation(), describe(n))
	}
	for _, v := range s.variants {
		if v == name {
			return jsontext.AppendQuote(out, name)
		}
	}
	return nil, unknownVariant(name, s.variants)
}

// checkObject checks members in the order they came (serde reports the
// first member that does not fit), then the missing ones in declaration
// order.
func (s *Shape) checkObject(out []byte, n *node, path string) ([]byte, error) {
	given := make([]*node, len(s.fields))
	for _, m := range n.members {
		for i, f := range s.fields {
			if f.Name == m.name && !f.positional {
				given[i] = m.value
				if _, err := f.checkValue(nil, m.value, path); err != nil {
					return nil, err
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
	return s.emit(out, given, path)
}

// checkPositional checks a struct sent as an array of its members.
func (s *Shape) checkPositional(out []byte, n *node, path string, top bool) ([]byte, error) {
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
		if _, err := s.fields[i].checkValue(nil, e, path); err != nil {
			return nil, err
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
	return s.emit(out, given, path)
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

// emit writes the canonical object of the members given.
func (s *Shape) emit(out []byte, given []*node, path string) ([]byte, error) {
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
		out, _ = jsontext.AppendQuote(out, f.Name)
		out = append(out, ':')
		var err error
		if out, err = f.checkValue(out, v, path); err != nil {
			return nil, err
		}
	}
	return append(out, '}'), nil
}

// checkValue checks one member's value (null only for an Option).
func (f Field) checkValue(out []byte, v *node, path string) ([]byte, error) {
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
	return f.Shape.check(out, v, p, false)
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

// CheckBase64 reports why s is not canonical standard base64 (with
// padding, no trailing bits set, nothing else), as Codex decodes it.
func CheckBase64(s string) error {
	if len(s)%4 != 0 {
		for i := 0; i < len(s); i++ {
			if !isBase64(s[i]) && s[i] != '=' {
				return fmt.Errorf("invalid character %q at offset %d", s[i], i)
			}
		}
		return fmt.Errorf("its length %d is not a multiple of 4", len(s))
	}
	pad := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isBase64(c):
			if pad > 0 {
				return fmt.Errorf("padding before the end, at offset %d", i-pad)
			}
		case c == '=':
			pad++
			if pad > 2 || i < len(s)-2 {
				return fmt.Errorf("padding before the end, at offset %d", i)
			}
		default:
			return fmt.Errorf("invalid character %q at offset %d", c, i)
		}
	}
	if pad > 0 {
		last := len(s) - pad - 1
		v := base64Value(s[last])
		if (pad == 1 && v&0x3 != 0) || (pad == 2 && v&0xf != 0) {
			return fmt.Errorf("the last character %q at offset %d has bits set past the end of the data", s[last], last)
		}
	}
	return nil
}

func isBase64(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/'
}

func base64Value(c byte) byte {
	switch {
	case c >= 'A' && c <= 'Z':
		return c - 'A'
	case c >= 'a' && c <= 'z':
		return c - 'a' + 26
	case c >= '0' && c <= '9':
		return c - '0' + 52
	case c == '+':
		return 62
	}
	return 63
}

// node is a parsed JSON value. Params were already validated by the
// engine (well-formed, bounded, no duplicate names), so the tree is small
// and its strings are decoded.
type node struct {
	kind    byte // n t f 0 " [ {
	text    string
	elems   []*node
	members []member
}

type member struct {
	name  string
	value *node
}

func parseNode(raw []byte) (*node, error) {
	d := jsontext.NewDecoder(bytes.NewReader(raw))
	n, err := readNode(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.ReadToken(); err == nil {
		return nil, errors.New("trailing data")
	}
	return n, nil
}

func readNode(d *jsontext.Decoder) (*node, error) {
	switch d.PeekKind() {
	case '{', '[':
		return readComposite(d)
	}
	tok, err := d.ReadToken()
	if err != nil {
		return nil, err
	}
	return scalar(tok), nil
}

// appendNode writes n back as JSON.
func appendNode(out []byte, n *node) []byte {
	switch n.kind {
	case '"':
		out, _ = jsontext.AppendQuote(out, n.text)
		return out
	case '[':
		out = append(out, '[')
		for i, e := range n.elems {
			if i > 0 {
				out = append(out, ',')
			}
			out = appendNode(out, e)
		}
		return append(out, ']')
	case '{':
		out = append(out, '{')
		for i, m := range n.members {
			if i > 0 {
				out = append(out, ',')
			}
			out, _ = jsontext.AppendQuote(out, m.name)
			out = append(out, ':')
			out = appendNode(out, m.value)
		}
		return append(out, '}')
	}
	return append(out, n.text...)
}

func scalar(tok jsontext.Token) *node {
	switch k := tok.Kind(); k {
	case 'n':
		return &node{kind: 'n', text: "null"}
	case 't':
		return &node{kind: 't', text: "true"}
	case 'f':
		return &node{kind: 'f', text: "false"}
	case '"':
		return &node{kind: '"', text: tok.String()}
	default:
		return &node{kind: '0', text: tok.String()}
	}
}

func readComposite(d *jsontext.Decoder) (*node, error) {
	tok, err := d.ReadToken()
	if err != nil {
		return nil, err
	}
	n := &node{kind: byte(tok.Kind())}
	for {
		switch d.PeekKind() {
		case '}', ']':
			_, err := d.ReadToken()
			return n, err
		}
		var name string
		if n.kind == '{' {
			t, err := d.ReadToken()
			if err != nil {
				return nil, err
			}
			name = t.String()
		}
		v, err := readNode(d)
		if err != nil {
			return nil, err
		}
		if n.kind == '{' {
			n.members = append(n.members, member{name: name, value: v})
		} else {
			n.elems = append(n.elems, v)
		}
	}
}
