package appserver

import (
	"strconv"
	"strings"
)

// What a running item's deltas brought is kept for the snapshots that
// thread/read and thread/resume give of a running turn. The deltas come
// from the model or from a command, so they are untrusted in size and in
// number: these buffers keep a bounded amount, in time linear in what
// they are given, and a completed item drops them (its item carries the
// text and the capped output).
const (
	// maxViewBytes bounds what one buffer keeps: as the core's aggregated
	// command output, the first half and the latest half.
	maxViewBytes = 1 << 20
	// maxViewParts bounds the reasoning part index: a delta outside
	// [0, maxViewParts) is ignored (the core drops those already).
	maxViewParts = 1024
)

func partIndex(i int) bool { return i >= 0 && i < maxViewParts }

// deltaBuf keeps the first maxViewBytes/2 bytes written and the latest
// maxViewBytes/2, and counts those dropped between them.
type deltaBuf struct {
	head    []byte
	tail    []byte // the latest bytes; at most maxViewBytes long, trimmed to half
	dropped int64
}

func (b *deltaBuf) write(s string) {
	const half = maxViewBytes / 2
	if room := half - len(b.head); room > 0 {
		n := min(room, len(s))
		b.head = append(b.head, s[:n]...)
		s = s[n:]
	}
	if s == "" {
		return
	}
	if len(s) >= half {
		b.dropped += int64(len(b.tail) + len(s) - half)
		b.tail = append(b.tail[:0], s[len(s)-half:]...)
		return
	}
	b.tail = append(b.tail, s...)
	if len(b.tail) > 2*half {
		// Trim to the latest half; amortised, each byte is moved once.
		cut := len(b.tail) - half
		b.dropped += int64(cut)
		b.tail = b.tail[:copy(b.tail, b.tail[cut:])]
	}
}

// trimmedTail is the part of tail shown: its latest half.
func (b *deltaBuf) trimmedTail() []byte {
	const half = maxViewBytes / 2
	if len(b.tail) > half {
		return b.tail[len(b.tail)-half:]
	}
	return b.tail
}

func (b *deltaBuf) len() int { return len(b.head) + len(b.tail) }

// String is what the buffer shows: everything written, or its two ends
// with a marker of what was dropped between them. The cuts may split a
// UTF-8 sequence, so it is made valid.
func (b *deltaBuf) String() string {
	tail := b.tail
	dropped := b.dropped
	if dropped > 0 || len(tail) > maxViewBytes/2 {
		t := b.trimmedTail()
		dropped += int64(len(tail) - len(t))
		tail = t
	}
	var s strings.Builder
	s.Grow(len(b.head) + len(tail) + 32)
	s.Write(b.head)
	if dropped > 0 {
		s.WriteString("\n…" + strconv.FormatInt(dropped, 10) + " bytes dropped…\n")
	}
	s.Write(tail)
	return validUTF8(s.String())
}

// partsBuf keeps the parts of a reasoning item's summary or content, at
// most maxViewBytes in all: what comes past that is not kept.
type partsBuf struct {
	parts [][]byte
	n     int
}

// write appends s to part i (0 <= i < maxViewParts), adding the parts
// before it as empty ones.
func (p *partsBuf) write(i int, s string) {
	if !partIndex(i) {
		return
	}
	for len(p.parts) <= i {
		p.parts = append(p.parts, nil)
	}
	if s = s[:min(len(s), maxViewBytes-p.n)]; s != "" {
		p.parts[i] = append(p.parts[i], s...)
		p.n += len(s)
	}
}

func (p *partsBuf) strings() []string {
	if p.parts == nil {
		return nil
	}
	out := make([]string, len(p.parts))
	for i, b := range p.parts {
		out[i] = validUTF8(string(b))
	}
	return out
}
