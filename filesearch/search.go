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
// this one can only match entries this one matched.
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
	bests := make([][]Match, workers)
	hits := make([][]int32, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, total)
		if lo >= hi {
			continue
		}
		wg.Add(1)
		go func(w, lo, hi int) {
			defer wg.Done()
			var m matcher
			var top topN
			for k := lo; k < hi; k++ {
				if (k-lo)%1024 == 0 && ctx.Err() != nil {
					return
				}
				i := at(k)
				if mt, ok := m.match(p, roots, ents[i], &top); ok {
					top.add(mt)
					hits[w] = append(hits[w], int32(i))
				} else if ok := m.matched; ok {
					hits[w] = append(hits[w], int32(i))
				}
			}
			bests[w] = top.ms
		}(w, lo, hi)
	}
	wg.Wait()
	var all []Match
	var matched []int32
	for w := range bests {
		all = append(all, bests[w]...)
		matched = append(matched, hits[w]...)
	}
	sortMatches(all)
	if len(all) > Limit {
		all = all[:Limit]
	}
	if all == nil {
		all = []Match{}
	}
	return all, matched
}

// topN keeps the best Limit matches seen, and the worst of them, so that a
// match that cannot enter is turned away with one comparison.
type topN struct {
	ms    []Match
	worst int
}

// admits reports whether a match of this score could enter.
func (t *topN) admits(score uint32) bool {
	return len(t.ms) < Limit || score >= t.ms[t.worst].Score
}

func (t *topN) add(m Match) {
	if len(t.ms) < Limit {
		t.ms = append(t.ms, m)
		if len(t.ms) == 1 || less(t.ms[t.worst], m) {
			t.worst = len(t.ms) - 1
		}
		return
	}
	if !less(m, t.ms[t.worst]) {
		return
	}
	t.ms[t.worst] = m
	t.worst = 0
	for i := range t.ms {
		if less(t.ms[t.worst], t.ms[i]) {
			t.worst = i
		}
	}
}

// match scores one entry, with the name tiers. It returns ok only for a
// match that top could admit; m.matched says whether e matched at all.
func (m *matcher) match(p pattern, roots []string, e entry, top *topN) (Match, bool) {
	m.matched = false
	if !subsequence(p, e.path) {
		return Match{}, false
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
			return Match{}, false
		}
	}
	m.matched = true
	if utf8.RuneCountInString(name) == p.textRunes && p.foldString(name) == p.text {
		tier += tierExactName
	}
	score := uint32(min(s, 0xffff) + tier)
	if !top.admits(score) {
		return Match{}, false
	}
	out := Match{Root: roots[e.root], Path: e.path, FileName: name, IsDir: e.isDir,
		Score: score, Indices: make([]uint32, len(idx))}
	for i, x := range idx {
		out.Indices[i] = uint32(x)
	}
	return out, true
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

// less orders matches as Codex lists them: higher score first, then path.
func less(a, b Match) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Path < b.Path
}

func sortMatches(ms []Match) { sort.Slice(ms, func(i, j int) bool { return less(ms[i], ms[j]) }) }
