// Package planblock splits a streamed plan-mode answer into its prose and
// the plan it proposes: the lines between a "<proposed_plan>" line and a
// "</proposed_plan>" line, which Codex 0.169's app-server shows as a plan
// item of their own while the rest stays the agent message.
//
// It parses text only: it must never decide what a turn or an item is, nor
// buffer more than one line it cannot yet classify.
package planblock

import (
	"strings"
	"unicode"
)

const (
	openTag  = "<proposed_plan>"
	closeTag = "</proposed_plan>"
)

// Chunk is a piece of the answer, in order: prose (Plan false) or plan
// text (Plan true). Start marks the plan's opening line, End its closing
// line (or the end of the answer while a plan is open); both carry no text.
type Chunk struct {
	Text       string
	Plan       bool
	Start, End bool
}

// Parser is fed the answer's deltas and returns what each settles. A line
// that could still turn out to be a tag line is held until it cannot;
// everything else goes out at once, so a delta's text is delayed by at most
// one tag's length.
type Parser struct {
	inPlan  bool
	atStart bool            // the held text begins a line
	held    strings.Builder // a line's start that may be a tag line
	started bool
}

// New returns a parser at the start of an answer.
func New() *Parser { return &Parser{atStart: true} }

// Feed takes the next delta.
func (p *Parser) Feed(delta string) []Chunk {
	var out []Chunk
	for delta != "" {
		if !p.atStart {
			// Mid-line: everything up to the newline is settled.
			i := strings.IndexByte(delta, '\n')
			if i < 0 {
				out = p.emit(out, delta)
				return out
			}
			out = p.emit(out, delta[:i+1])
			delta = delta[i+1:]
			p.atStart = true
			continue
		}
		// At a line's start: hold what may be a tag line.
		i := strings.IndexByte(delta, '\n')
		part := delta
		if i >= 0 {
			part = delta[:i+1]
		}
		p.held.WriteString(part)
		delta = delta[len(part):]
		line := p.held.String()
		if strings.HasSuffix(line, "\n") {
			out = p.settleLine(out, line)
			continue
		}
		if !p.couldBeTag(line) {
			p.held.Reset()
			out = p.emit(out, line)
			p.atStart = false
		}
	}
	return out
}

// Finish settles what is held at the answer's end; an open plan ends here.
func (p *Parser) Finish() []Chunk {
	var out []Chunk
	if p.held.Len() > 0 {
		line := p.held.String()
		p.held.Reset()
		if tag := strings.TrimSpace(line); p.inPlan && tag == closeTag {
			p.inPlan = false
			return append(out, Chunk{Plan: true, End: true})
		} else if !p.inPlan && tag == openTag {
			p.inPlan, p.started = true, true
			out = append(out, Chunk{Plan: true, Start: true})
		} else {
			out = p.emit(out, line)
		}
	}
	if p.inPlan {
		p.inPlan = false
		out = append(out, Chunk{Plan: true, End: true})
	}
	return out
}

// settleLine decides a whole held line.
func (p *Parser) settleLine(out []Chunk, line string) []Chunk {
	p.held.Reset()
	p.atStart = true
	switch strings.TrimSpace(line) {
	case openTag:
		if !p.inPlan {
			p.inPlan, p.started = true, true
			return append(out, Chunk{Plan: true, Start: true})
		}
	case closeTag:
		if p.inPlan {
			p.inPlan = false
			return append(out, Chunk{Plan: true, End: true})
		}
	}
	return p.emit(out, line)
}

// couldBeTag reports whether a line's start could still become the tag
// line the parser waits for.
func (p *Parser) couldBeTag(s string) bool {
	tag := openTag
	if p.inPlan {
		tag = closeTag
	}
	// The same spaces as the whole line's strings.TrimSpace, so that how
	// the line came in deltas never changes what it is.
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	if len(s) <= len(tag) {
		return strings.HasPrefix(tag, s)
	}
	return strings.HasPrefix(s, tag) && strings.TrimSpace(s[len(tag):]) == ""
}

func (p *Parser) emit(out []Chunk, s string) []Chunk {
	if s == "" {
		return out
	}
	if n := len(out); n > 0 && out[n-1].Plan == p.inPlan && !out[n-1].Start && !out[n-1].End {
		out[n-1].Text += s
		return out
	}
	return append(out, Chunk{Text: s, Plan: p.inPlan})
}

// Strip returns text without its plan blocks (the tag lines included), as
// the agent message shows it.
func Strip(text string) (prose, plan string, found bool) {
	p := New()
	var a, b strings.Builder
	for _, c := range append(p.Feed(text), p.Finish()...) {
		switch {
		case c.Start:
			found = true
		case c.Plan:
			b.WriteString(c.Text)
		default:
			a.WriteString(c.Text)
		}
	}
	return a.String(), b.String(), found
}
