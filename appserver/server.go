package appserver

import (
	"context"
	"errors"
	"github.com/codexd/codexd/auth"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/environment"
	"github.com/codexd/codexd/execserver/fsops"
	"github.com/codexd/codexd/execserver/procs"
	"github.com/codexd/codexd/jsonrpc"
	"github.com/codexd/codexd/mcp"
	"github.com/codexd/codexd/sandbox"
	"github.com/codexd/codexd/skills"
)

// Defaults of Config.
const (
	// DefaultMaxInbound is how many requests a connection may have in
	// flight (running, queued or deferred) before new ones get -32001; it is
	// Codex's ingress queue size.
	DefaultMaxInbound = 128
	// DefaultMaxConcurrency bounds the handlers running at once per
	// connection.
	DefaultMaxConcurrency = 32
	// DefaultClientQueue is how many messages an in-process client may have
	// waiting before the server waits for it (backpressure, as on stdio).
	DefaultClientQueue = 1024
	// Version is the Codex version whose protocol codexd speaks; it is in
	// the user agent and in the threads' cliVersion.
	Version = "0.169.0"
)

// Config configures a Server.
type Config struct {
	// Core is the agent core. Required.
	Core agent.Core
	// MaxInbound, MaxConcurrency and ClientQueue: see the defaults.
	MaxInbound     int
	MaxConcurrency int
	ClientQueue    int
	// MaxQueuedBytes bounds each connection's outbound queue (0 means
	// jsonrpc's default, 1 MiB); a WebSocket client that lets it fill is
	// disconnected.
	MaxQueuedBytes int
	// MaxMessage and Limits bound each inbound message.
	MaxMessage int64
	Limits     jsonrpc.Limits
	// FS confines and limits the fs/* methods (and command/exec's cwd).
	FS fsops.Config
	// Procs tunes the processes of command/exec.
	Procs procs.Config
	// CommandEnv builds command/exec's environment before the request's
	// env applies: the same one the agent's commands get (the shell
	// environment policy, no provider's credential). Nil means the
	// server's own environment, whole.
	CommandEnv func() map[string]string
	// Requirements are managed constraints on the settings clients may
	// choose; nil means none.
	Requirements *Requirements
	// IdleUnload is how long a thread stays loaded once it has no
	// subscriber and no running turn (0 means DefaultIdleUnload, negative
	// never unloads).
	IdleUnload time.Duration
	// Skills discovers the skills of a cwd for skills/list (package
	// skills); nil lists none.
	Skills func(cwd string) ([]skills.Skill, []skills.LoadError)
	// InstallationID is the installation's id, reported in
	// remoteControl/status/changed (Codex keeps it in
	// $CODEX_HOME/installation_id); empty means a fresh one per server.
	InstallationID string
	// Auth is the stored sign-in that account/read reports; nil reports
	// none. RequiresOpenAIAuth is the selected provider's flag.
	Auth               *auth.Manager
	RequiresOpenAIAuth bool
	// ConfigWarnings go to each client after initialize (configWarning).
	ConfigWarnings []appproto.ConfigWarningNotification
	// Environments are the exec-servers of environment/*; nil means a
	// registry of the server's own, with no environment.
	Environments *environment.Registry
	// MCP knows the configured MCP servers and each thread's (nil: none);
	// see mcp.go.
	MCP    *mcp.Registry
	Logger *slog.Logger
}

// Requirements constrain what turn/start and thread/start may override,
// as an administrator's requirements do in Codex.
type Requirements struct {
	// AllowedApprovalPolicies, when set, lists the approval policies
	// ("untrusted", "on-request", "never") clients may choose.
	AllowedApprovalPolicies []string
	// AllowedSandboxModes, when set, lists the sandbox modes
	// ("read-only", "workspace-write", "danger-full-access").
	AllowedSandboxModes []string
}

// Server serves the app-server protocol on any number of connections.
type Server struct {
	cfg  Config
	core agent.Core
	log  *slog.Logger
	fs   *fsops.Service
	mcp  *mcpHub

	// mu guards the registries; a session's and a thread's own state have
	// their own locks, always taken after mu is released (never the other
	// way round).
	mu         sync.Mutex
	sessions   map[*session]struct{}
	threads    map[string]*thread
	originator string // the first client's name: Codex's process-wide originator
	// installationID is Config.InstallationID, or a fresh UUID.
	installationID string
	// reads holds the threads' read state (readstate.go); its own lock.
	reads      readStates
	nextSessID uint64
	closed     bool
	handlers   map[string]*handler // set by New, read-only after
	conns      sync.WaitGroup      // served connections
	listeners  sync.WaitGroup      // thread listeners

	// cfgw serializes config writes and keeps what they set
	// (config_write.go).
	cfgw configWriter

	// sandboxCheck says whether this kernel can enforce a sandbox mode
	// (sandbox.Check; tests replace it).
	sandboxCheck func(sandbox.Mode) error

	fuzzy fuzzySearches // fuzzyFileSearch sessions (fuzzy.go)

	envs     *environment.Registry
	ownEnvs  bool   // envs is the server's: Close closes it
	unwatch  func() // stops environmentEvent
	envQueue envEvents

	// announceHook, when a test sets it, runs after a handler has told
	// the caller's connection what it announces to every connection (a
	// notification of method), and before it tells the others
	// (announce.go).
	announceHook atomic.Pointer[func(method string)]
}

// ErrServerClosed is returned by ServeStream and NewClient after Close.
var ErrServerClosed = errors.New("app-server: server closed")

// New returns a server over cfg.Core.
func New(cfg Config) (*Server, error) {
	if cfg.Core == nil {
		return nil, errors.New("app-server: no agent core")
	}
	if cfg.MaxInbound <= 0 {
		cfg.MaxInbound = DefaultMaxInbound
	}
	if cfg.MaxConcurrency <= 0 {
		cfg.MaxConcurrency = DefaultMaxConcurrency
	}
	if cfg.ClientQueue <= 0 {
		cfg.ClientQueue = DefaultClientQueue
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	fs, err := fsops.New(cfg.FS)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:      cfg,
		core:     cfg.Core,
		log:      cfg.Logger,
		fs:       fs,
		sessions: make(map[*session]struct{}),
		threads:  make(map[string]*thread),
		handlers: make(map[string]*handler),

		sandboxCheck: sandbox.Check,
	}
	if s.envs = cfg.Environments; s.envs == nil {
		s.envs, s.ownEnvs = environment.New(environment.Options{}), true
	}
	s.installationID = cfg.InstallationID
	if s.installationID == "" {
		s.installationID = uuid.NewString()
	}
	s.registerAll()
	s.registerFuzzy()
	s.mcp = newMCPHub(s)
	s.unwatch = s.envs.Watch(s.environmentEventAsync)
	return s, nil
}

// registerAll binds every method codexd serves to its handler.
func (s *Server) registerAll() {
	s.registerEnvironments()
	register(s, appproto.Initialize, s.initialize)
	register(s, appproto.ThreadStart, s.threadStart)
	register(s, appproto.ThreadResume, s.threadResume)
	register(s, appproto.ThreadFork, s.threadFork)
	register(s, appproto.ThreadRead, s.threadRead)
	register(s, appproto.ThreadList, s.threadList)
	register(s, appproto.ThreadLoadedList, s.threadLoadedList)
	register(s, appproto.ThreadTurnsList, s.threadTurnsList)
	register(s, appproto.ThreadUnsubscribe, s.threadUnsubscribe)
	register(s, appproto.ThreadArchive, s.threadArchive)
	register(s, appproto.ThreadUnarchive, s.threadUnarchive)
	register(s, appproto.ThreadNameSet, s.threadNameSet)
	register(s, appproto.ThreadSettingsUpdate, s.threadSettingsUpdate)
	register(s, appproto.ThreadReadStateUpdate, s.threadReadStateUpdate)
	register(s, appproto.TurnStart, s.turnStart)
	register(s, appproto.TurnSteer, s.turnSteer)
	register(s, appproto.TurnInterrupt, s.turnInterrupt)
	register(s, appproto.ModelList, s.modelList)
	register(s, appproto.AccountRead, s.accountRead)
	register(s, appproto.ConfigRead, s.configRead)
	register(s, appproto.ConfigRequirementsRead, s.configRequirementsRead)
	register(s, appproto.SkillsList, s.skillsList)
	register(s, appproto.PermissionProfileList, s.permissionProfileList)
	register(s, appproto.CollaborationModeList, s.collaborationModeList)
	register(s, appproto.CommandExec, s.commandExec)
	register(s, appproto.CommandExecWrite, s.commandExecWrite)
	register(s, appproto.CommandExecTerminate, s.commandExecTerminate)
	register(s, appproto.CommandExecResize, s.commandExecResize)
	register(s, appproto.FsReadFile, s.fsReadFile)
	register(s, appproto.FsWriteFile, s.fsWriteFile)
	register(s, appproto.FsCreateDirectory, s.fsCreateDirectory)
	register(s, appproto.FsGetMetadata, s.fsGetMetadata)
	register(s, appproto.FsReadDirectory, s.fsReadDirectory)
	register(s, appproto.FsRemove, s.fsRemove)
	register(s, appproto.FsCopy, s.fsCopy)
	registerCompactReview(s)
	registerShell(s)
	registerTerminals(s)
	registerConfigWrite(s)
	registerMCP(s)
	registerThreadDelete(s)
	registerFeatures(s)
	registerThreadRevert(s)
	registerThreadItemsList(s)
	registerSkillsConfigWrite(s)
	threadScoped(s, appproto.MethodThreadResume, appproto.MethodThreadFork, appproto.MethodThreadRead,
		appproto.MethodThreadUnsubscribe, appproto.MethodThreadArchive, appproto.MethodThreadNameSet,
		appproto.MethodThreadSettingsUpdate, appproto.MethodThreadTurnsList, appproto.MethodTurnStart,
		appproto.MethodTurnSteer, appproto.MethodTurnInterrupt, appproto.MethodThreadReadStateUpdate)
	for _, m := range []string{appproto.MethodCommandExec, appproto.MethodCommandExecWrite,
		appproto.MethodCommandExecTerminate, appproto.MethodCommandExecResize} {
		s.handlers[m].processOf = peekProcessID
	}
}

// Close ends every connection and in-process client, shuts every loaded
// thread down and waits for their listeners. It does not close the core,
// which belongs to the caller.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	sessions := make([]*session, 0, len(s.sessions))
	for sess := range s.sessions {
		sessions = append(sessions, sess)
	}
	threads := make([]*thread, 0, len(s.threads))
	for _, t := range s.threads {
		threads = append(threads, t)
	}
	s.mu.Unlock()
	s.closeFuzzy()
	for _, sess := range sessions {
		sess.out.shutdown()
	}
	s.conns.Wait()
	for _, sess := range sessions {
		sess.close()
	}
	for _, t := range threads {
		t.shutdown()
	}
	s.listeners.Wait()
	s.unwatch()
	s.envQueue.wg.Wait()
	s.mcp.close()
	if s.ownEnvs {
		return s.envs.Close()
	}
	return nil
}

// addSession registers a new connection, or fails after Close.
func (s *Server) addSession(out peer) (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrServerClosed
	}
	s.nextSessID++
	sess := newSession(s, s.nextSessID, out)
	s.sessions[sess] = struct{}{}
	return sess, nil
}

func (s *Server) removeSession(sess *session) {
	s.mu.Lock()
	delete(s.sessions, sess)
	s.mu.Unlock()
}

// initializedSessions returns the sessions that completed initialize, in
// the order they connected.
func (s *Server) initializedSessions() []*session {
	s.mu.Lock()
	out := make([]*session, 0, len(s.sessions))
	for sess := range s.sessions {
		out = append(out, sess)
	}
	s.mu.Unlock()
	kept := out[:0]
	for _, sess := range out {
		if sess.isInitialized() {
			kept = append(kept, sess)
		}
	}
	sortSessions(kept)
	return kept
}

// thread returns the loaded thread id, or nil.
func (s *Server) thread(id string) *thread {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.threads[id]
}

// loadedThreadIDs returns the ids of the loaded threads, oldest first.
func (s *Server) loadedThreads() []*thread {
	s.mu.Lock()
	out := make([]*thread, 0, len(s.threads))
	for _, t := range s.threads {
		out = append(out, t)
	}
	s.mu.Unlock()
	sortThreads(out)
	return out
}

// nowMs is the time notifications carry in emittedAtMs.
func nowMs() int64 { return time.Now().UnixMilli() }

// background is the context of work that outlives a request (submitting
// to the core from a listener).
var background = context.Background()
