package procs

import (
	"context"
	"errors"
	"os"
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
	// CgroupRoot, when set, is a cgroup v2 directory delegated to this
	// process (see CheckCgroupRoot): each manager gets a cgroup in it and
	// each process one in that, and KillAll and Terminate kill them with
	// cgroup.kill, which reaches everything a process started, however it
	// left its group. Nothing is created or written outside it.
	CgroupRoot string
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

	// Leaders that exited and closed but are not reaped yet: each pins its
	// group id while the group may have members (see group_linux.go).
	// They outlive their Process's TTL if need be.
	pins      map[*Process]struct{}
	sweeping  bool          // a sweepPins goroutine runs
	sweepKick chan struct{} // wakes it early: new pins (buffered, 1)
	sweepStop chan struct{} // closed by Close
	sweepDone sync.WaitGroup
	unpinned  chan struct{} // closed and replaced when pins shrink
	reaping   int           // leaders taken out of pins, being reaped
	killing   int           // KillAll calls reading the tree: reap nothing

	inflight  sync.WaitGroup // Start calls past the closed check
	closeOnce sync.Once

	grownPipes atomic.Int32 // pipes of running children grown by growPipe

	cg cgroups // under Config.CgroupRoot; guarded by mu

	// onExpire, if set before use, runs when a TTL releases an id (tests).
	onExpire func(id string)
}

// NewManager returns an empty manager.
func NewManager(cfg Config) *Manager {
	return &Manager{
		cfg:       cfg.withDefaults(),
		procs:     make(map[string]*Process),
		live:      make(map[*Process]struct{}),
		pins:      make(map[*Process]struct{}),
		sweepKick: make(chan struct{}, 1),
		sweepStop: make(chan struct{}),
		unpinned:  make(chan struct{}),
		cg:        cgroups{root: cfg.CgroupRoot},
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
	var cgFile *os.File
	if m.cg.root != "" {
		dir, f, err := m.cg.newProcess()
		if err != nil {
			m.mu.Unlock()
			return nil, newError(ErrSpawn, opts.ID, "cannot create the process's cgroup: "+rustIOMessage(err), err)
		}
		p.cgroup, cgFile = dir, f
		defer cgFile.Close()
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
	sp, err := spawnTracked(&opts, rows, cols, cgFile)
	if err != nil {
		_ = removeCgroup(p.cgroup, 0)
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
	// The process's cgroup goes when it is empty; one that still holds
	// descendants is killed and removed with the manager's.
	_ = removeCgroup(p.cgroup, 0)
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

// KillAll kills every process of the manager and what they started: the
// process group of every leader not yet reaped (running, exited, or
// closed with members left), the members of their sessions in other
// groups, and the descendants that left with setsid while their parents
// are still there to lead to them (group_linux.go). Then it waits until
// each running process has been closed, and reaps every leader. Output
// that a process out of reach still holds open is cut after
// Config.KillGrace. Processes stay readable (as closed) until their TTL.
func (m *Manager) KillAll() {
	m.mu.Lock()
	live := make([]*Process, 0, len(m.live))
	for p := range m.live {
		live = append(live, p)
	}
	var unreaped []*Process
	for _, p := range m.procs {
		if !p.starting {
			unreaped = append(unreaped, p)
		}
	}
	for p := range m.pins {
		if m.procs[p.id] != p {
			unreaped = append(unreaped, p) // past its TTL, still pinned
		}
	}
	cgDir := m.cg.dir
	// While the tree is read and killed, no leader is reaped: a group id
	// taken from a pinned leader must keep naming our group until the end.
	m.killing++
	m.mu.Unlock()

	// cgroup.kill reaches everything, escaped or not, at once; the groups
	// are still killed the usual way, for processes started before, or
	// without, a cgroup.
	_ = killCgroup(cgDir)
	killGroups(unreaped)
	m.mu.Lock()
	m.killing--
	m.mu.Unlock()

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
	// Everything was killed: the leaders need no pinning any more.
	m.mu.Lock()
	pins := make([]*Process, 0, len(m.pins))
	for p := range m.pins {
		pins = append(pins, p)
	}
	clear(m.pins)
	m.reaping += len(pins)
	m.mu.Unlock()
	for _, p := range pins {
		p.reap()
	}
	m.mu.Lock()
	m.reaping -= len(pins)
	if len(pins) > 0 {
		close(m.unpinned)
		m.unpinned = make(chan struct{})
	}
	m.mu.Unlock()
}

// pinned reports how many closed processes' leaders are kept unreaped, and
// a channel closed when that number next shrinks.
func (m *Manager) pinned() (int, <-chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.pins) + m.reaping, m.unpinned
}

// killGroups kills the groups of ps whose leaders are not reaped, with
// what belongs to them out of reach of kill(-G). Everything is stopped
// first, so that nothing forks or escapes while the tree is read.
func killGroups(ps []*Process) {
	ids := map[int]bool{}
	var held []*Process
	for _, p := range ps {
		p.mu.Lock()
		if !p.reaped && p.pid > 0 {
			ids[p.pid] = true
			held = append(held, p)
			_ = p.signalGroup(syscall.SIGSTOP)
		}
		p.mu.Unlock()
	}
	if len(ids) == 0 {
		return
	}
	others := stopTree(ids)
	for _, p := range held {
		p.mu.Lock()
		_ = p.signalGroup(syscall.SIGKILL)
		p.mu.Unlock()
	}
	for _, in := range others {
		signalVerified(in, syscall.SIGKILL)
	}
}

// pin takes a closed process's leader, not yet reaped: it is reaped at once
// when nothing of its group or session runs, or kept (pinned) until then.
// The check reads all of /proc, so it is done for many processes at once,
// by sweepPins.
func (m *Manager) pin(p *Process) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pins[p] = struct{}{}
	select {
	case <-m.sweepStop:
		return // closing: Close's KillAll reaps it
	default:
	}
	select {
	case m.sweepKick <- struct{}{}:
	default:
	}
	if !m.sweeping {
		m.sweeping = true
		m.sweepDone.Add(1)
		go m.sweepPins()
	}
}

// Pacing of sweepPins: pins that arrive together are checked together, at
// most every sweepBatch; a group that still has members is checked again
// after sweepRetry, doubling up to sweepRetryMax.
const (
	sweepBatch    = 50 * time.Millisecond
	sweepRetry    = 100 * time.Millisecond
	sweepRetryMax = 5 * time.Second
)

// sweepPins reaps the pinned leaders whose groups and sessions are empty,
// and returns when none is left or the manager closes.
func (m *Manager) sweepPins() {
	defer m.sweepDone.Done()
	stop := func() {
		m.mu.Lock()
		m.sweeping = false
		m.mu.Unlock()
	}
	retry := sweepRetry
	wait := sweepBatch
	for {
		// Let pins that arrive together gather, then check them all with
		// one reading of /proc.
		if _, stopped := m.sweepWait(wait, false); stopped {
			stop()
			return
		}
		select {
		case <-m.sweepKick:
		default:
		}
		m.mu.Lock()
		ids := make(map[int]bool, len(m.pins))
		for p := range m.pins {
			ids[p.pid] = true
		}
		m.mu.Unlock()
		alive, err := groupMembersAlive(ids)
		var empty []*Process
		m.mu.Lock()
		for p := range m.pins {
			// Marked under m.mu, so that a KillAll that starts now leaves
			// these groups out: their ids may be reused once reaped.
			if err == nil && m.killing == 0 && ids[p.pid] && !alive[p.pid] {
				if p.markReaped() {
					empty = append(empty, p)
				}
				delete(m.pins, p)
			}
		}
		m.reaping += len(empty)
		m.mu.Unlock()
		for _, p := range empty {
			p.finishReap()
		}
		m.mu.Lock()
		m.reaping -= len(empty)
		if len(empty) > 0 {
			close(m.unpinned)
			m.unpinned = make(chan struct{})
		}
		left := len(m.pins)
		if left == 0 {
			// Under the lock: a pin from now on starts a new sweeper.
			m.sweeping = false
		}
		m.mu.Unlock()
		if left == 0 {
			return
		}
		// Groups with members are looked at again later and later; new
		// pins bring the next look forward.
		kicked, stopped := m.sweepWait(retry, true)
		if stopped {
			stop()
			return
		}
		if kicked {
			wait, retry = sweepBatch, sweepRetry
		} else {
			wait, retry = 0, min(2*retry, sweepRetryMax)
		}
	}
}

// sweepWait waits d, or until the manager closes, or, with onKick, until
// new pins arrive.
func (m *Manager) sweepWait(d time.Duration, onKick bool) (kicked, stopped bool) {
	if d <= 0 {
		return false, false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	var kick <-chan struct{}
	if onKick {
		kick = m.sweepKick
	}
	select {
	case <-t.C:
		return false, false
	case <-kick:
		return true, false
	case <-m.sweepStop:
		return false, true
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
		close(m.sweepStop)
		m.sweepDone.Wait()
		m.KillAll() // reaps what was pinned while the sweeper stopped
		m.mu.Lock()
		cgDir := m.cg.dir
		m.mu.Unlock()
		_ = removeCgroup(cgDir, m.cfg.KillGrace+time.Second)
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
