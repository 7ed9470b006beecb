package filesearch

import (
	"context"
	"runtime"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// Limit is how many matches a search returns, as Codex 0.169's app-server
// asks of its file search.
const Limit = 50

// Match is one path that matched a query.
type Match struct {
	Root     string // the root it was found under, as the caller gave it
	Path     string // relative to Root, '/'-separated
	FileName string // the last element of Path
	IsDir    bool
	Score    uint32
	Indices  []uint32 // rune indices into Path that matched, ascending
}

// Tiers above the character score: Codex 0.169 ranks a file whose name
// holds the whole match above any match that spans directories, and an
// exact name above both. The tier is added above the 16 bits a character
// score fits in, as Codex's reported scores show.
const (
	tierInName    = 1 << 16
	tierExactName = 2 << 16
)

// Search walks roots once and returns the best Limit matches of query, by
// score and then path. An empty query matches nothing.
func Search(ctx context.Context, query string, roots []string) []Match {
	p := parsePattern(query)
	if p.empty() || len(roots) == 0 {
		return []Match{}
	}
	var ents []entry
	walk(ctx, roots, func(e entry) bool { ents = append(ents, e); return true })
	if ctx.Err() != nil {
		return []Match{}
	}
	return rank(ctx, p, roots, ents)
}

// rank scores ents against p on every core and keeps the best Limit.
func rank(ctx context.Context, p pattern, roots []string, ents []entry) []Match {
	ms, _ := rankSome(ctx, p, roots, ents, nil, 0)
	return ms
}

// rankSome scores the entries named by cand, then every entry from index
// from on (cand nil and from 0: all of them), and returns the best Limit
// matches and the indices of every entry that matched, ascending. The
// matched set lets a session narrow its next query: a query that extends
// this one can only match entries this one matched, so a superset of the
// matched entries is as good (a few are let through unscored, see probe).
func rankSome(ctx context.Context, p pattern, roots []string, ents []entry, cand []int32, from int) ([]Match, []int32) {
	total := len(cand) + max(0, len(ents)-from)
	at := func(k int) int {
		if k < len(cand) {
			return int(cand[k])
		}
		return from + k - len(cand)
	}
	workers := min(runtime.GOMAXPROCS(0), 12, max(1, total/2048))
	chunk := (total + workers - 1) / max(workers, 1)
	bests := make([][]ranked, workers)
	hits := make([][]int32, workers)
	run := func(w, lo, hi int) {
		var m matcher
		top := topN{ents: ents}
		var hit []int32
		for k := lo; k < hi; k++ {
			if (k-lo)%1024 == 0 && ctx.Err() != nil {
				return
			}
			i := at(k)
			score, matched, admit := m.probe(&p, &ents[i], &top)
			if matched {
				hit = append(hit, int32(i))
			}
			if admit {
				top.add(ranked{score: score, i: int32(i)})
			}
		}
		bests[w], hits[w] = top.rs, hit
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, total)
		if lo >= hi {
			continue
		}
		wg.Add(1)
		go func(w, lo, hi int) {
			defer wg.Done()
			run(w, lo, hi)
		}(w, lo, hi)
	}
	run(0, 0, min(chunk, total)) // this goroutine takes the first share
	wg.Wait()
	var all []ranked
	var matched []int32
	for w := range bests {
		all = append(all, bests[w]...)
		matched = append(matched, hits[w]...)
	}
	sort.Slice(all, func(i, j int) bool { return lessRanked(ents, all[i], all[j]) })
	if len(all) > Limit {
		all = all[:Limit]
	}
	// Only the answer needs its matched indices: they are worked out here,
	// for at most Limit entries, by the reference scorer.
	out := make([]Match, 0, len(all))
	var m matcher
	for _, r := range all {
		out = append(out, m.full(p, roots, ents[r.i]))
	}
	return out, matched
}

// ranked is a match as ranking keeps it: its score and its entry.
type ranked struct {
	score uint32
	i     int32
}

// lessRanked orders matches as Codex lists them: higher score first, then
// path.
func lessRanked(ents []entry, a, b ranked) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return ents[a.i].path < ents[b.i].path
}

// topN keeps the best Limit matches seen, and the worst of them, so that a
// match that cannot enter is turned away with one comparison.
type topN struct {
	ents  []entry
	rs    []ranked
	worst int
}

// admits reports whether a match of this score could enter.
func (t *topN) admits(score uint32) bool {
	return len(t.rs) < Limit || score >= t.rs[t.worst].score
}

// admitsBound reports whether some match of entry e scoring at most bound
// could enter: with equal scores the path decides.
func (t *topN) admitsBound(bound uint32, e *entry) bool {
	if len(t.rs) < Limit {
		return true
	}
	w := t.rs[t.worst]
	return bound > w.score || bound == w.score && e.path < t.ents[w.i].path
}

func (t *topN) add(r ranked) {
	if len(t.rs) < Limit {
		t.rs = append(t.rs, r)
		if len(t.rs) == 1 || lessRanked(t.ents, t.rs[t.worst], r) {
			t.worst = len(t.rs) - 1
		}
		return
	}
	if !lessRanked(t.ents, r, t.rs[t.worst]) {
		return
	}
	t.rs[t.worst] = r
	t.worst = 0
	for i := range t.rs {
		if lessRanked(t.ents, t.rs[t.worst], t.rs[i]) {
			t.worst = i
		}
	}
}

// probe tells whether e matches p (matched) and, when the match could
// enter top, its score (admit). A path of ASCII bytes, the common case,
// takes the fast path; any other is scored by the reference scorer.
func (m *matcher) probe(p *pattern, e *entry, top *topN) (score uint32, matched, admit bool) {
	if e.ascii {
		return m.probeASCII(p, e, top)
	}
	s, _, ok := m.scoreEntry(*p, *e)
	if !ok {
		return 0, false, false
	}
	return s, true, top.admits(s)
}

// full is the reference scoring of one entry, with the name tiers and the
// matched indices: what the answer carries.
func (m *matcher) full(p pattern, roots []string, e entry) Match {
	s, idx, _ := m.scoreEntry(p, e)
	out := Match{Root: roots[e.root], Path: e.path, FileName: e.path[strings.LastIndexByte(e.path, '/')+1:],
		IsDir: e.isDir, Score: s, Indices: make([]uint32, len(idx))}
	for i, x := range idx {
		out.Indices[i] = uint32(x)
	}
	return out
}

// scoreEntry scores one entry by the reference scorer, with the name tiers.
func (m *matcher) scoreEntry(p pattern, e entry) (uint32, []int, bool) {
	if !subsequence(p, e.path) {
		return 0, nil, false
	}
	name := e.path[strings.LastIndexByte(e.path, '/')+1:]
	// A file whose own name holds the whole match is scored on its name
	// alone, in the tier above every match that needs the directories;
	// Codex applies it to one-word queries only.
	tier := 0
	s, idx, ok := 0, []int(nil), false
	if !e.isDir && len(p.atoms) == 1 {
		if s, idx, ok = m.score(p, name); ok {
			tier = tierInName
			nameStart := utf8.RuneCountInString(e.path) - utf8.RuneCountInString(name)
			for i := range idx {
				idx[i] += nameStart
			}
		}
	}
	if !ok {
		if s, idx, ok = m.score(p, e.path); !ok {
			return 0, nil, false
		}
	}
	if utf8.RuneCountInString(name) == p.textRunes && p.foldString(name) == p.text {
		tier += tierExactName
	}
	return uint32(min(s, 0xffff) + tier), idx, true
}

// subsequence is a cheap first test: every atom's characters appear in the
// path in order, ignoring case. Most paths fail it, and then the alignment
// never runs.
func subsequence(p pattern, s string) bool {
	for _, a := range p.atoms {
		i := 0
		for k := 0; k < len(s) && i < len(a); {
			c := s[k]
			if c < 0x80 {
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				if rune(c) == a[i] {
					i++
				}
				k++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[k:])
			if p.fold(r) == a[i] {
				i++
			}
			k += size
		}
		if i < len(a) {
			return false
		}
	}
	return true
}
