package appserver

import (
	"context"
	"sync"

	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/filesearch"
)

// fuzzySearches holds the server's fuzzy file search sessions and the
// one-shot searches that carry a cancellation token. Codex keeps them for
// the whole process and broadcasts a session's reports to every
// initialized connection, so they belong to the server, not a session.
type fuzzySearches struct {
	mu       sync.Mutex
	closed   bool
	sessions map[string]*filesearch.Session
	tokens   map[string]context.CancelFunc
}

func (s *Server) registerFuzzy() {
	s.fuzzy.sessions = map[string]*filesearch.Session{}
	s.fuzzy.tokens = map[string]context.CancelFunc{}
	register(s, appproto.FuzzyFileSearch, s.fuzzyFileSearch)
	register(s, appproto.FuzzyFileSearchSessionStart, s.fuzzySessionStart)
	register(s, appproto.FuzzyFileSearchSessionUpdate, s.fuzzySessionUpdate)
	register(s, appproto.FuzzyFileSearchSessionStop, s.fuzzySessionStop)
}

func (s *Server) fuzzyFileSearch(ctx context.Context, c *call, p appproto.FuzzyFileSearchParams) (appproto.FuzzyFileSearchResponse, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if p.CancellationToken != nil {
		// A later search under the same token supersedes this one, which
		// then answers with no files, as Codex's does.
		tok := *p.CancellationToken
		s.fuzzy.mu.Lock()
		if prev := s.fuzzy.tokens[tok]; prev != nil {
			prev()
		}
		s.fuzzy.tokens[tok] = cancel
		s.fuzzy.mu.Unlock()
		defer func() {
			s.fuzzy.mu.Lock()
			if s.fuzzy.tokens[tok] != nil && ctx.Err() == nil {
				delete(s.fuzzy.tokens, tok)
			}
			s.fuzzy.mu.Unlock()
		}()
	}
	ms := filesearch.Search(ctx, p.Query, p.Roots)
	if ctx.Err() != nil {
		ms = nil
	}
	return appproto.FuzzyFileSearchResponse{Files: fuzzyResults(ms)}, nil
}

func (s *Server) fuzzySessionStart(ctx context.Context, c *call, p appproto.FuzzyFileSearchSessionStartParams) (appproto.EmptyResponse, error) {
	id := p.SessionID
	sess, err := filesearch.NewSession(p.Roots, func(u filesearch.Update) { s.fuzzyReport(id, u) })
	if err != nil {
		return appproto.EmptyResponse{}, internalError("failed to start fuzzy file search session: " + err.Error())
	}
	s.fuzzy.mu.Lock()
	if s.fuzzy.closed {
		s.fuzzy.mu.Unlock()
		sess.Close()
		return appproto.EmptyResponse{}, ErrServerClosed
	}
	prev := s.fuzzy.sessions[id]
	s.fuzzy.sessions[id] = sess // a start under a live id replaces it, as Codex's
	s.fuzzy.mu.Unlock()
	if prev != nil {
		prev.Close()
	}
	return appproto.EmptyResponse{}, nil
}

func (s *Server) fuzzySessionUpdate(ctx context.Context, c *call, p appproto.FuzzyFileSearchSessionUpdateParams) (appproto.EmptyResponse, error) {
	s.fuzzy.mu.Lock()
	sess := s.fuzzy.sessions[p.SessionID]
	s.fuzzy.mu.Unlock()
	if sess == nil {
		return appproto.EmptyResponse{}, invalidRequest("fuzzy file search session not found: " + p.SessionID)
	}
	sess.Set(p.Query)
	return appproto.EmptyResponse{}, nil
}

// fuzzySessionStop ends a session; stopping one that is not there is no
// error, as in Codex.
func (s *Server) fuzzySessionStop(ctx context.Context, c *call, p appproto.FuzzyFileSearchSessionStopParams) (appproto.EmptyResponse, error) {
	s.fuzzy.mu.Lock()
	sess := s.fuzzy.sessions[p.SessionID]
	delete(s.fuzzy.sessions, p.SessionID)
	s.fuzzy.mu.Unlock()
	if sess != nil {
		sess.Close()
	}
	return appproto.EmptyResponse{}, nil
}

// fuzzyReport broadcasts one session report.
func (s *Server) fuzzyReport(id string, u filesearch.Update) {
	var n *note
	if u.Complete {
		n = newNote(appproto.FuzzyFileSearchSessionCompleted.Name(), appproto.FuzzyFileSearchSessionCompletedNotification{SessionID: id})
	} else {
		n = newNote(appproto.FuzzyFileSearchSessionUpdated.Name(), appproto.FuzzyFileSearchSessionUpdatedNotification{
			SessionID: id, Query: u.Query, Files: fuzzyResults(u.Matches)})
	}
	for _, sess := range s.initializedSessions() {
		sess.send(n)
	}
}

// closeFuzzy stops every session, at server close.
func (s *Server) closeFuzzy() {
	s.fuzzy.mu.Lock()
	s.fuzzy.closed = true
	sessions := s.fuzzy.sessions
	s.fuzzy.sessions = map[string]*filesearch.Session{}
	for _, cancel := range s.fuzzy.tokens {
		cancel()
	}
	s.fuzzy.mu.Unlock()
	for _, sess := range sessions {
		sess.Close()
	}
}

func fuzzyResults(ms []filesearch.Match) []appproto.FuzzyFileSearchResult {
	out := make([]appproto.FuzzyFileSearchResult, 0, len(ms))
	for _, m := range ms {
		kind := "file"
		if m.IsDir {
			kind = "directory"
		}
		out = append(out, appproto.FuzzyFileSearchResult{Root: m.Root, Path: m.Path, MatchType: kind,
			FileName: m.FileName, Score: m.Score, Indices: m.Indices})
	}
	return out
}
