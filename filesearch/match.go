package filesearch

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The scoring follows the published constants of the nucleo matcher (the
// fzf family of scorers) that Codex 0.169's file search is built on, in its
// path configuration: a match scores per character, more at a word start,
// less after a gap. Only the numbers are shared with it; the alignment is
// this package's own dynamic programme, checked against scores Codex
// reported for the same paths (testdata/codex_scores.json).
const (
	scoreMatch         = 16
	penaltyGapStart    = 3
	penaltyGapExtend   = 1
	bonusBoundary      = scoreMatch / 2 // 8
	bonusCamel         = bonusBoundary - penaltyGapStart
	bonusNonWord       = bonusBoundary
	bonusConsecutive   = penaltyGapStart + penaltyGapExtend
	firstCharMult      = 2
	bonusBoundaryWhite = bonusBoundary     // paths: whitespace is no stronger a boundary
	bonusBoundaryDelim = bonusBoundary + 1 // after a '/'
)

// charClass orders character kinds; every class above classDelim starts a
// word when it follows one at or below it.
type charClass uint8

const (
	classWhite charClass = iota
	classNonWord
	classDelim
	classLower
	classUpper
	classLetter
	classNumber
)

func classOf(r rune) charClass {
	switch {
	case r >= 'a' && r <= 'z':
		return classLower
	case r >= 'A' && r <= 'Z':
		return classUpper
	case r >= '0' && r <= '9':
		return classNumber
	case r < 0x80 && unicode.IsSpace(r):
		return classWhite
	case r == '/':
		return classDelim
	case r < 0x80:
		return classNonWord
	case unicode.IsLower(r):
		return classLower
	case unicode.IsUpper(r):
		return classUpper
	case unicode.IsNumber(r):
		return classNumber
	case unicode.IsLetter(r):
		return classLetter
	case unicode.IsSpace(r):
		return classWhite
	}
	return classNonWord
}

// bonusFor is what matching a character of class cur earns, given the
// class of the character before it.
func bonusFor(prev, cur charClass) int {
	if cur > classDelim {
		switch prev {
		case classWhite:
			return bonusBoundaryWhite
		case classDelim:
			return bonusBoundaryDelim
		case classNonWord:
			return bonusBoundary
		}
	}
	switch {
	case prev == classLower && cur == classUpper, prev != classNumber && cur == classNumber:
		return bonusCamel
	case cur == classWhite:
		return bonusBoundaryWhite
	case cur == classNonWord:
		return bonusNonWord
	}
	return 0
}

// fold is the form a character is compared in: case-insensitive, and Latin
// letters with diacritics as their base letter ("ü" matches "u").
func fold(r rune) rune {
	if r >= 0x80 {
		if d := norm.NFD.String(string(r)); d != "" {
			if b := []rune(d)[0]; b < 0x80 {
				r = b
			}
		}
	}
	return unicode.ToLower(r)
}

// pattern is a parsed query: whitespace-separated atoms, each matched on
// its own; a path matches when every atom does, and scores their sum.
type pattern struct {
	atoms     [][]rune
	text      string // the folded query, to recognise an exact name
	textRunes int
	normalize bool // fold diacritics away ("ü" as "u")

	// For the fast path (fast.go).
	ascii bool   // every atom is ASCII
	mask  uint64 // the atoms' characters
	bound int    // the highest character score a path can get
}

func parsePattern(q string) pattern {
	p := pattern{normalize: true}
	for _, r := range q {
		if r >= 0x80 {
			// A query that spells a diacritic wants it: only then is
			// "ü" no longer matched by "u".
			p.normalize = false
		}
	}
	for _, f := range strings.Fields(q) {
		a := make([]rune, 0, len(f))
		for _, r := range f {
			a = append(a, p.fold(r))
		}
		p.atoms = append(p.atoms, a)
	}
	p.text = p.foldString(strings.TrimSpace(q))
	p.textRunes = utf8.RuneCountInString(p.text)
	p.prepareFast()
	return p
}

func (p pattern) fold(r rune) rune {
	if p.normalize {
		return fold(r)
	}
	return unicode.ToLower(r)
}

func (p pattern) foldString(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(p.fold(r))
	}
	return b.String()
}

// empty reports whether the query has nothing to match.
func (p pattern) empty() bool { return len(p.atoms) == 0 }

// maxMatchRunes bounds the haystack the alignment runs on: a path longer
// than this (a hostile tree can hold one) is never matched, so one entry
// costs at most maxMatchRunes × len(atom) cells.
const maxMatchRunes = 4096

// matcher holds the buffers one goroutine reuses across paths.
type matcher struct {
	hay    []rune
	folded []rune
	bonus  []int
	rows   [][]cell
	idx    []int
}

// cell is one (needle char, haystack char) entry of the alignment: the
// best score of an alignment that matches the needle char exactly here
// (score), and the best with the needle char matched before this column
// and a gap since (pScore).
type cell struct {
	score  int32
	pScore int32
	cbonus uint8 // the bonus a consecutive run carries on
	flags  uint8
}

const (
	valid    = 1 << iota // some alignment ends here
	consec               // it came straight from the previous char's match
	pFromM               // the gap score came from a match just before
	pReached             // some alignment has the needle char before here
)

// score matches p against path and returns its score and the matched rune
// indices (sorted, unique), or ok false when some atom does not match.
func (m *matcher) score(p pattern, path string) (score int, indices []int, ok bool) {
	if len(path) > 4*maxMatchRunes {
		return 0, nil, false
	}
	m.folded = m.folded[:0]
	m.bonus = m.bonus[:0]
	prev := classDelim // a path's start counts as after a '/'
	for k := 0; k < len(path); {
		var r rune
		var c charClass
		if b := path[k]; b < 0x80 {
			// The common case, by table: no Unicode lookups.
			r, c = rune(asciiFold[b]), asciiClass[b]
			k++
		} else {
			var size int
			r, size = utf8.DecodeRuneInString(path[k:])
			c, r = classOf(r), p.fold(r)
			k += size
		}
		m.folded = append(m.folded, r)
		m.bonus = append(m.bonus, bonusFor(prev, c))
		prev = c
	}
	if len(m.folded) > maxMatchRunes {
		return 0, nil, false
	}
	m.idx = m.idx[:0]
	total := 0
	for _, a := range p.atoms {
		s, ok := m.align(a)
		if !ok {
			return 0, nil, false
		}
		total += s
	}
	return total, sortUnique(m.idx), true
}

// asciiFold and asciiClass are fold and classOf for the ASCII bytes.
var asciiFold, asciiClass = func() (f [128]byte, c [128]charClass) {
	for b := 0; b < 128; b++ {
		f[b], c[b] = byte(fold(rune(b))), classOf(rune(b))
	}
	return
}()

// align finds the best alignment of needle in the folded haystack, as the
// nucleo scorer's recurrence defines "best", and appends its indices.
func (m *matcher) align(needle []rune) (int, bool) {
	n, h := len(needle), len(m.folded)
	if n == 0 {
		return 0, true
	}
	if n > h {
		return 0, false
	}
	if n == 1 {
		return m.alignOne(needle[0])
	}
	for len(m.rows) < n {
		m.rows = append(m.rows, nil)
	}
	for i := 0; i < n; i++ {
		if cap(m.rows[i]) < h {
			m.rows[i] = make([]cell, h)
		}
		m.rows[i] = m.rows[i][:h]
		clear(m.rows[i])
	}
	// Row 0: the first needle char, which earns its bonus twice.
	for j := 0; j < h; j++ {
		if m.folded[j] == needle[0] {
			b := m.bonus[j]
			m.rows[0][j] = cell{score: int32(scoreMatch + b*firstCharMult), cbonus: uint8(b), flags: valid}
		}
	}
	for i := 0; i < n; i++ {
		row := m.rows[i]
		// The gap scores of row i: the best alignment of needle[:i+1]
		// that ended before column j, less the gap's penalty.
		for j := 1; j < h; j++ {
			prev := &row[j-1]
			fromM, fromP := int32(-1), int32(-1)
			if prev.flags&valid != 0 {
				fromM = max(prev.score-penaltyGapStart, 0)
			}
			if prev.flags&pReached != 0 {
				fromP = max(prev.pScore-penaltyGapExtend, 0)
			}
			switch {
			case fromM < 0 && fromP < 0:
			case fromM > fromP:
				row[j].pScore, row[j].flags = fromM, row[j].flags|pFromM|pReached
			default:
				row[j].pScore, row[j].flags = fromP, row[j].flags|pReached
			}
		}
		if i+1 == n {
			break
		}
		next, want := m.rows[i+1], needle[i+1]
		for j := 1; j < h; j++ {
			if m.folded[j] != want {
				continue
			}
			b := int32(m.bonus[j])
			prev := &row[j-1]
			if prev.flags&valid == 0 {
				if prev.flags&pReached != 0 {
					next[j] = cell{score: prev.pScore + b + scoreMatch, cbonus: uint8(b), flags: valid}
				}
				continue
			}
			cb := max(int32(prev.cbonus), bonusConsecutive)
			if b >= bonusBoundary && b > cb {
				cb = b
			}
			viaMatch := prev.score + max(cb, b)
			viaGap := int32(-1)
			if prev.flags&pReached != 0 {
				viaGap = prev.pScore + b
			}
			if viaMatch > viaGap {
				next[j] = cell{score: viaMatch + scoreMatch, cbonus: uint8(cb), flags: valid | consec}
			} else {
				next[j] = cell{score: viaGap + scoreMatch, cbonus: uint8(b), flags: valid}
			}
		}
	}
	last := m.rows[n-1]
	end, best := -1, int32(-1)
	for j := 0; j < h; j++ {
		// Of equal scores the reference scorer keeps the last end.
		if last[j].flags&valid != 0 && last[j].score >= best {
			end, best = j, last[j].score
		}
	}
	if end < 0 {
		return 0, false
	}
	// Walk back: a consecutive match steps to the previous char's match one
	// column left; otherwise the gap chain leads back to where it started.
	j := end
	for i := n - 1; i >= 0; i-- {
		m.idx = append(m.idx, j)
		if i == 0 {
			break
		}
		if m.rows[i][j].flags&consec != 0 {
			j--
			continue
		}
		k := j - 1
		for m.rows[i-1][k].flags&pFromM == 0 {
			k--
		}
		j = k - 1
	}
	return int(best), true
}

// alignOne is a one-character needle: the position with the highest bonus,
// the first of equals, as the reference scorer takes it.
func (m *matcher) alignOne(c rune) (int, bool) {
	at, best := -1, -1
	for j, r := range m.folded {
		if r == c && m.bonus[j] > best {
			at, best = j, m.bonus[j]
		}
	}
	if at < 0 {
		return 0, false
	}
	m.idx = append(m.idx, at)
	return scoreMatch + best*firstCharMult, true
}

func sortUnique(xs []int) []int {
	out := append([]int(nil), xs...)
	for i := 1; i < len(out); i++ {
		for k := i; k > 0 && out[k] < out[k-1]; k-- {
			out[k], out[k-1] = out[k-1], out[k]
		}
	}
	w := 0
	for i, x := range out {
		if i == 0 || x != out[w-1] {
			out[w] = x
			w++
		}
	}
	return out[:w]
}
