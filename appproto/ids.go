package appproto

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// ParseThreadID reads a thread id as Codex does (a UUID: hyphenated,
// simple, braced or urn:uuid:, any case) and returns it in canonical form,
// lower-case and hyphenated. The error's text is the uuid crate's, which
// Codex sends after "invalid thread id: ".
func ParseThreadID(s string) (string, error) {
	body := s
	switch {
	case len(s) == 45 && strings.HasPrefix(s, "urn:uuid:"):
		body = s[9:]
	case len(s) == 38 && s[0] == '{' && s[37] == '}':
		body = s[1:37]
	}
	var hex []byte
	switch len(body) {
	case 36:
		if body[8] == '-' && body[13] == '-' && body[18] == '-' && body[23] == '-' {
			hex = make([]byte, 0, 32)
			for i := 0; i < 36; i++ {
				if i == 8 || i == 13 || i == 18 || i == 23 {
					continue
				}
				hex = append(hex, body[i])
			}
		}
	case 32:
		hex = []byte(body)
	}
	if hex != nil && allHex(hex) {
		h := strings.ToLower(string(hex))
		return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32], nil
	}
	return "", uuidError(s)
}

func allHex(b []byte) bool {
	for _, c := range b {
		if !isHex(c) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// uuidError explains why s is not a UUID, as the uuid crate does.
func uuidError(s string) error {
	body, offset, simple := s, 0, true
	switch {
	case len(s) >= 2 && s[0] == '{' && s[len(s)-1] == '}':
		body, offset, simple = s[1:len(s)-1], 1, false
	case strings.HasPrefix(s, "urn:uuid:"):
		body, offset, simple = s[9:], 9, false
	}
	hyphens := 0
	var bounds [4]int
	for i, r := range body {
		switch {
		case r >= utf8.RuneSelf:
			return fmt.Errorf("invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `%c` at %d", r, i+offset+1)
		case r == '-':
			if hyphens < 4 {
				bounds[hyphens] = i
			}
			hyphens++
		case !isHex(byte(r)):
			return fmt.Errorf("invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `%c` at %d", r, i+offset+1)
		}
	}
	if hyphens == 0 && simple {
		return fmt.Errorf("invalid length: expected length 32 for simple format, found %d", len(s))
	}
	if hyphens != 4 {
		return fmt.Errorf("invalid group count: expected 5, found %d", hyphens+1)
	}
	starts := [5]int{0, 9, 14, 19, 24}
	want := [5]int{8, 4, 4, 4, 12}
	for i := range 4 {
		if bounds[i] != starts[i+1]-1 {
			return fmt.Errorf("invalid group length in group %d: expected %d, found %d", i, want[i], bounds[i]-starts[i])
		}
	}
	return fmt.Errorf("invalid group length in group 4: expected 12, found %d", len(s)-starts[4])
}
