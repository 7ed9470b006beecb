package procs

import (
	"context"
	"errors"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Stream names the stream a chunk of output came from. A process started
// with a tty has the single stream "pty".
type Stream string

const (
	StreamStdout Stream = "stdout"
	StreamStderr Stream = "stderr"
	StreamPty    Stream = "pty"
)

// WriteStatus is the outcome of a write, spelled as on the wire.
type WriteStatus string

const (
	WriteAccepted       WriteStatus = "accepted"
	WriteUnknownProcess WriteStatus = "unknownProcess"
	WriteStdinClosed    WriteStatus = "stdinClosed"
	WriteStarting       WriteStatus = "starting"
)

// StartOptions describe a process to start.
type StartOptions struct {
	// ID is the client-chosen process id, unique in the manager while the
	// process is running or retained. Any string, including "", is valid.
	ID string
	// Argv is the command; Argv[0] is found in the PATH of Env (or musl's
	// default PATH when Env has none), never in the server's own PATH.
	Argv []string
	// Cwd is the child's working directory as a host path; "" keeps the
	// server's.
	Cwd string
	// CwdDir, when set, is Cwd already opened: the child changes into this
	// very directory, whatever Cwd names by the time it starts (the server
	// opens it through its roots). The caller closes it after Start.
	CwdDir *os.File
	// Env is the child's whole environment; nil means an empty one.
	Env map[string]string
	// Arg0, when non-empty, is what the child sees as argv[0].
	Arg0 string
	// TTY runs the child on a pseudo-terminal of Config.Rows × Config.Cols,
	// or of Rows × Cols when they are set.
	TTY        bool
	Rows, Cols uint16
	// PipeStdin gives a non-tty child a stdin pipe fed by Write; otherwise
	// its stdin is /dev/null.
	PipeStdin bool
	// Held starts the process with its output held (see Process.Hold) from
	// its first byte, for a consumer that will take it and Release it: no
	// chunk can be evicted before that consumer gets to run.
	Held bool
}

// Chunk is one piece of output. Data must not be modified.
type Chunk struct {
	Seq    uint64
	Stream Stream
	Data   []byte
	// owner is the read buffer Data is a slice of, when the process reuses
	// that buffer once every chunk of it has left the ring; nil when Data
	// is a buffer of its own.
	owner *readBuf
}

// Process is one child started by a Manager. Its methods are safe for
// concurrent use.
type Process struct {
	id        string
	m         *Manager
	tty       bool
	stdinOpen bool

	// Set before the goroutines start and never changed after.
	sp  *spawned
	pid int

	// Guarded by m.mu.
	starting  bool
	cancelled bool
	ttl       *time.Timer

	mu             sync.Mutex
	ring           ring
	spare          []*readBuf // read buffers back from the ring, for reuse
	visitScratch   []Event    // VisitEvents' slice, reused
	evictedThrough uint64     // highest seq the ring dropped
	nextSeq        uint64
	exited         bool
	exitCode       int
	exitSeq        uint64
	closed         bool
	closedSeq      uint64
	openStreams    int
	reaped         bool          // once set, pid may be reused: never signal it
	terminated     bool          // Terminate found it running: writes fail from then on
	cgroup         string        // its cgroup's directory (Config.CgroupRoot), or ""
	changed        chan struct{} // closed and replaced on every new event

	// A consumer (the server's notification pump) holds the output while a
	// client is attached: chunks it has not acknowledged are not evicted,
	// and the reader waits for room instead, so the child blocks on its
	// pipe as it would with a slow terminal. Without a holder the ring
	// evicts, and a detached process keeps running.
	drained      []bool // per output stream: found empty after the exit
	ended        []bool // per output stream: reached its end
	held         bool
	ackedThrough uint64
	stopping     bool          // KillAll/close: never wait for room again
	space        chan struct{} // closed and replaced when room may have appeared
	spaceWaiters int

	streamsDone chan struct{} // all output streams reached EOF
	done        chan struct{} // closed, and every goroutine but the waiter gone

	wmu        sync.Mutex // orders writes and makes write-id dedupe atomic
	writeIDs   idSet
	stdinQ     chan []byte // nil without a stdin (stdinOpen false): never used then
	stopWriter chan struct{}
	writerDone chan struct{}
}

func newProcess(m *Manager, opts *StartOptions) *Process {
	p := &Process{
		id:          opts.ID,
		m:           m,
		tty:         opts.TTY,
		stdinOpen:   opts.TTY || opts.PipeStdin,
		held:        opts.Held,
		nextSeq:     1,
		changed:     make(chan struct{}),
		space:       make(chan struct{}),
		streamsDone: make(chan struct{}),
		done:        make(chan struct{}),
		writeIDs:    idSet{max: m.cfg.WriteIDs},
		stopWriter:  make(chan struct{}),
		writerDone:  make(chan struct{}),
	}
	// Only a process with a stdin gets a queue: 3 KiB that a closed
	// process would otherwise keep for the closed-process TTL, and most
	// commands (exec_command without a tty) have none.
	if p.stdinOpen {
		p.stdinQ = make(chan []byte, m.cfg.StdinQueue)
	}
	return p
}

// ID returns the client-chosen id.
func (p *Process) ID() string { return p.id }

// Pid returns the OS pid of the child, which is also its process group and
// session id.
func (p *Process) Pid() int { return p.pid }

// TTY reports whether the child runs on a pseudo-terminal.
func (p *Process) TTY() bool { return p.tty }

// Done is closed once the process is closed: it exited, all its output was
// read and its descriptors were released. Its leader is reaped then too,
// unless something of its group or session still runs: the manager then
// keeps the zombie, so that the group can still be killed safely, and
// reaps it once the group is empty.
func (p *Process) Done() <-chan struct{} { return p.done }

// NextSeq returns the next seq the process will assign.
func (p *Process) NextSeq() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.nextSeq
}

// ExitCode returns the exit code and whether the process has exited.
func (p *Process) ExitCode() (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exitCode, p.exited
}

func (p *Process) start(sp *spawned) {
	p.sp = sp
	p.pid = sp.proc.Pid
	p.openStreams = len(sp.outputs)
	p.drained = make([]bool, len(sp.outputs))
	p.ended = make([]bool, len(sp.outputs))
	for i, o := range sp.outputs {
		go p.readLoop(i, o)
	}
	if p.stdinOpen {
		go p.writeLoop()
	} else {
		close(p.writerDone)
	}
	go p.waitLoop()
}

// broadcast wakes every waiter. Called with p.mu held.
func (p *Process) broadcast() {
	close(p.changed)
	p.changed = make(chan struct{})
}

func (p *Process) waitLoop() {
	code, _ := waitExit(p.pid)
	if waitReaps {
		p.mu.Lock()
		p.reaped = true
		p.mu.Unlock()
	}
	if !p.drainByDeadline() {
		p.drainBeforeExit()
	}
	p.mu.Lock()
	p.exited = true
	p.exitCode = code
	p.exitSeq = p.nextSeq
	p.nextSeq++
	p.broadcast()
	p.mu.Unlock()

	// The leader is not reaped here: while descendants still hold the
	// output open, and after, while anything of its group or session
	// lives, the zombie pins the group id, so that KillAll can still
	// signal the group safely. The manager reaps it once the group is
	// empty (see group_linux.go).
	<-p.streamsDone
	p.m.pin(p)

	p.mu.Lock()
	p.closed = true
	p.closedSeq = p.nextSeq
	p.nextSeq++
	p.broadcast()
	p.mu.Unlock()

	close(p.stopWriter)
	for _, f := range p.sp.closers {
		f.Close()
	}
	<-p.writerDone
	p.m.processClosed(p)
	close(p.done)
}

func (p *Process) writeLoop() {
	defer close(p.writerDone)
	for {
		select {
		case <-p.stopWriter:
			return
		case b := <-p.stdinQ:
			if b == nil {
				// CloseStdin: the writes queued before it are written.
				if p.tty {
					_, _ = p.sp.stdin.Write([]byte{4}) // a terminal's end of input: ^D
					continue
				}
				_ = p.sp.stdin.Close()
				return
			}
			if _, err := p.sp.stdin.Write(b); err != nil {
				// The reader is gone (EPIPE, EIO) or we closed the file:
				// later writes fail with ErrStdinWrite, as in Codex.
				return
			}
		}
	}
}

// forceCloseOutputs ends output streams that a descendant outside the
// process group still holds open.
func (p *Process) forceCloseOutputs() {
	p.mu.Lock()
	p.stopping = true
	p.wakeSpaceLocked()
	p.mu.Unlock()
	for _, o := range p.sp.outputs {
		o.f.Close()
	}
}

// signalGroup sends sig to the process group while its leader is not
// reaped. Called with p.mu held.
func (p *Process) signalGroup(sig syscall.Signal) error {
	if p.reaped {
		return nil
	}
	err := unix.Kill(-p.pid, sig)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	return err
}

// Terminate kills the process group with SIGKILL and reports whether the
// process was still running. As in Codex, a process that already exited
// reports false; its group is still killed if it is not yet closed, so
// that no descendant outlives a terminate.
func (p *Process) Terminate() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	running := !p.exited
	if running {
		p.terminated = true
	}
	if !p.closed {
		_ = killCgroup(p.cgroup)
		p.signalGroup(unix.SIGKILL)
	}
	return running
}

// reap reaps the leader. Nothing signals its group after this.
func (p *Process) reap() {
	if p.markReaped() {
		p.finishReap()
	}
}

// markReaped is the first half of reap: from now on nothing signals the
// group. It reports whether the caller is the one to finish the reap.
func (p *Process) markReaped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return false
	}
	p.reaped = true
	return true
}

// finishReap reaps the leader marked by markReaped.
func (p *Process) finishReap() {
	guardRelease(p.pid) // before the group id can name anyone else
	p.sp.proc.Wait()
	untrack(p.pid)
}

// Signal sends sig to the process group. As in Codex, it does nothing once
// the process has exited.
func (p *Process) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited {
		return nil
	}
	if err := p.signalGroup(sig); err != nil {
		return newError(ErrSignal, p.id, "failed to signal process: "+rustIOMessage(err), err)
	}
	return nil
}

// Write queues data for the child's stdin and returns WriteAccepted once it
// is queued: the child is never written to synchronously. A writeID that
// was already accepted for this process is acknowledged again without
// writing (the client retries after a reconnect). Write blocks while the
// queue is full, until ctx is done. It takes ownership of data.
func (p *Process) Write(ctx context.Context, writeID string, data []byte) (WriteStatus, error) {
	if writeID == "" {
		return "", newError(ErrEmptyWriteID, p.id, ErrEmptyWriteID.Error(), nil)
	}
	if !p.stdinOpen {
		return WriteStdinClosed, nil
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if p.writeIDs.contains(writeID) {
		return WriteAccepted, nil
	}
	p.mu.Lock()
	terminated := p.terminated
	p.mu.Unlock()
	if terminated {
		return "", errStdinTerminated(p.id)
	}
	select {
	case <-p.writerDone:
		return "", errStdinWrite(p.id)
	default:
	}
	if data == nil {
		data = []byte{} // nil in the queue means CloseStdin
	}
	select {
	case p.stdinQ <- data:
		p.writeIDs.add(writeID)
		return WriteAccepted, nil
	case <-p.writerDone:
		return "", errStdinWrite(p.id)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// CloseStdin ends the child's input once the writes queued before it have
// been written: a pipe is closed (later writes fail with ErrStdinWrite),
// a terminal gets its end-of-input character. A process without stdin, or
// whose stdin is gone already, is left as it is.
func (p *Process) CloseStdin(ctx context.Context) error {
	if !p.stdinOpen {
		return nil
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	select {
	case p.stdinQ <- nil:
		return nil
	case <-p.writerDone:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ErrNotTTY: Resize of a process that has no terminal.
var ErrNotTTY = errors.New("process has no terminal")

// Resize changes the size of the process's terminal.
func (p *Process) Resize(rows, cols uint16) error {
	if !p.tty || p.sp == nil {
		return ErrNotTTY
	}
	select {
	case <-p.done:
		return ErrNotTTY
	default:
	}
	// Through the raw descriptor: Fd() would switch the master to
	// blocking mode under the poller that reads it.
	rc, err := p.sp.stdin.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols})
	}); err != nil {
		return err
	}
	return serr
}

// idSet remembers the most recent accepted write ids of a process, up to
// max, so that memory stays bounded however many writes a process gets.
type idSet struct {
	max   int
	ids   map[string]struct{}
	order []string
}

func (s *idSet) contains(id string) bool {
	_, ok := s.ids[id]
	return ok
}

func (s *idSet) add(id string) {
	if s.ids == nil {
		s.ids = make(map[string]struct{})
	}
	s.ids[id] = struct{}{}
	s.order = append(s.order, id)
	if len(s.order) > s.max {
		delete(s.ids, s.order[0])
		s.order[0] = ""
		s.order = s.order[1:]
	}
}
