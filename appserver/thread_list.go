package appserver

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
	"github.com/go-json-experiment/json"
)

// maxListLimit caps a page of thread/list, as Codex does.
const maxListLimit = 100

// interactiveSources are the sources thread/list shows when the client
// names none, as Codex's INTERACTIVE_SESSION_SOURCES: threads of `exec`
// runs and sub-agents are listed only on request.
var interactiveSources = []string{"cli", "vscode"}

// listSortKey maps the schema's sort keys onto the store's. codexd's
// recency is the last update, and it has no sections: the TUI's
// "section_position" lists by recency.
func listSortKey(k *string) (string, error) {
	switch key := deref(k); key {
	case "", "created_at":
		return "created_at", nil
	case "updated_at", "recency_at", "section_position":
		return "updated_at", nil
	default:
		return "", invalidRequest(fmt.Sprintf("unknown sort key `%s`", key))
	}
}

func (s *Server) threadList(ctx context.Context, c *call, p appproto.ThreadListParams) (appproto.ThreadListResponse, error) {
	key, err := listSortKey(p.SortKey)
	if err != nil {
		return appproto.ThreadListResponse{}, err
	}
	if p.Cursor != nil && *p.Cursor == "" {
		return appproto.ThreadListResponse{}, invalidRequest("invalid cursor: ") // as Codex
	}
	q := agent.ThreadQuery{Cursor: deref(p.Cursor), Archived: deref(p.Archived), ModelProviders: p.ModelProviders,
		SourceKinds: p.SourceKinds, SearchTerm: deref(p.SearchTerm), SortKey: key}
	if len(q.SourceKinds) == 0 {
		q.SourceKinds = interactiveSources
	}
	// As Codex: with no modelProviders, only the threads of the provider
	// new threads use now (unless the listing is of a thread's relatives);
	// an empty list means every provider.
	if p.ModelProviders == nil && p.ParentThreadID == nil && p.AncestorThreadID == nil {
		if cur := s.core.Config().ModelProvider; cur != "" {
			q.ModelProviders = []string{cur}
		}
	}
	if p.Limit != nil {
		q.Limit = min(int(*p.Limit), maxListLimit)
	}
	if d := deref(p.SortDirection); d == "asc" {
		q.Ascending = true
	}
	// cwd is one path or a list of them (ThreadListCwdFilter).
	if present := p.Cwd != nil && string(p.Cwd) != "null"; present {
		var one string
		var many []string
		switch {
		case json.Unmarshal(p.Cwd, &one) == nil:
			q.Cwd = one
		case json.Unmarshal(p.Cwd, &many) == nil:
			if len(many) == 0 {
				// Matches no thread.
				return appproto.ThreadListResponse{Data: []appproto.Thread{}}, nil
			}
			q.Cwds = many
		default:
			return appproto.ThreadListResponse{}, invalidRequest("Invalid request: data did not match any variant of untagged enum ThreadListCwdFilter")
		}
	}
	page, err := s.core.ListThreads(ctx, q)
	if err != nil {
		return appproto.ThreadListResponse{}, invalidRequest(err.Error())
	}
	resp := appproto.ThreadListResponse{Data: make([]appproto.Thread, 0, len(page.Threads)), NextCursor: optString(page.NextCursor)}
	for _, info := range page.Threads {
		resp.Data = append(resp.Data, s.listEntry(info))
	}
	if len(page.Threads) > 0 {
		resp.BackwardsCursor = ptr(backwardsCursor(page.Threads[0], key))
	}
	resp.ReadStates, _ = json.Marshal(s.reads.list(page.Threads), json.Deterministic(true))
	return resp, nil
}

// page slices n items by an offset cursor and a limit.
func page(n int, cursor *string, limit *uint32) (start, end int, next *string, err error) {
	if cursor != nil {
		start, err = strconv.Atoi(*cursor)
		if err != nil || start < 0 {
			return 0, 0, nil, invalidRequest("invalid cursor: " + *cursor)
		}
		start = min(start, n)
	}
	end = n
	if limit != nil && *limit > 0 {
		end = min(start+int(*limit), n)
	}
	if end < n {
		next = ptr(strconv.Itoa(end))
	}
	return start, end, next, nil
}

func (s *Server) threadLoadedList(ctx context.Context, c *call, p appproto.ThreadLoadedListParams) (appproto.ThreadLoadedListResponse, error) {
	ts := s.loadedThreads()
	start, end, next, err := page(len(ts), p.Cursor, p.Limit)
	if err != nil {
		return appproto.ThreadLoadedListResponse{}, err
	}
	ids := make([]string, 0, end-start)
	for _, t := range ts[start:end] {
		ids = append(ids, t.id)
	}
	return appproto.ThreadLoadedListResponse{Data: ids, NextCursor: next}, nil
}

func (s *Server) threadTurnsList(ctx context.Context, c *call, p appproto.ThreadTurnsListParams) (appproto.ThreadTurnsListResponse, error) {
	id, err := appproto.ParseThreadID(p.ThreadID)
	if err != nil {
		return appproto.ThreadTurnsListResponse{}, threadIDError(err)
	}
	view := appproto.ItemsSummary
	if p.ItemsView != nil {
		view = *p.ItemsView
	}
	turns, err := s.historyTurns(ctx, id, view)
	if err != nil {
		return appproto.ThreadTurnsListResponse{}, err
	}
	if deref(p.SortDirection) != "asc" {
		for i, j := 0, len(turns)-1; i < j; i, j = i+1, j-1 {
			turns[i], turns[j] = turns[j], turns[i]
		}
	}
	start, end, next, err := page(len(turns), p.Cursor, p.Limit)
	if err != nil {
		return appproto.ThreadTurnsListResponse{}, err
	}
	return appproto.ThreadTurnsListResponse{Data: append([]appproto.Turn{}, turns[start:end]...), NextCursor: next}, nil
}

// historyTurns returns a thread's turns in order, the running one last,
// with their items in view: a loaded thread's from memory, another's from
// its rollout. A thread that is not found answers "thread not loaded", one
// that has no turn recorded yet errNotMaterialized.
func (s *Server) historyTurns(ctx context.Context, id, view string) ([]appproto.Turn, error) {
	var turns []appproto.Turn
	if t := s.thread(id); t != nil {
		t.mu.Lock()
		if !t.st.unloaded {
			if !t.st.info.Materialized && t.st.active == nil {
				t.mu.Unlock()
				return nil, errNotMaterialized
			}
			for _, h := range t.st.history {
				turns = append(turns, h.wire(view))
			}
			if t.st.active != nil {
				turns = append(turns, t.st.active.snapshot())
			}
		}
		t.mu.Unlock()
	}
	if turns == nil {
		info, hist, err := s.core.ReadThread(ctx, id, true)
		if errors.Is(err, agent.ErrThreadNotFound) {
			return nil, invalidRequest("thread not loaded: " + id)
		} else if err != nil {
			return nil, coreError(err)
		}
		if !info.Materialized {
			return nil, errNotMaterialized
		}
		for _, h := range hist {
			turns = append(turns, wireTurn(h, view))
		}
	}
	return turns, nil
}
