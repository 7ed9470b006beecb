package appserver

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
)

// registerTerminals binds thread/backgroundTerminals/list, clean and
// terminate (the TUI's /ps and /stop): the exec_command sessions a loaded
// thread keeps running.
func registerTerminals(s *Server) {
	register(s, appproto.ThreadBackgroundTerminalsList, s.terminalsList)
	register(s, appproto.ThreadBackgroundTerminalsClean, s.terminalsClean)
	register(s, appproto.ThreadBackgroundTerminalsTerminate, s.terminalsTerminate)
	threadScoped(s, appproto.MethodThreadBackgroundTerminalsList, appproto.MethodThreadBackgroundTerminalsClean,
		appproto.MethodThreadBackgroundTerminalsTerminate)
}

// terminalsOf resolves a loaded thread's terminals (none for a core that
// keeps no sessions).
func (s *Server) terminalsOf(raw string) (agent.Terminals, error) {
	t, err := s.loadedThread(raw)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.st.unloaded {
		return nil, invalidRequest("thread not found: " + t.id)
	}
	term, _ := t.th.(agent.Terminals)
	return term, nil
}

// terminalsPage is the default and largest page of a listing.
const terminalsPage = 100

func (s *Server) terminalsList(ctx context.Context, c *call, p appproto.ThreadBackgroundTerminalsListParams) (appproto.ThreadBackgroundTerminalsListResponse, error) {
	term, err := s.terminalsOf(p.ThreadID)
	if err != nil {
		return appproto.ThreadBackgroundTerminalsListResponse{}, err
	}
	var all []agent.Terminal
	if term != nil {
		all = term.BackgroundTerminals()
	}
	// The cursor is the position after the last terminal listed.
	start := 0
	if p.Cursor != nil {
		n, err := strconv.Atoi(*p.Cursor)
		if err != nil || n < 0 {
			return appproto.ThreadBackgroundTerminalsListResponse{}, invalidRequest("invalid cursor: " + *p.Cursor)
		}
		start = min(n, len(all))
	}
	limit := terminalsPage
	if p.Limit != nil {
		limit = min(max(int(*p.Limit), 1), terminalsPage)
	}
	end := min(start+limit, len(all))
	resp := appproto.ThreadBackgroundTerminalsListResponse{Data: make([]appproto.ThreadBackgroundTerminal, 0, end-start)}
	for _, x := range all[start:end] {
		resp.Data = append(resp.Data, appproto.ThreadBackgroundTerminal{ItemID: x.ItemID, ProcessID: x.ProcessID, Command: x.Command, Cwd: x.Cwd})
	}
	if end < len(all) {
		next := strconv.Itoa(end)
		resp.NextCursor = &next
	}
	return resp, nil
}

func (s *Server) terminalsClean(ctx context.Context, c *call, p appproto.ThreadIDParams) (appproto.EmptyResponse, error) {
	term, err := s.terminalsOf(p.ThreadID)
	if err != nil {
		return appproto.EmptyResponse{}, err
	}
	if term != nil {
		term.CleanTerminals()
	}
	return appproto.EmptyResponse{}, nil
}

func (s *Server) terminalsTerminate(ctx context.Context, c *call, p appproto.ThreadBackgroundTerminalsTerminateParams) (appproto.ThreadBackgroundTerminalsTerminateResponse, error) {
	term, err := s.terminalsOf(p.ThreadID)
	if err != nil {
		return appproto.ThreadBackgroundTerminalsTerminateResponse{}, err
	}
	if _, err := strconv.ParseInt(p.ProcessID, 10, 32); err != nil {
		return appproto.ThreadBackgroundTerminalsTerminateResponse{}, invalidRequest("invalid background terminal process id: " + rustParseIntError(p.ProcessID, err))
	}
	return appproto.ThreadBackgroundTerminalsTerminateResponse{Terminated: term != nil && term.TerminateTerminal(p.ProcessID)}, nil
}

// rustParseIntError words a failed parse of an i32 as Rust's ParseIntError
// does, which Codex's error quotes.
func rustParseIntError(s string, err error) string {
	switch {
	case s == "":
		return "cannot parse integer from empty string"
	case errors.Is(err, strconv.ErrRange) && strings.HasPrefix(s, "-"):
		return "number too small to fit in target type"
	case errors.Is(err, strconv.ErrRange):
		return "number too large to fit in target type"
	}
	return "invalid digit found in string"
}
