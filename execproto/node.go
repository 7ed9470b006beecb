// A small JSON tree of the params, the input of the shape checker: the
// engine has already validated the bytes, so this only indexes them.

package execproto

import (
	"bytes"
	"errors"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// node is a parsed JSON value. Params were already validated by the
// engine (well-formed, bounded, no duplicate names). A scalar keeps its
// bytes as sent, which point into the params (no copy).
type node struct {
	kind    byte   // n t f 0 " [ {
	raw     []byte // scalars: the token as sent (a string with its quotes)
	elems   []*node
	members []member
}

type member struct {
	name  string
	value *node
}

// text is a scalar's value: a string unquoted, anything else as sent.
func (n *node) text() string {
	if n.kind != '"' {
		return string(n.raw)
	}
	return unquote(n.raw)
}

// parseNode reads params the engine has already validated. It is a small
// scanner rather than a full decoder: string ends are found with
// bytes.IndexByte, so that a large chunk costs about a memchr, and
// nothing is copied. It still refuses what is not JSON rather than trust
// its caller.
func parseNode(raw []byte) (*node, error) {
	p := &scanner{b: raw}
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.b) {
		return nil, errors.New("trailing data")
	}
	return n, nil
}

type scanner struct {
	b []byte
	i int
}

var errNotJSON = errors.New("not a JSON value")

func (p *scanner) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *scanner) value(depth int) (*node, error) {
	if depth > 10000 {
		return nil, errNotJSON
	}
	p.space()
	if p.i >= len(p.b) {
		return nil, errNotJSON
	}
	switch c := p.b[p.i]; c {
	case '{', '[':
		return p.composite(c, depth)
	case '"':
		raw, err := p.str()
		if err != nil {
			return nil, err
		}
		return &node{kind: '"', raw: raw}, nil
	case 'n', 't', 'f':
		for _, lit := range []string{"null", "true", "false"} {
			if bytes.HasPrefix(p.b[p.i:], []byte(lit)) {
				n := &node{kind: c, raw: p.b[p.i : p.i+len(lit)]}
				p.i += len(lit)
				return n, nil
			}
		}
		return nil, errNotJSON
	}
	start := p.i
	for p.i < len(p.b) && strings.IndexByte("+-.0123456789eE", p.b[p.i]) >= 0 {
		p.i++
	}
	if p.i == start {
		return nil, errNotJSON
	}
	return &node{kind: '0', raw: p.b[start:p.i]}, nil
}

// str returns a string token, quotes included.
func (p *scanner) str() ([]byte, error) {
	start := p.i
	j := p.i + 1
	for {
		k := bytes.IndexByte(p.b[j:], '"')
		if k < 0 {
			return nil, errNotJSON
		}
		j += k
		backslashes := 0
		for b := j - 1; b > start && p.b[b] == '\\'; b-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			p.i = j + 1
			return p.b[start:p.i], nil
		}
		j++
	}
}

func (p *scanner) composite(open byte, depth int) (*node, error) {
	n := &node{kind: open}
	closer := byte('}')
	if open == '[' {
		closer = ']'
	}
	p.i++
	p.space()
	if p.i < len(p.b) && p.b[p.i] == closer {
		p.i++
		return n, nil
	}
	for {
		var name string
		if open == '{' {
			p.space()
			if p.i >= len(p.b) || p.b[p.i] != '"' {
				return nil, errNotJSON
			}
			raw, err := p.str()
			if err != nil {
				return nil, err
			}
			name = unquote(raw)
			p.space()
			if p.i >= len(p.b) || p.b[p.i] != ':' {
				return nil, errNotJSON
			}
			p.i++
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		if open == '{' {
			n.members = append(n.members, member{name: name, value: v})
		} else {
			n.elems = append(n.elems, v)
		}
		p.space()
		if p.i >= len(p.b) {
			return nil, errNotJSON
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case closer:
			p.i++
			return n, nil
		default:
			return nil, errNotJSON
		}
	}
}

// unquote returns a string token's value.
func unquote(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	s, err := jsontext.AppendUnquote(nil, raw)
	if err != nil {
		return string(raw)
	}
	return string(s)
}

// appendNode writes n back as JSON.
func appendNode(out []byte, n *node) []byte {
	switch n.kind {
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
	return append(out, n.raw...)
}
