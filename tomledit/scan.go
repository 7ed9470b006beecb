package tomledit

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// stmtKind says what a statement is.
type stmtKind int

const (
	kindKeyVal stmtKind = iota
	kindTable           // [a.b]
	kindArray           // [[a.b]]
)

// stmt is one statement of the document with its byte spans. Comments and
// blank lines before a statement belong to it (lead..start), as the
// leading decoration of a key or header does in toml_edit.
type stmt struct {
	kind stmtKind
	// path is the table's path (headers) or the key's full path: its
	// table's path, then the key's own (possibly dotted) segments.
	path []string
	// table is the path of the header a key/value sits under.
	table []string
	// inArray: the statement is an [[array]] header or sits under one.
	inArray bool
	lead    int // end of the previous statement
	start   int // first byte of the statement itself
	// valStart and valEnd delimit a key/value's value.
	valStart, valEnd int
	end              int // past the statement's newline (or the end)
	// members are an inline table value's entries.
	members []member
}

// member is one entry of an inline table: its key segments and raw value.
type member struct {
	key []string
	raw string
}

type scanner struct {
	src []byte
	pos int
}

// SyntaxError is a document tomledit cannot scan.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("TOML syntax error at byte %d: %s", e.Offset, e.Msg)
}

func (s *scanner) fail(msg string) error { return &SyntaxError{Offset: s.pos, Msg: msg} }

func (s *scanner) eof() bool { return s.pos >= len(s.src) }

func (s *scanner) peek() byte {
	if s.eof() {
		return 0
	}
	return s.src[s.pos]
}

func (s *scanner) skipSpace() {
	for !s.eof() && (s.src[s.pos] == ' ' || s.src[s.pos] == '\t') {
		s.pos++
	}
}

// skipComment skips a comment up to (not including) its newline.
func (s *scanner) skipComment() {
	if s.peek() != '#' {
		return
	}
	for !s.eof() && s.src[s.pos] != '\n' {
		s.pos++
	}
}

// endLine expects the rest of the line to be blank or a comment, and
// consumes its newline.
func (s *scanner) endLine() error {
	s.skipSpace()
	s.skipComment()
	if s.eof() {
		return nil
	}
	if s.src[s.pos] != '\n' {
		return s.fail("expected the end of the line")
	}
	s.pos++
	return nil
}

// scan splits src (LF line ends) into statements.
func scan(src []byte) ([]stmt, error) {
	s := &scanner{src: src}
	var out []stmt
	var table []string
	inArray := false
	lead := 0
	for {
		// Blank lines and comments lead the next statement.
		for {
			s.skipSpace()
			if s.peek() == '#' {
				s.skipComment()
			}
			if s.peek() == '\n' {
				s.pos++
				continue
			}
			break
		}
		if s.eof() {
			return out, nil
		}
		st := stmt{lead: lead, start: s.pos}
		if s.peek() == '[' {
			st.kind = kindTable
			s.pos++
			if s.peek() == '[' {
				st.kind = kindArray
				s.pos++
			}
			s.skipSpace()
			key, err := s.key()
			if err != nil {
				return nil, err
			}
			s.skipSpace()
			closing := "]"
			if st.kind == kindArray {
				closing = "]]"
			}
			if !bytes.HasPrefix(s.src[s.pos:], []byte(closing)) {
				return nil, s.fail("expected " + closing)
			}
			s.pos += len(closing)
			if err := s.endLine(); err != nil {
				return nil, err
			}
			st.path, table, inArray = key, key, st.kind == kindArray
			st.inArray = inArray
		} else {
			key, err := s.key()
			if err != nil {
				return nil, err
			}
			s.skipSpace()
			if s.peek() != '=' {
				return nil, s.fail("expected =")
			}
			s.pos++
			s.skipSpace()
			st.valStart = s.pos
			members, err := s.value()
			if err != nil {
				return nil, err
			}
			st.valEnd, st.members = s.pos, members
			if err := s.endLine(); err != nil {
				return nil, err
			}
			st.table = table
			st.path = append(append([]string{}, table...), key...)
			st.inArray = inArray
		}
		st.end = s.pos
		lead = s.pos
		out = append(out, st)
	}
}

func isBare(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// key reads a (dotted) key.
func (s *scanner) key() ([]string, error) {
	var segs []string
	for {
		s.skipSpace()
		var seg string
		switch c := s.peek(); {
		case c == '"':
			v, err := s.basicString()
			if err != nil {
				return nil, err
			}
			seg = v
		case c == '\'':
			v, err := s.literalString()
			if err != nil {
				return nil, err
			}
			seg = v
		case isBare(c):
			st := s.pos
			for !s.eof() && isBare(s.src[s.pos]) {
				s.pos++
			}
			seg = string(s.src[st:s.pos])
		default:
			return nil, s.fail("expected a key")
		}
		segs = append(segs, seg)
		s.skipSpace()
		if s.peek() != '.' {
			return segs, nil
		}
		s.pos++
	}
}

// basicString reads "..." and returns its decoded text.
func (s *scanner) basicString() (string, error) {
	s.pos++ // "
	var b strings.Builder
	for {
		if s.eof() || s.src[s.pos] == '\n' {
			return "", s.fail("unterminated string")
		}
		c := s.src[s.pos]
		switch {
		case c == '"':
			s.pos++
			return b.String(), nil
		case c == '\\':
			r, err := s.escape()
			if err != nil {
				return "", err
			}
			b.WriteRune(r)
		default:
			b.WriteByte(c)
			s.pos++
		}
	}
}

// escape decodes the escape sequence at s.pos.
func (s *scanner) escape() (rune, error) {
	if s.pos+1 >= len(s.src) {
		return 0, s.fail("unterminated escape")
	}
	c := s.src[s.pos+1]
	s.pos += 2
	switch c {
	case 'b':
		return '\b', nil
	case 't':
		return '\t', nil
	case 'n':
		return '\n', nil
	case 'f':
		return '\f', nil
	case 'r':
		return '\r', nil
	case 'e':
		return 0x1b, nil
	case '"':
		return '"', nil
	case '\\':
		return '\\', nil
	case 'u', 'U', 'x':
		n := map[byte]int{'u': 4, 'U': 8, 'x': 2}[c]
		if s.pos+n > len(s.src) {
			return 0, s.fail("short unicode escape")
		}
		v, err := strconv.ParseUint(string(s.src[s.pos:s.pos+n]), 16, 32)
		if err != nil || !utf8.ValidRune(rune(v)) {
			return 0, s.fail("bad unicode escape")
		}
		s.pos += n
		return rune(v), nil
	}
	return 0, s.fail("bad escape")
}

// literalString reads '...'.
func (s *scanner) literalString() (string, error) {
	s.pos++
	st := s.pos
	for !s.eof() && s.src[s.pos] != '\'' {
		if s.src[s.pos] == '\n' {
			return "", s.fail("unterminated string")
		}
		s.pos++
	}
	if s.eof() {
		return "", s.fail("unterminated string")
	}
	v := string(s.src[st:s.pos])
	s.pos++
	return v, nil
}

// multiline skips a """ or ”' string whose opening delimiter is at s.pos.
func (s *scanner) multiline(delim byte) error {
	s.pos += 3
	for {
		if s.eof() {
			return s.fail("unterminated multi-line string")
		}
		c := s.src[s.pos]
		if c == '\\' && delim == '"' {
			s.pos += 2
			continue
		}
		if c == delim && bytes.HasPrefix(s.src[s.pos:], []byte{delim, delim, delim}) {
			s.pos += 3
			// Up to two more quotes belong to the content.
			for i := 0; i < 2 && s.peek() == delim; i++ {
				s.pos++
			}
			return nil
		}
		s.pos++
	}
}

// value skips one value; for an inline table it returns its members.
func (s *scanner) value() ([]member, error) {
	switch c := s.peek(); c {
	case '"', '\'':
		if bytes.HasPrefix(s.src[s.pos:], []byte{c, c, c}) {
			return nil, s.multiline(c)
		}
		var err error
		if c == '"' {
			_, err = s.basicString()
		} else {
			_, err = s.literalString()
		}
		return nil, err
	case '[':
		s.pos++
		for {
			s.skipTrivia()
			switch s.peek() {
			case ']':
				s.pos++
				return nil, nil
			case ',':
				s.pos++
				continue
			case 0:
				return nil, s.fail("unterminated array")
			}
			if _, err := s.value(); err != nil {
				return nil, err
			}
		}
	case '{':
		s.pos++
		members := []member{}
		for {
			s.skipSpace()
			switch s.peek() {
			case '}':
				s.pos++
				return members, nil
			case ',':
				s.pos++
				continue
			case 0, '\n':
				return nil, s.fail("unterminated inline table")
			}
			key, err := s.key()
			if err != nil {
				return nil, err
			}
			s.skipSpace()
			if s.peek() != '=' {
				return nil, s.fail("expected =")
			}
			s.pos++
			s.skipSpace()
			st := s.pos
			if _, err := s.value(); err != nil {
				return nil, err
			}
			members = append(members, member{key: key, raw: string(s.src[st:s.pos])})
		}
	}
	// A bare value: number, boolean, date-time (whose date and time may be
	// separated by one space).
	st := s.pos
	for !s.eof() {
		c := s.src[s.pos]
		if c == ' ' && s.pos-st == 10 && s.pos+1 < len(s.src) && s.src[s.pos+1] >= '0' && s.src[s.pos+1] <= '9' && s.src[st+4] == '-' {
			s.pos++
			continue
		}
		if c == ' ' || c == '\t' || c == '\n' || c == ',' || c == ']' || c == '}' || c == '#' || c == '\r' {
			break
		}
		s.pos++
	}
	if s.pos == st {
		return nil, s.fail("expected a value")
	}
	return nil, nil
}

// skipTrivia skips whitespace, newlines and comments (inside arrays).
func (s *scanner) skipTrivia() {
	for !s.eof() {
		switch s.src[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		case '#':
			s.skipComment()
		default:
			return
		}
	}
}
