package filesearch

import (
	"context"
	"path"
	"runtime"
	"sort"
	"sync"
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
	workers := min(runtime.GOMAXPROCS(0), 12, max(1, len(ents)/2048))
	var mu sync.Mutex
	var all []Match
	var wg sync.WaitGroup
	chunk := (len(ents) + workers - 1) / max(workers, 1)
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, len(ents))
		if lo >= hi {
			continue
		}
		wg.Add(1)
		go func(part []entry) {
			defer wg.Done()
			var m matcher
			var best []Match
			for i, e := range part {
				if i%1024 == 0 && ctx.Err() != nil {
					return
				}
				if mt, ok := m.match(p, roots, e); ok {
					best = keepBest(best, mt)
				}
			}
			mu.Lock()
			all = append(all, best...)
			mu.Unlock()
		}(ents[lo:hi])
	}
	wg.Wait()
	sortMatches(all)
	if len(all) > Limit {
		all = all[:Limit]
	}
	if all == nil {
		all = []Match{}
	}
	return all
}

// match scores one entry, with the name tiers.
func (m *matcher) match(p pattern, roots []string, e entry) (Match, bool) {
	if !subsequence(p, e.path) {
		return Match{}, false
	}
	name := path.Base(e.path)
	nameStart := len([]rune(e.path)) - len([]rune(name))
	// A file whose own name holds the whole match is scored on its name
	// alone, in the tier above every match that needs the directories.
	tier := 0
	s, idx, ok := 0, []int(nil), false
	// Codex applies it to one-word queries only.
	if !e.isDir && len(p.atoms) == 1 {
		if s, idx, ok = m.score(p, name); ok {
			tier = tierInName
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
	if p.foldString(name) == p.text {
		tier += tierExactName
	}
	out := Match{Root: roots[e.root], Path: e.path, FileName: name, IsDir: e.isDir,
		Score: uint32(min(s, 0xffff) + tier), Indices: make([]uint32, len(idx))}
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
		for _, r := range s {
			if i == len(a) {
				break
			}
			if r == a[i] || (r < 0x80 && r|0x20 == a[i]) || (r >= 0x80 && p.fold(r) == a[i]) {
				i++
			}
		}
		if i < len(a) {
			return false
		}
	}
	return true
}

// keepBest adds m to best, a list kept to at most Limit of the highest.
func keepBest(best []Match, m Match) []Match {
	if len(best) < Limit {
		return append(best, m)
	}
	worst := 0
	for i := range best {
		if less(best[worst], best[i]) {
			worst = i
		}
	}
	if less(m, best[worst]) {
		best[worst] = m
	}
	return best
}

// less orders matches as Codex lists them: higher score first, then path.
func less(a, b Match) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Path < b.Path
}

func sortMatches(ms []Match) { sort.Slice(ms, func(i, j int) bool { return less(ms[i], ms[j]) }) }
