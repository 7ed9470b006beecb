package jsonrpc

import (
	"bytes"
	"fmt"
)

// guard watches the bytes of a long message while the transport is still
// reading it, so that a hostile message (a huge compact array, deep nesting)
// is refused before it is held in memory at all. It only ever rejects what
// Decode would reject: every JSON value but the first of each container is
// preceded by a comma or an opening bracket, so opens+commas never exceeds
// the exact count of values, and its depth is the decoder's depth.
type guard struct {
	lim      Limits
	inString bool
	slashes  int // backslashes just before the current position, in a string
	depth    int
	values   int
	offset   int64
}

func (g *guard) reset(lim Limits) { *g = guard{lim: lim.withDefaults()} }

// scan feeds the next piece of the message.
func (g *guard) scan(p []byte) error {
	i := 0
	for i < len(p) {
		if g.inString {
			j := bytes.IndexByte(p[i:], '"')
			if j < 0 {
				g.slashes = trailingSlashes(p[i:], g.slashes)
				break
			}
			n := trailingSlashes(p[i:i+j], g.slashes)
			i += j + 1
			g.slashes = 0
			if n%2 == 0 {
				g.inString = false
			}
			continue
		}
		switch p[i] {
		case '"':
			g.inString = true
			g.slashes = 0
		case '[', '{':
			g.depth++
			g.values++
			if g.depth > g.lim.MaxDepth {
				return g.reject(i, fmt.Sprintf("nesting deeper than %d", g.lim.MaxDepth))
			}
		case ']', '}':
			g.depth--
		case ',':
			g.values++
		}
		if g.values > g.lim.MaxValues {
			return g.reject(i, fmt.Sprintf("more than %d JSON values", g.lim.MaxValues))
		}
		i++
	}
	g.offset += int64(len(p))
	return nil
}

func (g *guard) reject(i int, reason string) error {
	return &DecodeError{Offset: g.offset + int64(i), Reason: reason}
}

// trailingSlashes counts the backslashes at the end of p, continuing a run
// of prev from before p when p is all backslashes.
func trailingSlashes(p []byte, prev int) int {
	n := 0
	for n < len(p) && p[len(p)-1-n] == '\\' {
		n++
	}
	if n == len(p) {
		return prev + n
	}
	return n
}
