// Package core is codexd's agent core: it runs threads and their turns.
// A turn sends the conversation to a model (the Responses API), streams the
// answer, runs the tools the model calls (commands through the exec-server,
// patches, plans) under the thread's approval policy and sandbox, and loops
// until the model answers without calling a tool.
//
// Front-ends drive it through the contract in package agent: operations go
// in through Thread.Submit, events come out of Thread.Events. Core
// implements agent.Core.
//
// The core must never know JSON-RPC or any wire type: it never imports
// appserver, appproto, jsonrpc or execproto (execclient's typed API is
// its only way to an exec-server, whichever environment it is). It reaches
// models only through a prompt.Client, commands and files only through an
// exec-server client, and disk only through its store.
package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/compaction"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/execenv"
	"github.com/codexd/codexd/modelinfo"
	"github.com/codexd/codexd/store"
)

// Config configures a Core.
type Config struct {
	// MCP makes the MCP connector of a new thread (its servers start in
	// the background); nil means no MCP servers. elicit puts its servers'
	// elicitations to the thread's user.
	MCP func(threadID string, elicit agent.MCPElicitFunc) agent.MCPConnector
	// Settings are the defaults of new threads: model, provider, cwd,
	// approval policy, sandbox...
	Settings agent.Settings
	// CodexHome is $CODEX_HOME: its AGENTS.md joins every thread's
	// instructions, and rollouts live under it.
	CodexHome string
	// Providers are the model providers by name. A provider whose client
	// could not be made (a missing API key) carries the error instead; a
	// turn on it fails with that error.
	Providers map[string]*Provider
	// Models lists the models a client may pick; when empty, the
	// configured model alone.
	Models []agent.ModelInfo
	// Catalog is the models' metadata (model_catalog_json's); nil means
	// Codex 0.169's built-in catalog. ModelOverrides (model_context_window,
	// model_auto_compact_token_limit, tool_output_token_limit) adjust the
	// entry of every model.
	Catalog        *modelinfo.Catalog
	ModelOverrides modelinfo.Overrides
	// WebSearch is config.toml's web_search: "cached" (the default),
	// "live" or "disabled".
	WebSearch string
	// Verbosity is model_verbosity; empty means the model's default.
	Verbosity string
	// ExecDialer connects to the exec-server that runs commands and file
	// operations: an in-process one (NewInProcessExec) or a remote one
	// (DialExec). The core dials once and shares the client between
	// threads, dialling again if it ends.
	ExecDialer func(ctx context.Context) (*execclient.Client, error)
	// Environments are the exec-servers turns select by id (see
	// environment.go); nil means only `local`, which is ExecDialer's.
	Environments Environments
	// DefaultEnvironment is the environment of a new thread that names
	// none: "" is ExecDialer's (`local`), "none" no environment.
	DefaultEnvironment string
	// Sandbox confines commands; nil means none is available, so
	// read-only and workspace-write commands are refused.
	Sandbox Sandbox
	// Shell is the shell commands run with (default /bin/bash).
	Shell string
	// NoLoginShell runs commands with `-c` instead of `-lc` unless the
	// model asks for a login shell (Codex's default is -lc; a login shell
	// can take a second or more to start).
	NoLoginShell bool
	// Notify is config.toml's notify: a program and its arguments, run at
	// each turn's end with Codex's JSON payload appended.
	Notify []string
	// ApplyPatchTool offers the apply_patch tool (a model can always send
	// a patch through exec_command).
	ApplyPatchTool bool
	// RequestUserInputTool offers request_user_input.
	RequestUserInputTool bool
	// NoSkills turns skill discovery off: no skills list reaches the
	// model and `$name` brings nothing in.
	NoSkills bool
	// SkillsAdminDir is the system-wide skills directory (""
	// means /etc/codex/skills); skills are searched from the project
	// root that ProjectRootMarkers find. See package skills.
	SkillsAdminDir string
	// BaseInstructions, when set, replace the built-in instructions, and
	// DeveloperInstructions are appended to them (config.toml's
	// instructions / model_instructions_file and developer_instructions);
	// a thread's own StartOptions win over both.
	BaseInstructions      string
	DeveloperInstructions string
	// ProjectDocMaxBytes caps the AGENTS.md text (default 32 KiB; negative
	// disables project docs).
	ProjectDocMaxBytes int
	// ProjectDocFallbackFilenames are read where a directory has no
	// AGENTS.md (project_doc_fallback_filenames).
	ProjectDocFallbackFilenames []string
	// ProjectRootMarkers make a directory the project's root for the
	// AGENTS.md walk (project_root_markers); nil means .git.
	ProjectRootMarkers []string
	// Originator is sent to the model provider when a thread gives none.
	Originator string
	// CliVersion is recorded in thread metadata.
	CliVersion string
	// ConfigFile is the config.toml that was read, if any.
	ConfigFile string
	// Compaction holds config.toml's compaction settings: the window,
	// the auto-compact limit and the prompt.
	Compaction compaction.Options
	// ReviewModel is review_model: the model review turns run on, when
	// the request names none; empty means the thread's.
	ReviewModel string
	// ShellEnvironment is the policy the commands' environment is built by
	// (config.toml's [shell_environment_policy]); see package execenv.
	ShellEnvironment execenv.Policy
	// SecretEnvVars are variables no command gets, whatever
	// ShellEnvironment says: the model providers' credentials (each
	// env_key and the variables of env_http_headers).
	SecretEnvVars []string
	// Store keeps threads (rollouts and their index); nil keeps nothing,
	// as if every thread were ephemeral. The core closes it in Close.
	Store  store.Store
	Logger *slog.Logger
}

// Provider is a model provider.
type Provider struct {
	Name   string
	Client prompt.Client
	// Err, when set, fails every turn on this provider (e.g. a missing API
	// key: "Missing environment variable: `OPENAI_API_KEY`").
	Err error
	// RequestMaxRetries is reported in retry messages; StreamMaxRetries
	// bounds the retries of an idle or cut stream.
	RequestMaxRetries int
	StreamMaxRetries  int
}

type providerClient = Provider

// defaultContextWindow is what Codex assumes for a model it has no metadata
// for.
const defaultContextWindow = 258400

// Core runs threads. It implements agent.Core.
type Core struct {
	cfg     Config
	log     *slog.Logger
	sandbox Sandbox
	ctx     context.Context // cancelled by Close
	stop    context.CancelFunc

	// execSem (capacity 1) is held while the shared client is checked,
	// dialled or closed; a caller waiting for it gives up when its context
	// ends, so an interrupt is not held back by another thread's dial.
	execSem    chan struct{}
	execClient *execclient.Client

	rules execRules // CODEX_HOME's command rules (rules.go)

	mu      sync.Mutex
	threads map[string]*thread
	// draining are threads that shut down while their events were still
	// undelivered: no longer loaded, but Close must release their pumps if
	// nobody reads them. A thread leaves it when its pump exits.
	draining map[*thread]bool
	// runs counts the threads' actors still running: a thread forgotten
	// and drained may still be stopping its MCP servers, which Close
	// must wait for (no server outlives the core).
	runs   sync.WaitGroup
	closed bool
}

var _ agent.Core = (*Core)(nil)

// New returns a core. Nothing is dialled or started until a thread needs it.
func New(cfg Config) (*Core, error) {
	if cfg.ExecDialer == nil {
		return nil, errors.New("core: Config.ExecDialer is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Shell == "" {
		cfg.Shell = "/bin/bash"
	}
	if cfg.Originator == "" {
		cfg.Originator = "codexd"
	}
	if cfg.Settings.Cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		cfg.Settings.Cwd = wd
	}
	if cfg.Settings.Approval == "" {
		cfg.Settings.Approval = agent.ApprovalOnRequest
	}
	if cfg.Settings.Sandbox.Mode == "" {
		cfg.Settings.Sandbox.Mode = agent.SandboxReadOnly
	}
	if cfg.Settings.ApprovalsReviewer == "" {
		cfg.Settings.ApprovalsReviewer = "user"
	}
	sb := cfg.Sandbox
	if sb == nil {
		sb = noSandbox{why: errors.New("no sandbox is configured")}
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Core{cfg: cfg, log: cfg.Logger, sandbox: sb, ctx: ctx, stop: stop, threads: map[string]*thread{}, draining: map[*thread]bool{}, execSem: make(chan struct{}, 1)}, nil
}

// exec returns the client of the environment ctx's turn selects, else the
// shared exec-server client, dialling it if needed.
func (c *Core) exec(ctx context.Context) (*execclient.Client, error) {
	if cl, ok, err := c.selectedExec(ctx); ok {
		return cl, err
	}
	select {
	case c.execSem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("connecting to the exec-server: %w", ctx.Err())
	}
	defer func() { <-c.execSem }()
	if c.execClient != nil {
		select {
		case <-c.execClient.Done():
			c.execClient.Close()
			c.execClient = nil
		default:
			return c.execClient, nil
		}
	}
	cl, err := c.cfg.ExecDialer(ctx)
	if err != nil {
		return nil, fmt.Errorf("connecting to the exec-server: %w", err)
	}
	c.execClient = cl
	return cl, nil
}

func (c *Core) provider(s agent.Settings) (*Provider, error) {
	p := c.cfg.Providers[s.ModelProvider]
	if p == nil {
		return nil, &prompt.Error{Message: fmt.Sprintf("model provider %q is not configured", s.ModelProvider), Info: "other"}
	}
	if p.Err != nil {
		return nil, p.Err
	}
	if p.Client == nil {
		return nil, &prompt.Error{Message: fmt.Sprintf("model provider %q has no client", s.ModelProvider), Info: "other"}
	}
	return p, nil
}

// contextWindow is the window of model that the compaction trigger and the
// usage reports measure against: model_context_window when set (never past
// the model's max_context_window, and its effective part, as in Codex), else the window of the
// configured model list, else the model's metadata: its effective window,
// as Codex reports it (258,400 for a model it knows nothing of).
func (c *Core) contextWindow(model string) int64 {
	info := c.modelInfo(model)
	if w := c.cfg.Compaction.ContextWindow; w > 0 {
		if info.MaxContextWindow > 0 {
			w = min(w, info.MaxContextWindow)
		}
		// model_context_window wins over what the model says, and is
		// used as the model's is: effective_context_window_percent of it
		// (Codex 0.169 reports 95,000 for a configured 100,000).
		if p := info.EffectiveContextWindowPercent; p > 0 {
			w = w * p / 100
		}
		return w
	}
	for _, m := range c.cfg.Models {
		if m.ID == model && m.ContextWindow > 0 {
			return m.ContextWindow
		}
	}
	if w := info.EffectiveContextWindow(); w > 0 {
		return w
	}
	return defaultContextWindow
}

// StartThread creates a thread and loads it.
func (c *Core) StartThread(ctx context.Context, opts agent.StartOptions) (*agent.Loaded, error) {
	s := c.defaultEnvironment(opts.Overrides.Apply(c.cfg.Settings))
	now := time.Now()
	info := agent.ThreadInfo{
		ID: newUUIDv7(), Ephemeral: opts.Ephemeral, Model: s.Model, ModelProvider: s.ModelProvider,
		Cwd: s.Cwd, Source: opts.Source, ThreadSource: opts.ThreadSource, Originator: opts.Originator,
		CliVersion: c.cfg.CliVersion, CreatedAt: now, UpdatedAt: now,
	}
	var rec recorder = nopRecorder{}
	if c.cfg.Store != nil && !opts.Ephemeral {
		w, err := c.cfg.Store.Create(ctx, store.ThreadMeta{
			ID: info.ID, CreatedAt: now, Source: opts.Source, ThreadSource: opts.ThreadSource,
			Originator: opts.Originator, CliVersion: c.cfg.CliVersion, Settings: s,
			BaseInstructions: opts.BaseInstructions, DeveloperInstructions: opts.DeveloperInstructions,
		})
		if err != nil {
			return nil, fmt.Errorf("creating the thread's rollout: %w", err)
		}
		info.Path = w.Path()
		rec = newStoreRecorder(w, c.log.With("thread", info.ID))
	}
	t, err := c.load(info, s, nil, nil, instructionsOpts{base: opts.BaseInstructions, developer: opts.DeveloperInstructions}, opts.Originator, opts.NoTools, rec)
	if err != nil {
		rec.Close()
		return nil, err
	}
	c.warnSandbox(t, s)
	if err := t.awaitRequiredMCP(ctx); err != nil {
		_, _ = t.Submit(context.Background(), agent.Shutdown{})
		return nil, err
	}
	return &agent.Loaded{Thread: t, Info: t.snapshotInfo()}, nil
}

// warnSandbox tells a thread's client up front that its sandbox mode cannot
// be enforced here (its commands will be refused).
func (c *Core) warnSandbox(t *thread, s agent.Settings) {
	if s.Sandbox.Mode != agent.SandboxReadOnly && s.Sandbox.Mode != agent.SandboxWorkspaceWrite {
		return
	}
	if err := c.sandbox.Available(); err != nil {
		t.q.push("", agent.Warning{Message: fmt.Sprintf("sandbox_mode %q cannot be enforced on this machine (%v): commands will be refused; use danger-full-access to run them unconfined", s.Sandbox.Mode, err)})
	}
}

// load registers and starts a thread.
func (c *Core) load(info agent.ThreadInfo, s agent.Settings, history []prompt.Item, turns []agent.Turn, base instructionsOpts, originator string, noTools bool, rec recorder) (*thread, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, agent.ErrThreadClosed
	}
	if _, dup := c.threads[info.ID]; dup {
		return nil, fmt.Errorf("thread %s is already loaded", info.ID)
	}
	t := &thread{
		core: c, id: info.ID, log: c.log.With("thread", info.ID), rec: rec,
		info: info, settings: s, base: base, history: history,
		turns:            &turnBuilder{turns: turns},
		approvedCommands: map[string]bool{}, approvedPatches: map[string]bool{},
		wake: make(chan struct{}, 1), done: make(chan struct{}),
		origin: originator, noTools: noTools,
	}
	if c.cfg.MCP != nil && !noTools {
		t.mcp = c.cfg.MCP(info.ID, t.elicit)
	}
	t.exec = newExecSessions(c.exec, c.cfg.Shell, func() map[string]string { return c.commandEnv(info.ID) })
	t.q = newEventQueue(func(ev agent.Event) {
		t.turns.apply(ev)
		t.rec.Event(ev)
	}, func() { c.drained(t) })
	c.threads[info.ID] = t
	c.runs.Add(1)
	go func() {
		defer c.runs.Done()
		t.run()
	}()
	return t, nil
}

// forget unloads a thread that shut down; until its last events are
// delivered it is draining.
func (c *Core) forget(t *thread) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.threads[t.id] == t {
		delete(c.threads, t.id)
	}
	select {
	case <-t.q.done: // drained already (drained ran, or runs, without it)
	default:
		c.draining[t] = true
	}
}

// drained runs when t's event pump has exited.
func (c *Core) drained(t *thread) {
	c.mu.Lock()
	delete(c.draining, t)
	c.mu.Unlock()
}

func (c *Core) loaded(id string) *thread {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.threads[id]
}

// ReadThread returns a thread's metadata and turns.
func (c *Core) ReadThread(ctx context.Context, id string, includeTurns bool) (agent.ThreadInfo, []agent.Turn, error) {
	if t := c.loaded(id); t != nil {
		var turns []agent.Turn
		if includeTurns {
			turns = t.turns.all()
		}
		return t.snapshotInfo(), turns, nil
	}
	if c.cfg.Store == nil {
		return agent.ThreadInfo{}, nil, agent.ErrThreadNotFound
	}
	if !includeTurns {
		info, err := c.cfg.Store.Info(ctx, id)
		return info, nil, err
	}
	st, err := c.cfg.Store.Read(ctx, id)
	if err != nil {
		return agent.ThreadInfo{}, nil, err
	}
	return st.Info, st.Turns, nil
}

// ListThreads pages through stored threads.
func (c *Core) ListThreads(ctx context.Context, q agent.ThreadQuery) (agent.ThreadPage, error) {
	if c.cfg.Store == nil {
		return agent.ThreadPage{}, nil
	}
	c.syncLoaded()
	return c.cfg.Store.List(ctx, q)
}

// syncLoaded brings the index up to date with loaded threads.
func (c *Core) syncLoaded() {
	c.mu.Lock()
	threads := make([]*thread, 0, len(c.threads))
	for _, t := range c.threads {
		threads = append(threads, t)
	}
	c.mu.Unlock()
	for _, t := range threads {
		_ = t.rec.Sync()
	}
}

// ArchiveThread hides a stored thread from the default listing.
func (c *Core) ArchiveThread(ctx context.Context, id string) error {
	if c.cfg.Store == nil {
		return agent.ErrThreadNotFound
	}
	if t := c.loaded(id); t != nil {
		_ = t.rec.Sync()
	}
	return c.cfg.Store.Archive(ctx, id)
}

// UnarchiveThread brings an archived thread back.
func (c *Core) UnarchiveThread(ctx context.Context, id string) (agent.ThreadInfo, error) {
	if c.cfg.Store == nil {
		return agent.ThreadInfo{}, agent.ErrThreadNotFound
	}
	return c.cfg.Store.Unarchive(ctx, id)
}

// SetThreadName names a thread.
func (c *Core) SetThreadName(ctx context.Context, id, name string) error {
	t := c.loaded(id)
	if t == nil {
		if c.cfg.Store == nil {
			return agent.ErrThreadNotFound
		}
		return c.cfg.Store.SetName(ctx, id, name)
	}
	t.mu.Lock()
	t.info.Name = name
	t.mu.Unlock()
	// The event reaches the rollout through the thread's writer; Sync
	// updates the index.
	t.q.push("", agent.ThreadNameUpdated{Name: name})
	return t.rec.Sync()
}

// Models lists the models a client may pick: the catalog's
// (model_catalog_json's, or Codex 0.169's built-in one), in Codex's
// order, the first visible one the default, as Codex's model/list.
func (c *Core) Models(ctx context.Context) ([]agent.ModelInfo, error) {
	if len(c.cfg.Models) > 0 {
		return append([]agent.ModelInfo(nil), c.cfg.Models...), nil
	}
	cat := c.cfg.Catalog
	if cat == nil {
		cat = modelinfo.Builtin()
	}
	listed := cat.Listed()
	out := make([]agent.ModelInfo, 0, len(listed))
	seenDefault := false
	for _, m := range listed {
		window := m.With(c.cfg.ModelOverrides)
		mi := agent.ModelInfo{
			ID: m.Slug, DisplayName: m.DisplayName, Hidden: !m.Visible(),
			DefaultReasoningEffort: m.DefaultReasoningLevel, SupportedEfforts: m.Efforts(),
			ContextWindow:            window.EffectiveContextWindow(),
			SupportsReasoningSummary: m.DefaultReasoningSummary != "none",
			ModelSpecialty:           m.ModelSpecialty, InputModalities: m.InputModalities,
			MultiAgentVersion: m.MultiAgentVersion, AdditionalSpeedTiers: m.AdditionalSpeedTiers,
			DefaultServiceTier: m.DefaultServiceTier,
		}
		if m.Upgrade != nil {
			mi.Upgrade = m.Upgrade.Model
		}
		for _, st := range m.ServiceTiers {
			mi.ServiceTiers = append(mi.ServiceTiers, agent.ServiceTier{ID: st.ID, Name: st.Name})
		}
		if !seenDefault && m.Visible() {
			mi.IsDefault, seenDefault = true, true
		}
		out = append(out, mi)
	}
	return out, nil
}

// Config reports the configuration new threads start from.
func (c *Core) Config() agent.Config {
	names := make([]string, 0, len(c.cfg.Providers))
	for n := range c.cfg.Providers {
		names = append(names, n)
	}
	sort.Strings(names)
	return agent.Config{Settings: c.cfg.Settings, CodexHome: c.cfg.CodexHome, Providers: names, ConfigFile: c.cfg.ConfigFile}
}

// Close shuts every thread down (interrupting running turns), waits for
// them, and closes the exec-server client.
func (c *Core) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	threads := make([]*thread, 0, len(c.threads))
	for _, t := range c.threads {
		threads = append(threads, t)
	}
	c.mu.Unlock()
	for _, t := range threads {
		_, _ = t.Submit(context.Background(), agent.Shutdown{})
	}
	for _, t := range threads {
		<-t.done
	}
	// Every thread has shut down, so every one left is draining (those
	// above, and those shut down earlier). Nobody may be reading any more:
	// let the pumps finish regardless.
	c.mu.Lock()
	drain := make([]*thread, 0, len(c.draining))
	for t := range c.draining {
		drain = append(drain, t)
	}
	c.mu.Unlock()
	for _, t := range append(drain, threads...) {
		t.q.discard()
		<-t.q.done
	}
	c.runs.Wait()
	c.stop()
	var errs []error
	if c.cfg.Store != nil {
		errs = append(errs, c.cfg.Store.Close())
	}
	c.execSem <- struct{}{}
	defer func() { <-c.execSem }()
	if c.execClient != nil {
		errs = append(errs, c.execClient.Close())
		c.execClient = nil
	}
	return errors.Join(errs...)
}

// stored reports whether the thread has a rollout: it is not ephemeral
// and has a user message.
func (t *thread) stored() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.info.Materialized && !t.info.Ephemeral
}

// materialized reports whether the thread has a user message yet.
func (t *thread) materialized() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.info.Materialized
}

// thread helpers that need the core.

func (t *thread) snapshotInfo() agent.ThreadInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	info := t.info
	info.Model, info.ModelProvider, info.Cwd = t.settings.Model, t.settings.ModelProvider, t.settings.Cwd
	info.ReasoningEffort = t.settings.ReasoningEffort
	return info
}

func (t *thread) loadedView() *agent.Loaded {
	t.mu.Lock()
	var usage *agent.TokenUsageInfo
	if t.usage != nil {
		u := *t.usage
		usage = &u
	}
	t.mu.Unlock()
	return &agent.Loaded{Thread: t, Info: t.snapshotInfo(), History: t.turns.completed(), Usage: usage}
}

func (t *thread) originator() string {
	if t.origin != "" {
		return t.origin
	}
	return t.core.cfg.Originator
}

// notePreview records the first user message as the thread's preview.
func (t *thread) notePreview(in []agent.Input) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.info.Materialized = true
	t.info.UpdatedAt = time.Now()
	if t.info.Preview != "" {
		return
	}
	for _, p := range in {
		if p.Type == "text" || p.Type == "" {
			t.info.Preview = p.Text
			return
		}
	}
}
