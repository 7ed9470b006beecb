package execserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/codexd/codexd/execproto"
	"github.com/codexd/codexd/execserver/fsops"
	"github.com/codexd/codexd/execserver/httpreq"
	"github.com/codexd/codexd/execserver/procs"
	"github.com/codexd/codexd/jsonrpc"
	"github.com/codexd/codexd/rpcserve"
)

// Defaults of Config.
const (
	DefaultSessionTTL     = 30 * time.Second
	DefaultMaxConcurrency = 32
	DefaultHTTPTimeout    = 5 * time.Minute
)

// ExecutorVersion is the Codex exec-server version whose wire contract
// codexd implements; it is what environmentInfo.executorVersion reports, so
// that Codex enables the features it knows that version has.
const ExecutorVersion = "0.169.0"

// Config configures a Server. The zero value serves with Codex's defaults
// and no confinement.
type Config struct {
	// Roots, when set, confine every fs path and process cwd to these
	// directories.
	Roots []string
	// SessionTTL is how long a detached session keeps its processes
	// (default 30s).
	SessionTTL time.Duration
	// AuthToken, when set, is the bearer token every WebSocket upgrade must
	// carry.
	AuthToken string
	// InsecureNoAuth lets Listen serve ws:// on an address other than
	// loopback without an AuthToken (see rpcserve.Options).
	InsecureNoAuth bool
	// MaxMessage limits one inbound message (default jsonrpc.DefaultMaxMessage).
	MaxMessage int64
	// Limits bound the decoding of each message.
	Limits jsonrpc.Limits
	// MaxResponseBytes is each connection's budget of bytes in flight for
	// large responses (default DefaultMaxResponseBytes): an fs/readFile
	// whose response would not fit in it alone is refused with the limit
	// named; reads that fit wait for their share.
	MaxResponseBytes int64
	// MaxConcurrency bounds the handlers running at once per connection
	// (default 32). Codex runs one at a time; a long-polling process/read
	// never delays another request here.
	MaxConcurrency int
	Procs          procs.Config
	FS             fsops.Config
	HTTP           httpreq.Config
	Logger         *slog.Logger
}

// Server serves the exec-server protocol on any number of connections.
type Server struct {
	cfg  Config
	log  *slog.Logger
	fs   *fsops.Service
	http *httpreq.Client
	// env is environmentInfo(cwd), read on the first request that needs it
	// (envOnce): most in-process servers are never asked, and reading it
	// at New cost every start /etc/passwd, the host name and a hash.
	envOnce sync.Once
	env     execproto.EnvironmentInfo
	// cwd is the process's directory when New ran: the server's default
	// cwd is that one even if the process moves later (a test's t.Chdir
	// did, and the lazy read answered the new one).
	cwd string

	httpHandler http.Handler // rpcserve.Handler of s

	mu           sync.Mutex
	sessions     map[string]*session
	conns        map[*jsonrpc.Conn]struct{}
	closed       bool
	sessionsDone sync.WaitGroup // one per live session
	connsDone    sync.WaitGroup // one per served connection

	// Tests learn of session events through these; set before serving.
	testHookDetached func(sessionID string)
	testHookExpired  func(sessionID string)
	// testHookProcess runs as process/start and process/terminate begin
	// their work, after they have waited for their turn (procorder.go).
	testHookProcess func(method string)
}

// New returns a server.
func New(cfg Config) (*Server, error) {
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.MaxConcurrency <= 0 {
		cfg.MaxConcurrency = DefaultMaxConcurrency
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.HTTP.DefaultTimeout <= 0 {
		// Codex waits forever for an http/request without timeoutMs; a
		// server that must not pile up stuck requests does not.
		cfg.HTTP.DefaultTimeout = DefaultHTTPTimeout
	}
	if cfg.Procs.CgroupRoot != "" {
		if err := procs.CheckCgroupRoot(cfg.Procs.CgroupRoot); err != nil {
			return nil, err
		}
	}
	cfg.FS.Roots = append(cfg.FS.Roots, cfg.Roots...)
	fs, err := fsops.New(cfg.FS)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:      cfg,
		log:      cfg.Logger,
		fs:       fs,
		http:     httpreq.New(cfg.HTTP),
		sessions: make(map[string]*session),
		conns:    make(map[*jsonrpc.Conn]struct{}),
	}
	s.cwd, _ = os.Getwd()
	s.httpHandler = rpcserve.Handler(s, s.listenOptions())
	return s, nil
}

// environment is the server's environment information, read once.
func (s *Server) environment() execproto.EnvironmentInfo {
	s.envOnce.Do(func() { s.env = environmentInfo(s.cwd) })
	return s.env
}

func environmentInfo(cwd string) execproto.EnvironmentInfo {
	shell := userShell()
	home, _ := os.UserHomeDir()
	host, _ := os.Hostname()
	// Codex identifies the machine by a hash; ours is of the host name, so
	// that it is stable across restarts and reveals nothing.
	provider := sha256.Sum256([]byte("codexd:" + host))
	return execproto.EnvironmentInfo{
		Shell:                execproto.Shell{Name: filepath.Base(shell), Path: shell},
		ExecutorVersion:      ExecutorVersion,
		ProviderID:           "sha256:" + hex.EncodeToString(provider[:]),
		Cwd:                  execproto.PathURI(cwd),
		UserHomeDir:          execproto.PathURI(home),
		PlatformOS:           runtime.GOOS,
		PrependPathDirs:      []string{},
		TemporaryDirectories: []string{},
		TempDir:              execproto.PathURI(os.TempDir()),
		Capabilities: execproto.Capabilities{
			FsWatchMissing:     true,
			FileWriteStreaming: true,
			HTTPHeaderEnvVars:  true,
		},
	}
}

// Close ends every connection and kills every process of every session.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	conns := make([]*jsonrpc.Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
	s.connsDone.Wait()
	s.mu.Lock()
	sessions := make([]*session, 0, len(s.sessions))
	for _, sess := range s.sessions {
		sessions = append(sessions, sess)
	}
	s.sessions = map[string]*session{}
	s.mu.Unlock()
	for _, sess := range sessions {
		sess.close()
	}
	s.sessionsDone.Wait()
	// Orphans adopted as a subreaper (procs.EnableSubreaper) that nothing
	// ties to a session any more are killed with the server.
	procs.KillAdopted()
	s.http.CloseIdleConnections()
	_ = s.fs.Release()
	return nil
}

// Sessions reports how many sessions are alive, attached or detached.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// ErrServerClosed is returned by ServeStream after Close.
var ErrServerClosed = errors.New("exec-server: server closed")

// ServeStream serves one connection until it ends. On return the
// connection's session, if any, is detached and its TTL is running.
func (s *Server) ServeStream(stream jsonrpc.Stream) error {
	return s.ServeStreamFrom(stream, "stdio", "stdio")
}

// ServeStreamFrom is ServeStream for a stream whose transport ("websocket",
// "unix", "stdio") and peer are known; they appear in parse errors, as in
// Codex's.
func (s *Server) ServeStreamFrom(stream jsonrpc.Stream, transport, peer string) error {
	c := &connection{srv: s, transport: transport, peer: peer}
	c.pumpCtx, c.pumpCancel = context.WithCancel(context.Background())
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = stream.Close()
		return ErrServerClosed
	}
	s.connsDone.Add(1)
	s.mu.Unlock()
	defer s.connsDone.Done()

	conn := jsonrpc.NewConn(stream, jsonrpc.Options{
		Handler:           c.order.wrap(c.mux()),
		Limits:            s.cfg.Limits,
		MaxConcurrency:    s.cfg.MaxConcurrency,
		OutboundBudget:    s.cfg.MaxResponseBytes,
		Admit:             c.admit,
		OrderKey:          orderKey,
		Unbounded:         unbounded,
		OnUnknownResponse: c.onUnknownResponse,
		OnInvalid:         c.onInvalid,
		Logger:            s.log,
	})
	s.mu.Lock()
	s.conns[conn] = struct{}{}
	closed := s.closed
	s.mu.Unlock()
	if closed {
		conn.Shutdown()
	}
	<-conn.Done()
	s.mu.Lock()
	delete(s.conns, conn)
	s.mu.Unlock()
	c.teardown()
	if err := conn.Err(); err != nil && !errors.Is(err, jsonrpc.ErrClosed) {
		s.log.Debug("exec-server connection ended", "err", err)
	}
	return nil
}

// phase of a connection's handshake.
type phase uint8

const (
	phaseNew          phase = iota // nothing yet
	phaseInitializing              // initialize is being handled
	phaseInitialized               // initialize answered; waiting for initialized
	phaseReady                     // initialized received
)

// connection is the state of one client connection.
type connection struct {
	srv             *Server
	transport, peer string

	mu           sync.Mutex
	phase        phase
	sess         *session
	fs           *fsops.ConnState
	pumpCtx      context.Context
	pumpCancel   context.CancelFunc
	pumps        sync.WaitGroup
	bodyStreams  map[string]struct{}
	bodyStreamWG sync.WaitGroup

	order procOrder // process requests in arrival order (procorder.go)
}

func (c *connection) teardown() {
	c.pumpCancel()
	c.pumps.Wait()
	c.bodyStreamWG.Wait()
	c.mu.Lock()
	sess, fs := c.sess, c.fs
	c.mu.Unlock()
	if fs != nil {
		_ = fs.Close()
	}
	if sess != nil {
		sess.detach(c)
	}
}

// admit runs on the reader in arrival order; it decides what only the order
// of messages can decide: what the handshake's notifications mean.
func (c *connection) admit(ctx context.Context, req *jsonrpc.Request) error {
	if req.IsCall() {
		if req.Method == execproto.MethodInitialize {
			// Codex handles a connection's messages one at a time, so a
			// client may pipeline initialize, initialized and its first
			// requests. initialize therefore completes here, on the reader,
			// before anything after it is read.
			return c.admitInitialize(ctx, req)
		}
		c.order.admit(req)
		return nil
	}
	if req.Method != execproto.MethodInitialized {
		return fmt.Errorf("unexpected notification %q", req.Method)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.phase {
	case phaseNew:
		return errors.New("received `initialized` notification before `initialize`")
	case phaseInitialized:
		c.phase = phaseReady
	}
	return nil
}

func (c *connection) onUnknownResponse(ctx context.Context, r *jsonrpc.Response) error {
	// The exec-server never calls its client, so any response is a protocol
	// violation; Codex closes the connection too.
	return fmt.Errorf("unexpected response with id %s", r.ID)
}

func (c *connection) onInvalid(ctx context.Context, de *jsonrpc.DecodeError) (*jsonrpc.Response, error) {
	// Codex answers every message it cannot parse with -32600 and id -1, and
	// goes on reading.
	id := jsonrpc.Int64ID(-1)
	return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{
		Code:    jsonrpc.CodeInvalidRequest,
		Message: c.parseErrorPrefix() + de.Error(),
	}}, nil
}

// parseErrorPrefix is how Codex introduces a parse error on each transport.
func (c *connection) parseErrorPrefix() string {
	if c.transport == "websocket" {
		return fmt.Sprintf("failed to parse websocket JSON-RPC message from exec-server websocket %s: ", c.peer)
	}
	return fmt.Sprintf("failed to parse JSON-RPC message from exec-server %s: ", c.transport)
}

// gate enforces the handshake for a method family, with Codex's messages.
func (c *connection) gate(family string) (*session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.phase {
	case phaseNew, phaseInitializing:
		if c.sess == nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("client must call initialize before using %s methods", family))
		}
		fallthrough
	case phaseInitialized:
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			fmt.Sprintf("client must send initialized before using %s methods", family))
	}
	if !c.sess.isOwner(c) {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "session has been resumed by another connection")
	}
	return c.sess, nil
}

func (c *connection) admitInitialize(ctx context.Context, req *jsonrpc.Request) error {
	p, err := decodeParams[execproto.InitializeParams](req.Method, req.Params)
	if err != nil {
		return err
	}
	_, err = c.initialize(ctx, p)
	if err != nil && !errors.Is(err, jsonrpc.ErrAsyncResponse) {
		return rpcError(err)
	}
	return err
}

func (c *connection) initialize(ctx context.Context, p execproto.InitializeParams) (execproto.InitializeResponse, error) {
	conn := jsonrpc.ConnFrom(ctx)
	c.mu.Lock()
	if c.phase != phaseNew {
		c.mu.Unlock()
		return execproto.InitializeResponse{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "initialize may only be sent once per connection")
	}
	c.phase = phaseInitializing
	c.mu.Unlock()
	sess, err := c.srv.attach(c, p.ResumeSessionID)
	c.mu.Lock()
	if err != nil {
		c.phase = phaseNew
		c.mu.Unlock()
		return execproto.InitializeResponse{}, err
	}
	c.sess = sess
	c.fs = c.srv.fs.NewConnState(func(n execproto.FsMissingChangedNotification) {
		_ = execproto.FsMissingChanged.Notify(c.pumpCtx, conn, n)
	})
	c.phase = phaseInitialized
	c.mu.Unlock()
	// A resumed session's running processes notify this connection of what
	// they do from now on. As in Codex, what happened while detached is not
	// replayed as notifications: the client reads it with process/read
	// (afterSeq = the last seq it saw), which returns the retained history.
	// Where each pump starts is fixed before the response goes out, so that
	// nothing a process does after a client's first read can fall between
	// that read and the pump.
	type resume struct {
		proc  *procs.Process
		after uint64
	}
	var resumes []resume
	if p.ResumeSessionID != nil {
		for _, proc := range sess.procs.Processes() {
			select {
			case <-proc.Done():
				continue // the client learns how it ended with process/read
			default:
			}
			// Held from here, before the answer can wait in the queue, so
			// that nothing after this point is evicted before the pump runs.
			after := proc.NextSeq() - 1
			proc.Hold(after)
			resumes = append(resumes, resume{proc, after})
		}
	}
	if err := conn.Respond(jsonrpc.RequestFrom(ctx).ID, execproto.InitializeResponse{
		SessionID: sess.id, EnvironmentInfo: c.srv.environment(),
	}, nil); err != nil {
		for _, r := range resumes {
			r.proc.Release()
		}
		return execproto.InitializeResponse{}, err
	}
	for _, r := range resumes {
		c.pumps.Add(1)
		go c.pump(c.pumpCtx, conn, sess, r.proc, r.after)
	}
	return execproto.InitializeResponse{}, jsonrpc.ErrAsyncResponse
}

// orderKey keeps the writes to one process in the order they arrived (the
// handlers of a connection otherwise run concurrently).
func orderKey(req *jsonrpc.Request) string {
	if req.Method != execproto.MethodProcessWrite {
		return ""
	}
	var p struct {
		ProcessID string `json:"processId"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return ""
	}
	return "write\x00" + p.ProcessID
}

// unbounded lets the requests that stop a process through even when every
// handler slot is held, for example by writes to children that do not read
// their stdin.
func unbounded(req *jsonrpc.Request) bool {
	switch req.Method {
	case execproto.MethodProcessTerminate, execproto.MethodProcessSignal, execproto.MethodEnvironmentStatus,
		// A start never waits for a slot, so that what waits for it in
		// procOrder (and may hold slots) is always released.
		execproto.MethodProcessStart:
		return true
	}
	return false
}
