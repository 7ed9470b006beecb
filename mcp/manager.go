package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/config"
)

// State is a server's startup state, with Codex's names.
type State string

const (
	StateStarting  State = "starting"
	StateReady     State = "ready"
	StateFailed    State = "failed"
	StateCancelled State = "cancelled"
)

// DefaultToolTimeout bounds a tool call when tool_timeout_sec is unset
// (Codex 0.169's default).
const DefaultToolTimeout = 120 * time.Second

// DefaultStartupTimeout is how long a required server is awaited when
// startup_timeout_sec is unset (Codex's startup default).
const DefaultStartupTimeout = 10 * time.Second

// Restart backoff after a crash: the first restart is immediate, then
// each failed restart doubles the wait, up to maxBackoff.
const (
	minBackoff = 500 * time.Millisecond
	maxBackoff = 30 * time.Second
)

// Elicitation is a server's elicitation/create request, and ElicitAnswer
// the user's answer to it (the core's plain types).
type (
	Elicitation  = agent.MCPElicitation
	ElicitAnswer = agent.MCPElicitationResult
)

// Options configure a Manager.
type Options struct {
	// Getenv reads codexd's environment (env_vars, bearer tokens, header
	// values); nil means os.Getenv.
	Getenv func(string) string
	// OnStatus hears every state change of a server.
	OnStatus func(server string, st State, reason string)
	// Elicit answers a server's elicitation; nil declines every one.
	Elicit agent.MCPElicitFunc
	// ClientName and ClientVersion are sent in initialize.
	ClientName, ClientVersion string
	Logger                    *slog.Logger
}

// Manager runs the MCP servers of one thread.
type Manager struct {
	opts    Options
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	servers map[string]*server
	closed  bool
	// onClose, set by a Registry, runs once Close has stopped everything.
	onClose func()
}

// Status is a server's state and inventory.
type Status struct {
	Name   string
	State  State
	Reason string
	// Tools are the server's tools (the last known ones, when it crashed).
	Tools []*sdk.Tool
	// Available is false while a crashed server is not running again.
	Available bool
	// Info and Capabilities are what the server's initialize answer said
	// (nil before it was ever ready).
	Info         *sdk.Implementation
	Capabilities *sdk.ServerCapabilities
	// Enabled is false for a server configured with enabled = false.
	Enabled bool
}

// Tool is a server's tool with its model-visible names.
type Tool = agent.MCPTool

// New makes a Manager for servers (disabled ones are listed, never
// started). Start starts them.
func New(servers []config.MCPServer, opts Options) *Manager {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ClientName == "" {
		opts.ClientName = "codexd"
	}
	if opts.ClientVersion == "" {
		opts.ClientVersion = "0.169.0"
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{opts: opts, ctx: ctx, cancel: cancel, servers: map[string]*server{}}
	for _, c := range servers {
		m.servers[c.Name] = newServer(m, c)
	}
	return m
}

// Start starts every enabled server in the background, concurrently. It
// returns at once.
func (m *Manager) Start() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, name := range slices.Sorted(mapKeys(m.servers)) {
		s := m.servers[name]
		if s.cfg.Enabled {
			s.launch()
		}
	}
}

// AwaitRequired waits until every required server is ready, each for at
// most its startup timeout; the error names the servers that are not.
func (m *Manager) AwaitRequired(ctx context.Context) error {
	m.mu.Lock()
	var req []*server
	for _, s := range m.servers {
		if s.cfg.Enabled && s.cfg.Required {
			req = append(req, s)
		}
	}
	m.mu.Unlock()
	var errs []string
	for _, s := range req {
		d := s.cfg.StartupTimeout
		if d <= 0 {
			d = DefaultStartupTimeout
		}
		wctx, cancel := context.WithTimeout(ctx, d)
		st, reason := s.wait(wctx)
		cancel()
		switch st {
		case StateReady:
		case StateStarting:
			errs = append(errs, fmt.Sprintf("%s: not ready after %s", s.cfg.Name, d))
		default:
			errs = append(errs, fmt.Sprintf("%s: %s", s.cfg.Name, reason))
		}
	}
	if errs != nil {
		slices.Sort(errs)
		return fmt.Errorf("required MCP servers failed to initialize: %s", joinStr(errs, "; "))
	}
	return nil
}

// Tools returns the tools offered to the model: those of every server
// that is or was ready, allowed by its tool lists, in Codex's order.
func (m *Manager) Tools() []Tool {
	m.mu.Lock()
	var raws []rawTool
	type entry struct {
		s *server
		t *sdk.Tool
	}
	var entries []entry
	for _, s := range m.servers {
		for _, t := range s.toolList() {
			if !s.cfg.ToolAllowed(t.Name) {
				continue
			}
			raws = append(raws, rawTool{s.cfg.Name, t.Name})
			entries = append(entries, entry{s, t})
		}
	}
	m.mu.Unlock()
	q := qualify(raws)
	out := make([]Tool, 0, len(entries))
	for _, e := range entries {
		n := q[rawTool{e.s.cfg.Name, e.t.Name}]
		schema, _ := json.Marshal(e.t.InputSchema)
		if e.t.InputSchema == nil {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		t := Tool{
			Server: e.s.cfg.Name, Name: e.t.Name, Namespace: n.namespace, Callable: n.name,
			Title: e.t.Title, Description: e.t.Description, InputSchema: schema,
		}
		if a := e.t.Annotations; a != nil {
			// The SDK reads an absent readOnlyHint or idempotentHint as
			// false, so both are always known here.
			ro, idem := a.ReadOnlyHint, a.IdempotentHint
			t.ReadOnlyHint, t.DestructiveHint, t.IdempotentHint, t.OpenWorldHint = &ro, a.DestructiveHint, &idem, a.OpenWorldHint
			if t.Title == "" {
				t.Title = a.Title
			}
		}
		t.ApprovalMode = e.s.approvalMode(e.t.Name)
		out = append(out, t)
	}
	sortTools(out)
	return out
}

// SetToolApprovalMode makes mode the approval mode of server's tool from
// now on, without restarting the server (an "always allow" written into
// config.toml).
func (m *Manager) SetToolApprovalMode(server, tool, mode string) {
	if s := m.server(server); s != nil {
		s.setToolMode(tool, mode)
	}
}

// HasServers reports whether any server is enabled.
func (m *Manager) HasServers() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.servers {
		if s.cfg.Enabled {
			return true
		}
	}
	return false
}

// Statuses returns every configured server's status, by name.
func (m *Manager) Statuses() []Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Status, 0, len(m.servers))
	for _, name := range slices.Sorted(mapKeys(m.servers)) {
		out = append(out, m.servers[name].status())
	}
	return out
}

// Wait waits until server is no longer starting (or ctx ends) and
// returns its state.
func (m *Manager) Wait(ctx context.Context, server string) (State, string) {
	s := m.server(server)
	if s == nil {
		return StateFailed, "unknown MCP server " + server
	}
	return s.wait(ctx)
}

// Config returns the configuration of server.
func (m *Manager) Config(server string) (config.MCPServer, bool) {
	s := m.server(server)
	if s == nil {
		return config.MCPServer{}, false
	}
	return s.cfg, true
}

func (m *Manager) server(name string) *server {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.servers[name]
}

// ErrUnknownServer is returned for a server that is not configured.
var ErrUnknownServer = errors.New("unknown MCP server")

// session returns a live session of server, restarting a crashed one
// (with backoff) and waiting for a starting one until ctx ends.
func (m *Manager) session(ctx context.Context, name string) (*server, *sdk.ClientSession, error) {
	s := m.server(name)
	if s == nil {
		return nil, nil, fmt.Errorf("%w %q", ErrUnknownServer, name)
	}
	if !s.cfg.Enabled {
		return nil, nil, fmt.Errorf("MCP server %q is disabled", name)
	}
	s.restartIfCrashed()
	st, reason := s.wait(ctx)
	switch st {
	case StateReady:
		s.mu.Lock()
		cs := s.sess
		s.mu.Unlock()
		if cs == nil {
			return nil, nil, fmt.Errorf("MCP server %q is unavailable", name)
		}
		return s, cs, nil
	case StateStarting:
		return nil, nil, fmt.Errorf("MCP server %q is still starting: %w", name, context.Cause(ctx))
	default:
		return nil, nil, fmt.Errorf("MCP server %q is unavailable: %s", name, reason)
	}
}

var progressSeq atomic.Uint64

// Call calls tool of server with args (a JSON object, or empty), bounded
// by the server's tool timeout. progress, when not nil, gets the server's
// progress messages, never after Call returned.
func (m *Manager) Call(ctx context.Context, server, tool string, args json.RawMessage, progress func(string)) (*agent.MCPResult, error) {
	s := m.server(server)
	timeout := DefaultToolTimeout
	if s != nil && s.cfg.ToolTimeout > 0 {
		timeout = s.cfg.ToolTimeout
	}
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("timed out after %s", timeout))
	defer cancel()
	s, cs, err := m.session(ctx, server)
	if err != nil {
		return nil, err
	}
	params := &sdk.CallToolParams{Name: tool}
	if len(args) > 0 && string(args) != "null" {
		var a map[string]any
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, fmt.Errorf("arguments must be a JSON object: %v", err)
		}
		params.Arguments = a
	}
	if progress != nil {
		tok := fmt.Sprintf("codexd-%d", progressSeq.Add(1))
		params.SetProgressToken(tok)
		defer s.onProgress(tok, progress)()
	}
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		if c := context.Cause(ctx); c != nil && ctx.Err() != nil {
			return nil, fmt.Errorf("tool call failed: %w", c)
		}
		if s.crashedSession(cs) {
			return nil, fmt.Errorf("tool call failed: MCP server %q exited: %v", server, err)
		}
		return nil, fmt.Errorf("tool call failed: %v", err)
	}
	out := &agent.MCPResult{IsError: res.IsError}
	for _, c := range res.Content {
		b, err := json.Marshal(c)
		if err == nil {
			out.Content = append(out.Content, b)
		}
	}
	if res.StructuredContent != nil {
		out.StructuredContent, _ = json.Marshal(res.StructuredContent)
	}
	return out, nil
}

// Close stops every server (killing each stdio server's process group)
// and waits for them.
func (m *Manager) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	servers := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		servers = append(servers, s)
	}
	m.mu.Unlock()
	m.cancel()
	for _, s := range servers {
		s.stop()
	}
	m.wg.Wait()
	if m.onClose != nil {
		m.onClose()
	}
}

// Reload replaces the configuration: servers that are new start, those
// removed stop, those whose configuration changed restart, the others
// keep running.
func (m *Manager) Reload(servers []config.MCPServer) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	want := map[string]config.MCPServer{}
	for _, c := range servers {
		want[c.Name] = c
	}
	var stop []*server
	for name, s := range m.servers {
		c, ok := want[name]
		if !ok || !sameConfig(c, s.cfg) {
			stop = append(stop, s)
			delete(m.servers, name)
		} else {
			s.setModes(c) // approval modes change without a restart
		}
	}
	var start []*server
	for name, c := range want {
		if _, ok := m.servers[name]; !ok {
			s := newServer(m, c)
			m.servers[name] = s
			start = append(start, s)
		}
	}
	m.mu.Unlock()
	for _, s := range stop {
		s.stop()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range start {
		if s.cfg.Enabled && !m.closed {
			s.launch()
		}
	}
}

// sameConfig reports whether a and b start the same server: they may
// differ in approval modes, which apply without a restart.
func sameConfig(a, b config.MCPServer) bool {
	a.DefaultToolsApprovalMode, a.ToolApprovalModes = "", nil
	b.DefaultToolsApprovalMode, b.ToolApprovalModes = "", nil
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func joinStr(s []string, sep string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += sep
		}
		out += x
	}
	return out
}
