package procs

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Defaults of Config, taken from Codex 0.169 where it has one.
const (
	// DefaultRingBytes is the output retained per process (Codex: 1 MiB).
	DefaultRingBytes = 1 << 20
	// DefaultRingChunks bounds the retained chunk count too, so that a
	// child writing single bytes cannot make a replay of 1 MiB cost a
	// million chunks (newer Codex uses the same bound).
	DefaultRingChunks = 50_000
	// DefaultChunkSize is the largest chunk read at once (Codex: 8 KiB).
	DefaultChunkSize = 8 << 10
	// DefaultClosedTTL is how long a closed process stays readable and its
	// id reserved. Codex 0.169 was observed to drop a closed process 80 s
	// after process/closed (newer source says 30 s).
	DefaultClosedTTL = 80 * time.Second
	// DefaultStdinQueue is how many writes may wait for a slow stdin.
	DefaultStdinQueue = 128
	// DefaultWriteIDs is how many accepted write ids a process remembers
	// (newer Codex: 4096).
	DefaultWriteIDs = 4096
	// DefaultKillGrace is how long KillAll waits for output to reach EOF
	// after SIGKILL before it closes the streams itself.
	DefaultKillGrace = time.Second
	// DefaultRows and DefaultCols are the pty size (Codex: 24×80).
	DefaultRows = 24
	DefaultCols = 80
)

// Config tunes a Manager. Zero fields take the defaults above.
type Config struct {
	RingBytes  int
	RingChunks int
	ChunkSize  int
	ClosedTTL  time.Duration
	StdinQueue int
	WriteIDs   int
	KillGrace  time.Duration
	Rows, Cols uint16
}

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.RingBytes, DefaultRingBytes)
	def(&c.RingChunks, DefaultRingChunks)
	def(&c.ChunkSize, DefaultChunkSize)
	def(&c.StdinQueue, DefaultStdinQueue)
	def(&c.WriteIDs, DefaultWriteIDs)
	// The newest chunk must always fit, or eviction would drop it unread.
	c.RingBytes = max(c.RingBytes, c.ChunkSize)
	if c.ClosedTTL <= 0 {
		c.ClosedTTL = DefaultClosedTTL
	}
	if c.KillGrace <= 0 {
		c.KillGrace = DefaultKillGrace
	}
	if c.Rows == 0 {
		c.Rows = DefaultRows
	}
	if c.Cols == 0 {
		c.Cols = DefaultCols
	}
	return c
}

// Manager owns the processes of one session. It is safe for concurrent use.
type Manager struct {
	cfg Config

	mu     sync.Mutex
	procs  map[string]*Process   // by id: starting, running and retained
	live   map[*Process]struct{} // started and not yet closed
	closed bool

	inflight  sync.WaitGroup // Start calls past the closed check
	closeOnce sync.Once

	grownPipes atomic.Int32 // pipes of running children grown by growPipe

	// onExpire, if set before use, runs when a TTL releases an id (tests).
	onExpire func(id string)
}

// NewManager returns an empty manager.
func NewManager(cfg Config) *Manager {
	return &Manager{
		cfg:   cfg.withDefaults(),
		procs: make(map[string]*Process),
		live:  make(map[*Process]struct{}),
	}
}

// Start spawns a process. The id stays reserved from this call until the
// closed process's TTL has passed. Errors: ErrEmptyArgv (checked first, as
// in Codex), ErrManagerClosed, ErrDuplicateProcess, ErrSpawn and
// ErrStartCancelled.
func (m *Manager) Start(opts StartOptions) (*Process, error) {
	if len(opts.Argv) == 0 {
		return nil, newError(ErrEmptyArgv, opts.ID, ErrEmptyArgv.Error(), nil)
	}
	p := newProcess(m, &opts)
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, newError(ErrManagerClosed, opts.ID, ErrManagerClosed.Error(), nil)
	}
	if _, ok := m.procs[opts.ID]; ok {
		m.mu.Unlock()
		return nil, errDuplicate(opts.ID)
	}
	p.starting = true
	m.procs[opts.ID] = p
	m.inflight.Add(1)
	m.mu.Unlock()
	defer m.inflight.Done()

	rows, cols := m.cfg.Rows, m.cfg.Cols
	if opts.Rows > 0 && opts.Cols > 0 {
		rows, cols = opts.Rows, opts.Cols
	}
	sp, err := spawn(&opts, rows, cols)
	if err != nil {
		m.mu.Lock()
		if m.procs[opts.ID] == p {
			delete(m.procs, opts.ID)
		}
		m.mu.Unlock()
		return nil, spawnError(opts.ID, err)
	}
	m.mu.Lock()
	p.starting = false
	cancelled := p.cancelled
	m.live[p] = struct{}{}
	// Under m.mu so that whoever finds p in the map sees it started.
	p.start(sp)
	m.mu.Unlock()
	if cancelled {
		p.Terminate()
		return nil, errCancelled(opts.ID)
	}
	return p, nil
}

func spawnError(id string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		e.ProcessID = id
		return e
	}
	return newError(ErrSpawn, id, rustIOMessage(err), err)
}

// Get returns the process with this id: ErrUnknownProcess if there is none
// (or its TTL passed), ErrProcessStarting while its start is in progress.
func (m *Manager) Get(id string) (*Process, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.procs[id]
	switch {
	case !ok:
		return nil, errUnknown(id)
	case p.starting:
		return nil, errStarting(id)
	}
	return p, nil
}

// Processes returns the started processes, running or retained, by id.
func (m *Manager) Processes() []*Process {
	m.mu.Lock()
	ps := make([]*Process, 0, len(m.procs))
	for _, p := range m.procs {
		if !p.starting {
			ps = append(ps, p)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(ps, func(a, b *Process) int { return strings.Compare(a.id, b.id) })
	return ps
}

// Read answers process/read for id; see Process.Read.
func (m *Manager) Read(ctx context.Context, id string, o ReadOptions) (ReadResult, error) {
	p, err := m.Get(id)
	if err != nil {
		return ReadResult{}, err
	}
	return p.Read(ctx, o)
}

// Write answers process/write for id. As in Codex, an empty writeID is an
// error (checked first), while an unknown or starting process is a status.
func (m *Manager) Write(ctx context.Context, id, writeID string, data []byte) (WriteStatus, error) {
	if writeID == "" {
		return "", newError(ErrEmptyWriteID, id, ErrEmptyWriteID.Error(), nil)
	}
	p, err := m.Get(id)
	switch {
	case errors.Is(err, ErrUnknownProcess):
		return WriteUnknownProcess, nil
	case errors.Is(err, ErrProcessStarting):
		return WriteStarting, nil
	}
	return p.Write(ctx, writeID, data)
}

// Signal answers process/signal for id. As in Codex, an unknown, starting
// or exited process is not an error.
func (m *Manager) Signal(id string, sig syscall.Signal) error {
	p, err := m.Get(id)
	if err != nil {
		return nil
	}
	return p.Signal(sig)
}

// Terminate answers process/terminate for id: it kills the process group
// and reports whether the process was running. An unknown id reports
// false. A process still starting is cancelled (its Start fails with
// ErrStartCancelled) and reports true.
func (m *Manager) Terminate(id string) bool {
	m.mu.Lock()
	p, ok := m.procs[id]
	if !ok {
		m.mu.Unlock()
		return false
	}
	if p.starting {
		p.cancelled = true
		delete(m.procs, id)
		m.mu.Unlock()
		return true
	}
	m.mu.Unlock()
	return p.Terminate()
}

// processClosed runs once per process, when it closes: it starts the TTL
// after which the id is released.
func (m *Manager) processClosed(p *Process) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.live, p)
	if m.closed || m.procs[p.id] != p {
		return
	}
	p.ttl = time.AfterFunc(m.cfg.ClosedTTL, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.procs[p.id] == p {
			delete(m.procs, p.id)
			if m.onExpire != nil {
				m.onExpire(p.id)
			}
		}
	})
}

// KillAll kills the process group of every process, waits until each one
// has been reaped and closed, and returns. Output that a descendant outside
// the group still holds open is cut after Config.KillGrace. Processes stay
// readable (as closed) until their TTL.
func (m *Manager) KillAll() {
	m.mu.Lock()
	live := make([]*Process, 0, len(m.live))
	for p := range m.live {
		live = append(live, p)
	}
	var retained []*Process
	for _, p := range m.procs {
		if _, ok := m.live[p]; !ok && !p.starting {
			retained = append(retained, p)
		}
	}
	m.mu.Unlock()

	for _, p := range live {
		p.Terminate()
	}
	// A closed process's leader is reaped, but members of its group that
	// closed their output may still run. Its pid may have been reused since
	// by a new group leader (of another session, even), so the group is not
	// signalled as a whole: only members other than a leader are killed,
	// one by one.
	groups := make(map[int]struct{}, len(retained))
	for _, p := range retained {
		groups[p.pid] = struct{}{}
	}
	killGroupMembers(groups)

	grace := time.NewTimer(m.cfg.KillGrace)
	defer grace.Stop()
	expired := false
	for _, p := range live {
		if expired {
			break
		}
		select {
		case <-p.done:
		case <-grace.C:
			expired = true
		}
	}
	if expired {
		for _, p := range live {
			select {
			case <-p.done:
			default:
				p.forceCloseOutputs()
			}
		}
	}
	for _, p := range live {
		<-p.done
	}
}

// Close kills every process (see KillAll), forgets them all and makes
// Start fail with ErrManagerClosed. It waits for Start calls in progress,
// so nothing it races with survives. It is idempotent.
func (m *Manager) Close() {
	m.closeOnce.Do(func() {
		m.mu.Lock()
		m.closed = true
		m.mu.Unlock()
		m.inflight.Wait()
		m.KillAll()
		m.mu.Lock()
		for _, p := range m.procs {
			if p.ttl != nil {
				p.ttl.Stop()
			}
		}
		clear(m.procs)
		m.mu.Unlock()
	})
}
