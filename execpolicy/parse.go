package execpolicy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Decision is a rule's verdict.
type Decision string

const (
	Allow     Decision = "allow"
	Prompt    Decision = "prompt"
	Forbidden Decision = "forbidden"
)

func (d Decision) rank() int {
	switch d {
	case Forbidden:
		return 3
	case Prompt:
		return 2
	case Allow:
		return 1
	}
	return 0
}

// Rule is one prefix_rule.
type Rule struct {
	// Pattern holds, for each token position, the alternatives it accepts.
	Pattern       [][]string
	Decision      Decision
	Justification string
	// Source is "file:line" of the rule.
	Source string
}

// Matches says whether argv starts with the rule's pattern.
func (r Rule) Matches(argv []string) bool {
	if len(r.Pattern) == 0 || len(argv) < len(r.Pattern) {
		return false
	}
	for i, alts := range r.Pattern {
		ok := false
		for _, a := range alts {
			if a == argv[i] {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// maxDepth bounds nested lists; maxFile bounds a rules file.
const (
	maxDepth = 32
	maxFile  = 4 << 20
)

// Parse reads a rules file's content; name is used in errors and Sources.
func Parse(name string, src []byte) ([]Rule, error) {
	if len(src) > maxFile {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, maxFile)
	}
	if !utf8.Valid(src) {
		return nil, fmt.Errorf("%s: not UTF-8", name)
	}
	p := &parser{name: name, s: string(src), line: 1}
	var rules []Rule
	for {
		p.skip()
		if p.i >= len(p.s) {
			return rules, nil
		}
		line := p.line
		fn, err := p.ident()
		if err != nil {
			return nil, err
		}
		p.skip()
		if !p.eat('(') {
			return nil, p.errf("expected ( after %s", fn)
		}
		args, err := p.args()
		if err != nil {
			return nil, err
		}
		if fn != "prefix_rule" {
			continue // another rule kind of Codex's: not ours to apply
		}
		r, err := prefixRule(args)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: prefix_rule: %w", name, line, err)
		}
		r.Source = fmt.Sprintf("%s:%d", name, line)
		rules = append(rules, r)
	}
}

type value struct {
	str   *string
	list  []value
	isLst bool
	ident string
}

func prefixRule(args map[string]value) (Rule, error) {
	r := Rule{Decision: Allow}
	for k, v := range args {
		switch k {
		case "pattern":
			if !v.isLst || len(v.list) == 0 {
				return r, errors.New("pattern must be a non-empty list")
			}
			for _, tok := range v.list {
				switch {
				case tok.str != nil:
					r.Pattern = append(r.Pattern, []string{*tok.str})
				case tok.isLst && len(tok.list) > 0:
					var alts []string
					for _, a := range tok.list {
						if a.str == nil {
							return r, errors.New("a pattern's alternatives must be strings")
						}
						alts = append(alts, *a.str)
					}
					r.Pattern = append(r.Pattern, alts)
				default:
					return r, errors.New("a pattern token must be a string or a non-empty list of strings")
				}
			}
		case "decision":
			if v.str == nil {
				return r, errors.New("decision must be a string")
			}
			switch d := Decision(*v.str); d {
			case Allow, Prompt, Forbidden:
				r.Decision = d
			default:
				return r, fmt.Errorf("unknown decision %q (allow, prompt or forbidden)", *v.str)
			}
		case "justification":
			if v.str == nil {
				return r, errors.New("justification must be a string")
			}
			r.Justification = *v.str
		case "match", "not_match":
			if !v.isLst {
				return r, fmt.Errorf("%s must be a list", k)
			}
		default:
			return r, fmt.Errorf("unknown argument %q", k)
		}
	}
	if r.Pattern == nil {
		return r, errors.New("missing pattern")
	}
	return r, nil
}

type parser struct {
	name string
	s    string
	i    int
	line int
}

func (p *parser) errf(format string, a ...any) error {
	return fmt.Errorf("%s:%d: %s", p.name, p.line, fmt.Sprintf(format, a...))
}

// skip passes spaces, newlines and # comments.
func (p *parser) skip() {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == '\n':
			p.line++
			p.i++
		case c == ' ' || c == '\t' || c == '\r':
			p.i++
		case c == '#':
			for p.i < len(p.s) && p.s[p.i] != '\n' {
				p.i++
			}
		default:
			return
		}
	}
}

func (p *parser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func isIdent(c byte, first bool) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && (c >= '0' && c <= '9' || c == '.')
}

func (p *parser) ident() (string, error) {
	start := p.i
	for p.i < len(p.s) && isIdent(p.s[p.i], p.i == start) {
		p.i++
	}
	if p.i == start {
		return "", p.errf("unexpected %q", p.rest())
	}
	return p.s[start:p.i], nil
}

func (p *parser) rest() string {
	r := p.s[p.i:]
	if len(r) > 20 {
		r = r[:20]
	}
	return r
}

// args reads keyword arguments up to the closing parenthesis.
func (p *parser) args() (map[string]value, error) {
	out := map[string]value{}
	for {
		p.skip()
		if p.eat(')') {
			return out, nil
		}
		k, err := p.ident()
		if err != nil {
			return nil, p.errf("expected a keyword argument, not %q (arguments are by keyword)", p.rest())
		}
		p.skip()
		if !p.eat('=') {
			return nil, p.errf("expected = after %s (arguments are by keyword)", k)
		}
		v, err := p.value(0)
		if err != nil {
			return nil, err
		}
		if _, dup := out[k]; dup {
			return nil, p.errf("argument %s given twice", k)
		}
		out[k] = v
		p.skip()
		if p.eat(',') {
			continue
		}
		p.skip()
		if !p.eat(')') {
			return nil, p.errf("expected , or ) after %s", k)
		}
		return out, nil
	}
}

func (p *parser) value(depth int) (value, error) {
	if depth > maxDepth {
		return value{}, p.errf("lists nested too deep")
	}
	p.skip()
	if p.i >= len(p.s) {
		return value{}, p.errf("unexpected end of file")
	}
	switch c := p.s[p.i]; {
	case c == '"' || c == '\'':
		s, err := p.str()
		return value{str: &s}, err
	case c == '[' || c == '(':
		closer := byte(']')
		if c == '(' {
			closer = ')'
		}
		p.i++
		v := value{isLst: true, list: []value{}}
		for {
			p.skip()
			if p.eat(closer) {
				return v, nil
			}
			e, err := p.value(depth + 1)
			if err != nil {
				return value{}, err
			}
			v.list = append(v.list, e)
			p.skip()
			if p.eat(',') {
				continue
			}
			p.skip()
			if !p.eat(closer) {
				return value{}, p.errf("expected , or %c in a list", closer)
			}
			return v, nil
		}
	case c >= '0' && c <= '9' || c == '-':
		start := p.i
		p.i++
		for p.i < len(p.s) && (p.s[p.i] >= '0' && p.s[p.i] <= '9') {
			p.i++
		}
		return value{ident: p.s[start:p.i]}, nil
	default:
		id, err := p.ident()
		return value{ident: id}, err
	}
}

// str reads a quoted string with Starlark's (and JSON's) escapes.
func (p *parser) str() (string, error) {
	q := p.s[p.i]
	p.i++
	var b strings.Builder
	for {
		if p.i >= len(p.s) {
			return "", p.errf("unterminated string")
		}
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return b.String(), nil
		case c == '\n':
			return "", p.errf("newline in a string")
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return "", p.errf("unterminated string")
			}
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '\\', '"', '\'', '/':
				b.WriteByte(e)
			case 'u':
				if p.i+4 > len(p.s) {
					return "", p.errf("bad \\u escape")
				}
				n, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
				if err != nil {
					return "", p.errf("bad \\u escape")
				}
				b.WriteRune(rune(n))
				p.i += 4
			default:
				return "", p.errf("unknown escape \\%c", e)
			}
		default:
			b.WriteByte(c)
			p.i++
		}
	}
}
