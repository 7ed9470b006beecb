package applypatch

import (
	"strings"
	"unicode"
)

// seekSequence finds pattern in lines at or after start and returns the
// index of its first line, or -1. As Codex's seek_sequence it makes four
// passes of decreasing strictness, each over every position before the next
// pass: exact, then ignoring trailing whitespace, then ignoring leading and
// trailing whitespace, then also folding typographic punctuation to ASCII.
// With eof set only the last possible position is tried (Codex does not fall
// back to the rest of the file). An empty pattern matches at start.
func seekSequence(lines, pattern []string, start int, eof bool) int {
	if len(pattern) == 0 {
		return start
	}
	if len(pattern) > len(lines) {
		return -1
	}
	last := len(lines) - len(pattern)
	from := start
	if eof {
		from = last
	}
	passes := []func(string) string{
		nil,
		func(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) },
		strings.TrimSpace,
		normalisePunctuation,
	}
	for _, norm := range passes {
		for i := from; i <= last; i++ {
			if matchAt(lines[i:i+len(pattern)], pattern, norm) {
				return i
			}
		}
	}
	return -1
}

func matchAt(lines, pattern []string, norm func(string) string) bool {
	for j, p := range pattern {
		if norm == nil {
			if lines[j] != p {
				return false
			}
		} else if norm(lines[j]) != norm(p) {
			return false
		}
	}
	return true
}

// normalisePunctuation trims s and maps the dashes, quotes and spaces that
// editors and models substitute for ASCII ones, as Codex's last pass does.
func normalisePunctuation(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
			return '-'
		case '\u2018', '\u2019', '\u201A', '\u201B':
			return '\''
		case '\u201C', '\u201D', '\u201E', '\u201F':
			return '"'
		case '\u00A0', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006',
			'\u2007', '\u2008', '\u2009', '\u200A', '\u202F', '\u205F', '\u3000':
			return ' '
		}
		return r
	}, strings.TrimSpace(s))
}
