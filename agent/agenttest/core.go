// Package agenttest is a scripted, deterministic implementation of
// agent.Core for tests and benchmarks of front-ends (the app-server,
// `codexd exec`).
//
// Each turn runs a TurnFunc written by the test: it emits events through a
// *Turn, waits on approval decisions and on Gates that the test opens, and
// learns of interrupts, so that a test drives a turn one step at a time and
// knows exactly what the front-end saw. With Instant set, a turn runs to
// completion inside Submit (the fixed DefaultTurn script), which is what a
// benchmark of the front-end's own overhead wants.
//
// It keeps threads in memory only. It must never be used by the real
// binary outside a benchmark, and must never grow behaviour the contract
// (package agent) does not promise: front-ends tested against it must work
// against the real core too.
package agenttest

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/codexd/codexd/agent"
)

// TurnFunc plays one turn. It returns when the turn is done; the core then
// ends the turn (completed, or interrupted if it was interrupted, or failed
// if the func called t.Fail).
type TurnFunc func(t *Turn)

// Options configure a Core.
type Options struct {
	// Turn plays every turn; nil plays DefaultTurn.
	Turn TurnFunc
	// Instant completes each turn inside Submit with DefaultTurn's events
	// (Turn is ignored).
	Instant bool
	// InstantDeltas splits an instant turn's answer into this many deltas
	// (default 1), for benchmarks of notification fan-out.
	InstantDeltas int
	// Config is what Core.Config reports; zero fields get defaults.
	Config agent.Config
	// Now returns the time events carry; nil uses time.Now.
	Now func() time.Time
}

// Core is a scripted agent.Core. It is safe for concurrent use.
type Core struct {
	opts Options

	mu      sync.Mutex
	nextID  uint64
	threads map[string]*stored // every thread, loaded or not
	closed  bool

	turnKind    string
	abandon     chan struct{} // closed when Close stops waiting for consumers
	abandonOnce sync.Once
}

// stored is a thread as the core's store knows it.
type stored struct {
	info    agent.ThreadInfo
	history []agent.Turn
	usage   *agent.TokenUsageInfo
	loaded  *Thread
}

// New returns a scripted core.
func New(opts Options) *Core {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &opts.Config
	if c.Model == "" {
		c.Model = "mock-model"
	}
	if c.ModelProvider == "" {
		c.ModelProvider = "mock"
	}
	if c.Providers == nil {
		c.Providers = []string{c.ModelProvider}
	}
	if c.Approval == "" {
		c.Approval = agent.ApprovalNever
	}
	if c.ApprovalsReviewer == "" {
		c.ApprovalsReviewer = "user"
	}
	if c.Sandbox.Mode == "" {
		c.Sandbox.Mode = agent.SandboxWorkspaceWrite
	}
	if c.CollaborationMode == "" {
		c.CollaborationMode = "default"
	}
	if c.CodexHome == "" {
		c.CodexHome = "/nonexistent/codexd-agenttest"
	}
	if c.Cwd == "" {
		c.Cwd = "/"
	}
	return &Core{opts: opts, threads: make(map[string]*stored), abandon: make(chan struct{})}
}

// newID returns a fresh UUIDv7-shaped id, ordered by creation.
func (c *Core) newID() string {
	c.nextID++
	return fmt.Sprintf("019a0000-0000-7000-8000-%012x", c.nextID)
}

// NewID returns a fresh id for a turn or an item (exported for scripts).
func (c *Core) NewID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.newID()
}

// SetTurn replaces the TurnFunc of turns started from now on.
func (c *Core) SetTurn(f TurnFunc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.opts.Turn = f
}

func (c *Core) turnFunc() TurnFunc {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.opts.Turn == nil {
		return DefaultTurn
	}
	return c.opts.Turn
}

// Thread returns the loaded thread with this id, or nil.
func (c *Core) Thread(id string) *Thread {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.threads[id]; s != nil {
		return s.loaded
	}
	return nil
}

func (c *Core) StartThread(ctx context.Context, opts agent.StartOptions) (*agent.Loaded, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, agent.ErrThreadClosed
	}
	settings := opts.Overrides.Apply(c.opts.Config.Settings)
	now := c.opts.Now()
	id := c.newID()
	info := agent.ThreadInfo{
		ID: id, Ephemeral: opts.Ephemeral, Model: settings.Model, ModelProvider: settings.ModelProvider,
		Cwd: settings.Cwd, Source: opts.Source, ThreadSource: opts.ThreadSource, Originator: opts.Originator, CliVersion: "0.169.0",
		CreatedAt: now, UpdatedAt: now,
	}
	if !opts.Ephemeral {
		info.Path = "/nonexistent/sessions/rollout-" + id + ".jsonl"
	}
	s := &stored{info: info}
	s.loaded = newThread(c, s, settings)
	c.threads[id] = s
	return &agent.Loaded{Thread: s.loaded, Info: info}, nil
}

func (c *Core) ResumeThread(ctx context.Context, id string, o agent.Overrides) (*agent.Loaded, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.threads[id]
	if s == nil || s.info.Ephemeral && s.loaded == nil {
		return nil, agent.ErrThreadNotFound
	}
	if s.loaded == nil {
		s.loaded = newThread(c, s, o.Apply(c.opts.Config.Settings))
	}
	return &agent.Loaded{Thread: s.loaded, Info: s.info, History: cloneTurns(s.history), Usage: s.usage}, nil
}

func (c *Core) ForkThread(ctx context.Context, id string, opts agent.StartOptions) (*agent.Loaded, error) {
	c.mu.Lock()
	src := c.threads[id]
	if src == nil {
		c.mu.Unlock()
		return nil, agent.ErrThreadNotFound
	}
	history := cloneTurns(src.history)
	forkedFrom := src.info.ID
	preview, name := src.info.Preview, src.info.Name
	c.mu.Unlock()
	l, err := c.StartThread(ctx, opts)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.threads[l.Info.ID]
	s.info.ForkedFromID = forkedFrom
	s.info.Preview, s.info.Name = preview, name
	s.info.Materialized = len(history) > 0
	s.history = history
	l.Info, l.History = s.info, cloneTurns(history)
	return l, nil
}

func (c *Core) ReadThread(ctx context.Context, id string, includeTurns bool) (agent.ThreadInfo, []agent.Turn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.threads[id]
	if s == nil {
		return agent.ThreadInfo{}, nil, agent.ErrThreadNotFound
	}
	if !includeTurns {
		return s.info, nil, nil
	}
	return s.info, cloneTurns(s.history), nil
}

func (c *Core) ListThreads(ctx context.Context, q agent.ThreadQuery) (agent.ThreadPage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var all []agent.ThreadInfo
	for _, s := range c.threads {
		if s.info.Ephemeral || s.info.Archived != q.Archived {
			continue
		}
		all = append(all, s.info)
	}
	sort.Slice(all, func(i, j int) bool {
		if q.Ascending {
			return all[i].ID < all[j].ID
		}
		return all[i].ID > all[j].ID
	})
	start := 0
	if q.Cursor != "" {
		n, err := strconv.Atoi(q.Cursor)
		if err != nil || n < 0 {
			return agent.ThreadPage{}, fmt.Errorf("invalid cursor: %s", q.Cursor)
		}
		start = min(n, len(all))
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 25
	}
	end := min(start+limit, len(all))
	page := agent.ThreadPage{Threads: all[start:end]}
	if end < len(all) {
		page.NextCursor = strconv.Itoa(end)
	}
	return page, nil
}

func (c *Core) ArchiveThread(ctx context.Context, id string) error {
	c.mu.Lock()
	s := c.threads[id]
	if s == nil || s.info.Ephemeral {
		c.mu.Unlock()
		return agent.ErrThreadNotFound
	}
	s.info.Archived = true
	th := s.loaded
	s.loaded = nil
	c.mu.Unlock()
	if th != nil {
		_, _ = th.Submit(ctx, agent.Shutdown{})
	}
	return nil
}

func (c *Core) UnarchiveThread(ctx context.Context, id string) (agent.ThreadInfo, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.threads[id]
	if s == nil || !s.info.Archived {
		return agent.ThreadInfo{}, agent.ErrThreadNotFound
	}
	s.info.Archived = false
	s.info.UpdatedAt = c.opts.Now()
	return s.info, nil
}

func (c *Core) SetThreadName(ctx context.Context, id, name string) error {
	c.mu.Lock()
	s := c.threads[id]
	if s == nil || s.info.Ephemeral && s.loaded == nil {
		c.mu.Unlock()
		return agent.ErrThreadNotFound
	}
	s.info.Name = name
	th := s.loaded
	c.mu.Unlock()
	if th != nil {
		th.emit("", agent.ThreadNameUpdated{Name: name})
	}
	return nil
}

func (c *Core) Models(ctx context.Context) ([]agent.ModelInfo, error) {
	return []agent.ModelInfo{{
		ID: c.opts.Config.Model, DisplayName: c.opts.Config.Model, Description: "Scripted model of agenttest.",
		IsDefault: true, DefaultReasoningEffort: "medium", SupportedEfforts: []string{"low", "medium", "high"},
		ContextWindow: 258400,
	}}, nil
}

func (c *Core) Config() agent.Config { return c.opts.Config }

// CloseGrace is how long Close waits for the consumers of loaded threads to
// read the last events.
var CloseGrace = time.Second

// Close shuts every loaded thread down.
func (c *Core) Close() error {
	c.mu.Lock()
	c.closed = true
	var loaded []*Thread
	for _, s := range c.threads {
		if s.loaded != nil {
			loaded = append(loaded, s.loaded)
			s.loaded = nil
		}
	}
	c.mu.Unlock()
	for _, th := range loaded {
		_, _ = th.Submit(context.Background(), agent.Shutdown{})
	}
	// A consumer reads Events until they close; one that stopped reading
	// is given a grace period, then the rest of its events are dropped.
	grace := time.NewTimer(CloseGrace)
	defer grace.Stop()
	for _, th := range loaded {
		select {
		case <-th.done:
		case <-grace.C:
			c.abandonOnce.Do(func() { close(c.abandon) })
			<-th.done
		}
	}
	return nil
}

// unloaded forgets th as the loaded form of its thread (it shut down).
func (c *Core) unloaded(th *Thread) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if th.store.loaded == th {
		th.store.loaded = nil
	}
}

// recordTurn stores a finished turn in the thread's history.
func (c *Core) recordTurn(s *stored, t agent.Turn, usage *agent.TokenUsageInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s.history = append(s.history, t)
	if usage != nil {
		u := *usage
		s.usage = &u
	}
	s.info.UpdatedAt = c.opts.Now()
}

// firstInput records that the thread has a user message.
func (c *Core) firstInput(s *stored, in []agent.Input) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !s.info.Materialized {
		s.info.Materialized = true
		for _, i := range in {
			if i.Type == "text" {
				s.info.Preview = i.Text
				break
			}
		}
	}
}

func cloneTurns(ts []agent.Turn) []agent.Turn {
	out := make([]agent.Turn, len(ts))
	for i, t := range ts {
		t.Items = append([]agent.Item(nil), t.Items...)
		out[i] = t
	}
	return out
}

// SetTurnKind makes turns started from now on of kind ("regular",
// "review" or "compact"): review and compact turns cannot be steered.
func (c *Core) SetTurnKind(kind string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.turnKind = kind
}

func (c *Core) nextTurnKind() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.turnKind == "" {
		return "regular"
	}
	return c.turnKind
}
