package filesearch

import (
	"context"
	"errors"
	"strings"
	"sync"
)

// ErrNoRoots is a session started with nothing to search. The message is
// Codex 0.169's.
var ErrNoRoots = errors.New("at least one search directory is required")

// Update is what a session reports: the matches of its latest query
// (Matches empty for an empty query), or, with Complete, that the matches
// reported for that query are final because the walk has ended.
type Update struct {
	Query    string
	Matches  []Match
	Complete bool
}

// Session searches roots as the user types: the tree is walked once, in
// the background, and every query after that is matched against the
// listing in memory, which is what keeps a keystroke's answer fast in a
// large repository.
//
// Reports are made from the session's own goroutine, one at a time, in
// order; a query superseded before it was matched is never reported.
type Session struct {
	roots  []string
	report func(Update)
	cancel context.CancelFunc
	done   chan struct{}
	query  chan string

	mu      sync.Mutex
	entries []entry

	// last is the latest query matched, and which entries (of the first
	// upto) it matched; only the session's goroutine uses it.
	last struct {
		query   string
		matched []int32
		upto    int
	}
}

// NewSession starts walking roots and returns at once. report receives an
// Update for the empty query when the walk ends, and for each later query
// given to Set. Close stops it.
func NewSession(roots []string, report func(Update)) (*Session, error) {
	if len(roots) == 0 {
		return nil, ErrNoRoots
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Session{roots: append([]string(nil), roots...), report: report, cancel: cancel,
		done: make(chan struct{}), query: make(chan string, 1)}
	walked := make(chan struct{})
	go func() {
		defer close(walked)
		walk(ctx, s.roots, func(e entry) bool {
			s.mu.Lock()
			s.entries = append(s.entries, e)
			s.mu.Unlock()
			return true
		})
	}()
	go s.run(ctx, walked)
	return s, nil
}

// Set makes q the session's query. Only the latest query counts: one set
// while an earlier one is still waiting replaces it.
func (s *Session) Set(q string) {
	for {
		select {
		case s.query <- q:
			return
		case <-s.done:
			return
		default:
		}
		select {
		case <-s.query: // drop the stale one
		default:
		}
	}
}

// Close stops the walk and the session; no report is made after it
// returns.
func (s *Session) Close() {
	s.cancel()
	<-s.done
}

func (s *Session) run(ctx context.Context, walked <-chan struct{}) {
	defer close(s.done)
	q, pending, complete := "", true, false
	for {
		if pending && complete {
			s.emit(ctx, q, true)
			pending = false
		} else if pending {
			// While the walk goes on, what is known so far; the final
			// answer follows when it ends.
			if q != "" {
				s.emit(ctx, q, false)
			}
		}
		select {
		case <-ctx.Done():
			if walked != nil {
				<-walked // the walker stops at its next check
			}
			return
		case nq := <-s.query:
			q, pending = nq, true
		case <-walked:
			walked, complete = nil, true
		}
	}
}

func (s *Session) emit(ctx context.Context, q string, final bool) {
	ms := []Match{}
	if p := parsePattern(q); !p.empty() {
		s.mu.Lock()
		ents := s.entries[:len(s.entries):len(s.entries)]
		s.mu.Unlock()
		// Typing on extends the query, and a query that extends another
		// matches only entries the other matched: score those, and what
		// the walk found since.
		var cand []int32
		from := 0
		if s.last.query != "" && strings.HasPrefix(q, s.last.query) {
			cand, from = s.last.matched, s.last.upto
		}
		var matched []int32
		ms, matched = rankSome(ctx, p, s.roots, ents, cand, from)
		if ctx.Err() == nil {
			s.last.query, s.last.matched, s.last.upto = q, matched, len(ents)
		}
	}
	if ctx.Err() != nil {
		return
	}
	s.report(Update{Query: q, Matches: ms})
	if final {
		s.report(Update{Query: q, Complete: true})
	}
}
