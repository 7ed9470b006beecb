package appserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
	sdkrpc "github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/config"
	"github.com/codexd/codexd/jsonrpc"
	"github.com/codexd/codexd/mcp"
)

// The app-server's MCP methods, over the registry of package mcp (the
// configured servers and each thread's Manager): mcpServerStatus/list,
// config/mcpServer/reload, mcpServer/tool/call and
// mcpServer/resource/read, and the mcpServer/startupStatus/updated
// notifications of each thread's servers, as Codex 0.169 serves them.

func registerMCP(s *Server) {
	register(s, appproto.McpServerStatusList, s.mcpStatusList)
	register(s, appproto.ConfigMcpServerReload, s.mcpReload)
	register(s, appproto.McpServerToolCall, s.mcpToolCall)
	register(s, appproto.McpServerResourceRead, s.mcpResourceRead)
}

// mcpThread resolves a loaded thread's Manager: nil (no error) for a
// thread with no MCP servers.
func (s *Server) mcpThread(raw string) (*mcp.Manager, error) {
	t, err := s.loadedThread(raw)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	unloaded := t.st.unloaded
	t.mu.Unlock()
	if unloaded {
		return nil, invalidRequest("thread not found: " + t.id)
	}
	if s.cfg.MCP == nil {
		return nil, nil
	}
	return s.cfg.MCP.Thread(t.id), nil
}

func unknownMCPServer(name string) error {
	return internalError(fmt.Sprintf("unknown MCP server '%s'", name))
}

// mcpError passes an MCP server's JSON-RPC error on with its code,
// message and data, as Codex does; anything else is -32603 with prefix.
func mcpError(err error, prefix string) error {
	var werr *sdkrpc.Error
	if errors.As(err, &werr) {
		return &jsonrpc.Error{Code: werr.Code, Message: werr.Message, Data: jsontext.Value(werr.Data)}
	}
	if errors.Is(err, mcp.ErrUnknownServer) {
		return internalError(err.Error())
	}
	return internalError(prefix + err.Error())
}

func (s *Server) mcpToolCall(ctx context.Context, c *call, p appproto.McpServerToolCallParams) (appproto.McpServerToolCallResponse, error) {
	m, err := s.mcpThread(p.ThreadID)
	if err != nil {
		return appproto.McpServerToolCallResponse{}, err
	}
	if m == nil || !m.Known(p.Server) {
		return appproto.McpServerToolCallResponse{}, unknownMCPServer(p.Server)
	}
	res, err := m.CallDirect(ctx, p.Server, p.Tool, json.RawMessage(p.Arguments), json.RawMessage(p.Meta))
	if err != nil {
		return appproto.McpServerToolCallResponse{}, mcpError(err, fmt.Sprintf("tool call failed for `%s/%s`: ", p.Server, p.Tool))
	}
	out := appproto.McpServerToolCallResponse{Content: []json.RawMessage{}}
	for _, ct := range res.Content {
		if b, err := json.Marshal(ct); err == nil {
			out.Content = append(out.Content, b)
		}
	}
	if res.StructuredContent != nil {
		out.StructuredContent, _ = json.Marshal(res.StructuredContent)
	}
	if res.IsError {
		out.IsError = &res.IsError
	}
	// The result's _meta is not passed on: Codex 0.169 drops it.
	return out, nil
}

func (s *Server) mcpResourceRead(ctx context.Context, c *call, p appproto.McpResourceReadParams) (appproto.McpResourceReadResponse, error) {
	var m *mcp.Manager
	if p.ThreadID != nil {
		var err error
		if m, err = s.mcpThread(*p.ThreadID); err != nil {
			return appproto.McpResourceReadResponse{}, err
		}
	} else if s.cfg.MCP != nil {
		// No thread: a connection of its own, for this read, as Codex.
		m = s.cfg.MCP.Snapshot(ctx, p.Server)
		defer m.Close() // after the answer: a server may be slow to exit
		return s.mcpRead(ctx, m, p, c)
	}
	return s.mcpRead(ctx, m, p, c)
}

// mcpRead answers c with the read (errDeferred: the caller may close a
// snapshot after the answer went).
func (s *Server) mcpRead(ctx context.Context, m *mcp.Manager, p appproto.McpResourceReadParams, c *call) (appproto.McpResourceReadResponse, error) {
	r, err := s.mcpReadResult(ctx, m, p)
	c.respond(r, err)
	return r, errDeferred
}

func (s *Server) mcpReadResult(ctx context.Context, m *mcp.Manager, p appproto.McpResourceReadParams) (appproto.McpResourceReadResponse, error) {
	if m == nil || !m.Known(p.Server) {
		return appproto.McpResourceReadResponse{}, unknownMCPServer(p.Server)
	}
	res, err := m.ReadDirect(ctx, p.Server, p.URI)
	if err != nil {
		return appproto.McpResourceReadResponse{}, mcpError(err, fmt.Sprintf("resource read failed for `%s`: ", p.Server))
	}
	out := appproto.McpResourceReadResponse{Contents: []json.RawMessage{}}
	for _, rc := range res.Contents {
		if b, err := json.Marshal(rc); err == nil {
			out.Contents = append(out.Contents, b)
		}
	}
	return out, nil
}

func (s *Server) mcpReload(ctx context.Context, c *call, _ appproto.NoParams) (appproto.McpServerRefreshResponse, error) {
	if s.cfg.MCP == nil {
		return appproto.McpServerRefreshResponse{}, nil
	}
	if err := s.cfg.MCP.Reload(); err != nil {
		return appproto.McpServerRefreshResponse{}, internalError("failed to reload MCP servers: " + err.Error())
	}
	return appproto.McpServerRefreshResponse{}, nil
}

// mcpStatusList pages the configured servers by name, as Codex: the
// cursor is the index of the first, the default limit all of them. With a
// thread, the thread's servers report what they have now (runtimeStatus
// included) without waiting for one still starting; without, the page's
// servers are started for the answer and stopped after it.
func (s *Server) mcpStatusList(ctx context.Context, c *call, p appproto.ListMcpServerStatusParams) (appproto.ListMcpServerStatusResponse, error) {
	full := true
	if p.Detail != nil {
		switch *p.Detail {
		case "full":
		case "toolsAndAuthOnly":
			full = false
		default:
			return appproto.ListMcpServerStatusResponse{}, invalidRequest(fmt.Sprintf("Invalid request: unknown variant `%s`, expected `full` or `toolsAndAuthOnly`", *p.Detail))
		}
	}
	var tm *mcp.Manager
	if p.ThreadID != nil {
		var err error
		if tm, err = s.mcpThread(*p.ThreadID); err != nil {
			return appproto.ListMcpServerStatusResponse{}, err
		}
	}
	var servers []config.MCPServer
	if s.cfg.MCP != nil {
		servers = s.cfg.MCP.Servers()
	}
	if p.ServerName != nil {
		var only []config.MCPServer
		for _, sv := range servers {
			if sv.Name == *p.ServerName {
				only = append(only, sv)
			}
		}
		servers = only
	}
	total := len(servers)
	limit := total
	if p.Limit != nil {
		limit = int(*p.Limit)
	}
	limit = min(max(limit, 1), total)
	start := 0
	if p.Cursor != nil {
		n, err := strconv.ParseUint(*p.Cursor, 10, 63)
		if err != nil {
			return appproto.ListMcpServerStatusResponse{}, invalidRequest("invalid cursor: " + *p.Cursor)
		}
		if n > uint64(total) {
			return appproto.ListMcpServerStatusResponse{}, invalidRequest(fmt.Sprintf("cursor %d exceeds total MCP servers %d", n, total))
		}
		start = int(n)
	}
	end := min(start+limit, total)
	page := servers[start:end]
	resp := appproto.ListMcpServerStatusResponse{Data: make([]appproto.McpServerStatus, 0, len(page))}
	if end < total {
		next := strconv.Itoa(end)
		resp.NextCursor = &next
	}
	if len(page) == 0 {
		return resp, nil
	}
	m, runtime := tm, tm != nil
	if m == nil {
		one := ""
		if len(page) == 1 {
			one = page[0].Name
		}
		m = s.cfg.MCP.Snapshot(ctx, one)
		defer m.Close() // after the answer: a server may be slow to exit
	}
	statuses := map[string]mcp.Status{}
	for _, st := range m.Statuses() {
		statuses[st.Name] = st
	}
	for _, sv := range page {
		st, ok := statuses[sv.Name]
		resp.Data = append(resp.Data, wireMCPStatus(ctx, m, sv, st, ok, runtime, full))
	}
	c.respond(resp, nil)
	return resp, errDeferred
}

// wireMCPStatus is one server's McpServerStatus.
func wireMCPStatus(ctx context.Context, m *mcp.Manager, sv config.MCPServer, st mcp.Status, known, runtime, full bool) appproto.McpServerStatus {
	out := appproto.McpServerStatus{Name: sv.Name, Tools: map[string]json.RawMessage{}, Resources: []json.RawMessage{},
		ResourceTemplates: []json.RawMessage{}, AuthStatus: "unsupported"}
	if sv.BearerTokenEnvVar != "" {
		out.AuthStatus = "bearerToken"
	}
	if !sv.Stdio() {
		if u, err := url.Parse(sv.URL); err == nil && u.Host != "" {
			origin := u.Scheme + "://" + u.Host
			out.HTTPOrigin = &origin
		}
	}
	if runtime {
		rs := "notStarted"
		switch {
		case !sv.Enabled:
			rs = "disabled"
		case !known:
		case st.State == mcp.StateReady:
			rs = "connected"
		default:
			rs = string(st.State)
		}
		out.RuntimeStatus = &rs
	}
	if !sv.Enabled || !known {
		return out
	}
	if st.State == mcp.StateFailed && len(st.Tools) == 0 {
		reason := st.Reason
		out.ToolsError = &reason
	}
	for _, tool := range st.Tools {
		if b, err := json.Marshal(tool); err == nil {
			out.Tools[tool.Name] = b
		}
	}
	if st.Info != nil {
		i := st.Info
		out.ServerInfo = &appproto.McpServerInfo{Name: i.Name, Version: i.Version, Title: optStr(i.Title),
			Description: optStr(i.Description), WebsiteURL: optStr(i.WebsiteURL)}
		if len(i.Icons) > 0 {
			out.ServerInfo.Icons, _ = json.Marshal(i.Icons)
		}
	}
	if st.Capabilities != nil {
		out.ServerCapabilities, _ = json.Marshal(st.Capabilities)
	}
	if full && st.State == mcp.StateReady {
		rs, ts, err := m.Resources(ctx, sv.Name)
		if err == nil {
			for _, r := range rs {
				if b, err := json.Marshal(r); err == nil {
					out.Resources = append(out.Resources, b)
				}
			}
			for _, t := range ts {
				if b, err := json.Marshal(t); err == nil {
					out.ResourceTemplates = append(out.ResourceTemplates, b)
				}
			}
		}
	}
	return out
}

func optStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// mcpHub passes each thread's server state changes on to the thread's
// subscribers as mcpServer/startupStatus/updated, in order, from a
// goroutine of its own (the registry calls its listeners under a
// Manager's lock). A change of a thread the app-server has not loaded yet
// (its servers start while the core starts it) waits until thread/start
// has announced the thread.
type mcpHub struct {
	s      *Server
	remove func()

	mu      sync.Mutex
	queue   []mcp.StatusEvent
	pending map[string][]mcp.StatusEvent
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

// Bounds on what waits for a thread not loaded yet.
const (
	mcpPendingThreads = 256
	mcpPendingEvents  = 64
)

func newMCPHub(s *Server) *mcpHub {
	h := &mcpHub{s: s, pending: map[string][]mcp.StatusEvent{}, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if s.cfg.MCP == nil {
		close(h.done)
		return h
	}
	h.remove = s.cfg.MCP.Listen(h.enqueue)
	go h.run()
	return h
}

func (h *mcpHub) enqueue(ev mcp.StatusEvent) {
	h.mu.Lock()
	h.queue = append(h.queue, ev)
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

func (h *mcpHub) close() {
	if h.remove == nil {
		return
	}
	h.remove()
	select {
	case <-h.stop:
	default:
		close(h.stop)
	}
	<-h.done
}

func (h *mcpHub) run() {
	defer close(h.done)
	for {
		select {
		case <-h.stop:
			return
		case <-h.wake:
		}
		h.mu.Lock()
		evs := h.queue
		h.queue = nil
		h.mu.Unlock()
		for _, ev := range evs {
			t := h.s.thread(ev.Thread)
			if t == nil {
				h.hold(ev)
				continue
			}
			var out outbox
			t.mu.Lock()
			if !t.st.unloaded {
				h.sendLocked(t, &out, ev)
			}
			t.mu.Unlock()
			out.flush()
		}
	}
}

// hold keeps ev for a thread not loaded yet.
func (h *mcpHub) hold(ev mcp.StatusEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	l, ok := h.pending[ev.Thread]
	if !ok && len(h.pending) >= mcpPendingThreads {
		return
	}
	if len(l) < mcpPendingEvents {
		h.pending[ev.Thread] = append(l, ev)
	}
}

// sendLocked sends what waited for t, then ev (t.mu held).
func (h *mcpHub) sendLocked(t *thread, out *outbox, ev mcp.StatusEvent) {
	h.mu.Lock()
	evs := h.pending[t.id]
	delete(h.pending, t.id)
	h.mu.Unlock()
	for _, e := range append(evs, ev) {
		t.toSubscribersLocked(out, appproto.MethodMcpServerStartupStatus, startupNote(e))
	}
}

// startedLocked sends what waited for t once thread/start announced it
// (t.mu held).
func (h *mcpHub) startedLocked(t *thread) {
	h.mu.Lock()
	evs := h.pending[t.id]
	delete(h.pending, t.id)
	h.mu.Unlock()
	for _, e := range evs {
		n := newNote(appproto.MethodMcpServerStartupStatus, startupNote(e))
		for _, sess := range t.st.subscribers {
			sess.send(n)
		}
	}
}

func startupNote(e mcp.StatusEvent) appproto.McpServerStatusUpdatedNotification {
	id := e.Thread
	n := appproto.McpServerStatusUpdatedNotification{ThreadID: &id, Name: e.Server, Status: string(e.State)}
	if e.State == mcp.StateFailed && e.Reason != "" {
		reason := e.Reason
		n.Error = &reason
	}
	return n
}
