package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codexd/codexd/config"
)

// server is one configured server and its current connection.
type server struct {
	m   *Manager
	cfg config.MCPServer

	mu      sync.Mutex
	state   State
	reason  string
	changed chan struct{} // closed and replaced at every state change
	running bool          // a run goroutine owns the connection
	sess    *sdk.ClientSession
	tools   []*sdk.Tool // the last known tools
	crashed bool        // the server exited after being ready
	readyAt time.Time
	info    *sdk.Implementation     // from the last initialize answer
	caps    *sdk.ServerCapabilities // likewise
	nextTry time.Time
	backoff time.Duration
	stopped bool
	cancel  context.CancelFunc
	pgid    int
	stderr  *tail

	progress map[string]*progressSink

	// The approval modes in effect (cfg's, then as reloaded or set by
	// SetToolApprovalMode): they change without a restart.
	defaultMode string
	toolModes   map[string]string
}

// progressSink delivers one call's progress until the call returns. The
// SDK hands a call its result as soon as it is read, while notifications
// read before it may still wait for their handler; end makes sure none
// reaches the caller's callback after the call returned.
type progressSink struct {
	mu   sync.Mutex
	f    func(string)
	done bool
}

func (p *progressSink) send(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		p.f(msg)
	}
}

// end waits for a callback in flight and stops any later one.
func (p *progressSink) end() {
	p.mu.Lock()
	p.done = true
	p.mu.Unlock()
}

func newServer(m *Manager, c config.MCPServer) *server {
	s := &server{m: m, cfg: c, changed: make(chan struct{}), progress: map[string]*progressSink{}}
	s.setModes(c)
	if !c.Enabled {
		s.state, s.reason = StateCancelled, "disabled"
	}
	return s
}

// setState records a state change and announces it; s.mu is held.
func (s *server) setState(st State, reason string) {
	s.state, s.reason = st, reason
	close(s.changed)
	s.changed = make(chan struct{})
	if f := s.m.opts.OnStatus; f != nil {
		// Outside the lock's critical path would be nicer, but the
		// callback must see changes in order; it must not call back in.
		f(s.cfg.Name, st, reason)
	}
}

// launch starts a connection attempt in the background.
func (s *server) launch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running || s.stopped {
		return
	}
	s.running = true
	s.crashed = false
	ctx, cancel := context.WithCancel(s.m.ctx)
	s.cancel = cancel
	s.setState(StateStarting, "")
	s.m.wg.Add(1)
	go func() {
		defer s.m.wg.Done()
		defer cancel()
		s.run(ctx)
	}()
}

// run connects, lists the tools, and holds the session until it ends.
func (s *server) run(ctx context.Context) {
	cs, tools, err := s.connect(ctx)
	s.mu.Lock()
	if err != nil {
		s.running = false
		s.killGroup()
		if s.stopped || ctx.Err() != nil {
			s.setState(StateCancelled, "stopped")
		} else {
			if s.crashed || !s.readyAt.IsZero() {
				s.crashed = true
				s.scheduleRetry()
			}
			s.setState(StateFailed, s.withStderr(err.Error()))
		}
		s.mu.Unlock()
		return
	}
	if s.stopped {
		s.running = false
		s.mu.Unlock()
		_ = cs.Close()
		s.mu.Lock()
		s.killGroup()
		s.mu.Unlock()
		return
	}
	s.sess, s.tools, s.readyAt = cs, tools, time.Now()
	if ir := cs.InitializeResult(); ir != nil {
		s.info, s.caps = ir.ServerInfo, ir.Capabilities
	}
	s.setState(StateReady, "")
	s.mu.Unlock()

	waitErr := cs.Wait()

	s.mu.Lock()
	defer s.mu.Unlock()
	s.running = false
	s.sess = nil
	s.killGroup()
	if s.stopped {
		return
	}
	s.crashed = true
	s.scheduleRetry()
	reason := "MCP server exited"
	if waitErr != nil && !errors.Is(waitErr, context.Canceled) {
		reason += ": " + waitErr.Error()
	}
	s.setState(StateFailed, s.withStderr(reason))
}

// scheduleRetry sets when a crashed server may start again: at once after
// a run that lasted, then with a doubling wait. s.mu is held.
func (s *server) scheduleRetry() {
	if !s.readyAt.IsZero() && time.Since(s.readyAt) > maxBackoff {
		s.backoff = 0
	}
	s.nextTry = time.Now().Add(s.backoff)
	switch {
	case s.backoff == 0:
		s.backoff = minBackoff
	case s.backoff < maxBackoff:
		s.backoff = min(2*s.backoff, maxBackoff)
	}
}

// restartIfCrashed starts a crashed server again when its backoff allows.
func (s *server) restartIfCrashed() {
	s.mu.Lock()
	again := s.crashed && !s.running && !s.stopped && !time.Now().Before(s.nextTry)
	s.mu.Unlock()
	if again {
		s.launch()
	}
}

func (s *server) withStderr(reason string) string {
	if s.stderr != nil {
		if t := strings.TrimSpace(s.stderr.String()); t != "" {
			return reason + "; stderr: " + t
		}
	}
	return reason
}

func (s *server) connect(ctx context.Context) (*sdk.ClientSession, []*sdk.Tool, error) {
	t, err := s.transport()
	if err != nil {
		return nil, nil, err
	}
	c := sdk.NewClient(&sdk.Implementation{Name: s.m.opts.ClientName, Version: s.m.opts.ClientVersion}, &sdk.ClientOptions{
		ElicitationHandler:          s.elicit,
		ProgressNotificationHandler: s.onProgressNotification,
		Logger:                      s.m.opts.Logger,
	})
	cs, err := c.Connect(ctx, t, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("handshake failed: %v", err)
	}
	var tools []*sdk.Tool
	if ir := cs.InitializeResult(); ir == nil || ir.Capabilities == nil || ir.Capabilities.Tools != nil {
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				_ = cs.Close()
				return nil, nil, fmt.Errorf("tools/list failed: %v", err)
			}
			tools = append(tools, tool)
		}
	}
	return cs, tools, nil
}

// defaultEnvVars are the variables a stdio server inherits from codexd, as
// in Codex (env_vars adds more, env sets values).
var defaultEnvVars = []string{"HOME", "LOGNAME", "PATH", "SHELL", "USER", "__CF_USER_TEXT_ENCODING", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ"}

func (s *server) transport() (sdk.Transport, error) {
	getenv := s.m.opts.Getenv
	if s.cfg.Stdio() {
		if s.cfg.Command == "" {
			return nil, errors.New("empty command")
		}
		cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
		cmd.Dir = s.cfg.Cwd
		var env []string
		for _, k := range append(append([]string(nil), defaultEnvVars...), s.cfg.EnvVars...) {
			if v := getenv(k); v != "" {
				env = append(env, k+"="+v)
			}
		}
		for k, v := range s.cfg.Env {
			env = append(env, k+"="+v)
		}
		cmd.Env = env
		s.stderr = &tail{max: 2048}
		cmd.Stderr = s.stderr
		ownGroup(cmd)
		return &startRecorder{CommandTransport: sdk.CommandTransport{Command: cmd, TerminateDuration: time.Second}, s: s}, nil
	}
	h := http.Header{}
	for k, v := range s.cfg.HTTPHeaders {
		h.Set(k, v)
	}
	for k, name := range s.cfg.EnvHTTPHeaders {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			h.Set(k, v)
		}
	}
	if name := s.cfg.BearerTokenEnvVar; name != "" {
		v := getenv(name)
		if v == "" {
			return nil, fmt.Errorf("environment variable %s (bearer_token_env_var) is not set", name)
		}
		h.Set("Authorization", "Bearer "+v)
	}
	return &sdk.StreamableClientTransport{
		Endpoint:   s.cfg.URL,
		HTTPClient: &http.Client{Transport: headerTransport{h: h, rt: http.DefaultTransport}},
		MaxRetries: -1,
	}, nil
}

// startRecorder notes the started process's group, to kill it whole.
type startRecorder struct {
	sdk.CommandTransport
	s *server
}

func (t *startRecorder) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.CommandTransport.Connect(ctx)
	if t.Command.Process != nil {
		t.s.mu.Lock()
		t.s.pgid = t.Command.Process.Pid
		t.s.mu.Unlock()
	}
	return c, err
}

// killGroup kills what is left of the server's process group; s.mu is held.
func (s *server) killGroup() {
	if s.pgid > 0 {
		killGroup(s.pgid)
		s.pgid = 0
	}
}

type headerTransport struct {
	h  http.Header
	rt http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return t.rt.RoundTrip(r)
}

// stop ends the server for good.
func (s *server) stop() {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	s.stopped = true
	cs := s.sess
	if s.cancel != nil {
		s.cancel()
	}
	wasStarting := s.state == StateStarting
	s.mu.Unlock()
	if cs != nil {
		_ = cs.Close()
	}
	s.mu.Lock()
	s.killGroup()
	if wasStarting {
		s.setState(StateCancelled, "stopped")
	}
	s.mu.Unlock()
}

// wait waits until the server is not starting, or ctx ends.
func (s *server) wait(ctx context.Context) (State, string) {
	for {
		s.mu.Lock()
		st, reason, ch := s.state, s.reason, s.changed
		if st == "" {
			st = StateStarting
		}
		s.mu.Unlock()
		if st != StateStarting {
			return st, reason
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return StateStarting, ""
		}
	}
}

// setModes takes the approval modes of c.
func (s *server) setModes(c config.MCPServer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.defaultMode, s.toolModes = c.DefaultToolsApprovalMode, maps.Clone(c.ToolApprovalModes)
}

// approvalMode is tool's approval mode: its own, else the server's
// default ("" when neither is set).
func (s *server) approvalMode(tool string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if mode, ok := s.toolModes[tool]; ok {
		return mode
	}
	return s.defaultMode
}

func (s *server) setToolMode(tool, mode string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.toolModes == nil {
		s.toolModes = map[string]string{}
	}
	s.toolModes[tool] = mode
}

func (s *server) toolList() []*sdk.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools
}

func (s *server) status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state
	if st == "" {
		st = StateStarting
	}
	out := Status{Name: s.cfg.Name, State: st, Reason: s.reason, Tools: s.tools, Available: s.sess != nil, Enabled: s.cfg.Enabled,
		Info: s.info, Capabilities: s.caps}
	return out
}

// crashedSession reports whether cs is no longer the server's session (it
// ended under a call).
func (s *server) crashedSession(cs *sdk.ClientSession) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sess != cs || s.crashed
}

// onProgress sends the progress notifications of token tok to f until
// the returned func is called; once it returned, f is not running and
// will not run again.
func (s *server) onProgress(tok string, f func(string)) (end func()) {
	p := &progressSink{f: f}
	s.mu.Lock()
	s.progress[tok] = p
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.progress, tok)
		s.mu.Unlock()
		p.end()
	}
}

func (s *server) onProgressNotification(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	p := req.Params
	tok, _ := p.ProgressToken.(string)
	s.mu.Lock()
	sink := s.progress[tok]
	s.mu.Unlock()
	if sink == nil {
		return
	}
	msg := p.Message
	if msg == "" {
		if p.Total > 0 {
			msg = fmt.Sprintf("%g/%g", p.Progress, p.Total)
		} else {
			msg = fmt.Sprintf("%g", p.Progress)
		}
	}
	sink.send(msg)
}

func (s *server) elicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	if s.m.opts.Elicit == nil {
		return &sdk.ElicitResult{Action: "decline"}, nil
	}
	p := req.Params
	e := Elicitation{Server: s.cfg.Name, Mode: p.Mode, Message: p.Message, URL: p.URL, ElicitationID: p.ElicitationID}
	if e.Mode == "" {
		e.Mode = "form"
	}
	if p.RequestedSchema != nil {
		e.RequestedSchema, _ = json.Marshal(p.RequestedSchema)
	}
	if len(p.Meta) > 0 {
		e.Meta, _ = json.Marshal(p.Meta)
	}
	a := s.m.opts.Elicit(ctx, e)
	switch a.Action {
	case "accept", "decline", "cancel":
	default:
		a = ElicitAnswer{Action: "decline"}
	}
	return &sdk.ElicitResult{Action: a.Action, Content: a.Content}, nil
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
