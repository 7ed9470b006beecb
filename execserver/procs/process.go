package procs

import (
	"context"
	"errors"
	"os"
	"runtime"
	"slices"
	"sort"
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

// readBuf is a buffer the output of a process is read into. A large read
// hands it to the ring, which keeps its chunks as slices of it; once the
// last of them is evicted, the buffer goes back to the process for the
// next read. That is why chunk data never leaves the process's lock
// without being copied (Read, Events) and is otherwise only seen inside
// VisitEvents: a streaming child then costs no allocation per read, and
// the collector has nothing to do.
type readBuf struct {
	b    []byte
	refs int // chunks in the ring, plus one while the reader fills it
}

// maxKeptEvents is the largest event slice VisitEvents keeps between calls.
const maxKeptEvents = 1024

// spareBufs is how many read buffers a process keeps for reuse.
const spareBufs = 4

// EventKind tells what an Event reports.
type EventKind uint8

const (
	// EventOutput carries a chunk of output (process/output).
	EventOutput EventKind = iota + 1
	// EventExited reports the exit code (process/exited).
	EventExited
	// EventClosed is the last event: the process exited and every output
	// stream reached EOF (process/closed).
	EventClosed
)

func (k EventKind) String() string {
	switch k {
	case EventOutput:
		return "output"
	case EventExited:
		return "exited"
	case EventClosed:
		return "closed"
	}
	return "unknown"
}

// Event is one numbered event of a process. Seqs start at 1 and have no
// gaps across kinds; EventClosed has the highest seq of the process.
type Event struct {
	Seq  uint64
	Kind EventKind
	// Stream and Data are set for EventOutput; Data must not be modified.
	Stream Stream
	Data   []byte
	// ExitCode is set for EventExited: the exit status, or 128+N after
	// death by signal N.
	ExitCode int
}

// EventBatch is the answer of Process.Events.
type EventBatch struct {
	// Events are in seq order and contiguous, except for evicted output.
	Events []Event
	// Evicted counts output chunks after the requested seq that the ring
	// dropped before they could be returned; their seqs are missing from
	// Events. Exited and closed events are never evicted.
	Evicted uint64
}

// NoByteLimit, as ReadOptions.MaxBytes, means that maxBytes was absent.
const NoByteLimit = -1

// ReadOptions are the arguments of process/read.
type ReadOptions struct {
	// AfterSeq selects chunks with a greater seq.
	AfterSeq uint64
	// MaxBytes caps the bytes of the chunks returned, but at least one chunk
	// is returned; NoByteLimit (any negative value) means absent, which also
	// changes NextSeq (see ReadResult).
	MaxBytes int
	// Wait long-polls: Read returns as soon as there is a chunk after
	// AfterSeq, the process is closed, or it has exited with an event after
	// AfterSeq; otherwise when Wait has elapsed.
	Wait time.Duration
}

// ReadResult is the answer of process/read.
type ReadResult struct {
	// Chunks is never nil, so that it encodes as [].
	Chunks []Chunk
	// NextSeq is the seq after the last chunk returned when MaxBytes was
	// given and a chunk was returned; otherwise the process's next unused
	// seq, which counts exited and closed events too. This is Codex's rule.
	NextSeq  uint64
	Exited   bool
	ExitCode int
	Closed   bool
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

// readSize is how much one read of the output of a fast child asks for at
// least: several chunks, and as much as a pipe holds (64 KiB on Linux), so
// that it costs one system call per pipeful rather than per chunk. Its
// reads fill buffers of twice that, one after the other; a child starts
// with a buffer of smallReadBuf.
const (
	readSize     = 64 << 10
	smallReadBuf = 16 << 10
)

func (p *Process) readLoop(idx int, o output) {
	chunk := p.m.cfg.ChunkSize
	big := 2 * max(readSize, chunk)
	// Reads fill a buffer one after the other, each chunk a slice of it,
	// until less than half of it is left; the ring gives the buffer back
	// for reuse when its last chunk is evicted. The first buffer is small,
	// so that a quiet child costs little; once a read fills all the room
	// it was given, the child writes fast and later buffers are big (two
	// pipefuls).
	size := max(smallReadBuf, chunk)
	buf, off := p.takeBuf(size), 0
	recheck, grown, triedGrow := false, false, false
	for {
		if len(buf.b)-off < len(buf.b)/2 {
			p.mu.Lock()
			p.unref(buf)
			p.mu.Unlock()
			buf, off = p.takeBuf(size), 0
		}
		n, err := o.f.Read(buf.b[off:])
		if n > 0 && n == len(buf.b)-off {
			size = big
		}
		if n > 0 {
			p.appendOutput(o.stream, buf.b[off:off+n:off+n], buf, chunk)
			off += n
		}
		if n >= pipeSize && !triedGrow {
			// The read took a whole pipeful: the child writes faster than
			// it is read, and each of them keeps waking the other. A larger
			// pipe lets both run longer between wake-ups. Quiet children
			// keep the default, and a manager grows only a few pipes at a
			// time: each takes 256 pages of the user's pipe quota (16,384
			// by default), past which Linux gives new pipes 2 pages.
			triedGrow = true
			grown = p.m.growPipe(o.f)
		}
		if recheck && err == nil {
			// Look again, now that what was there has been taken.
			recheck = false
			_ = o.f.SetReadDeadline(time.Now())
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// The exit waiter set a deadline to learn when everything the
			// child wrote before it exited has been read. A read past its
			// deadline reports it without looking at the pipe, so look:
			// if bytes wait, clear the deadline, take them, and set it
			// again.
			_ = o.f.SetReadDeadline(time.Time{})
			if unreadBytes(o.f) > 0 {
				recheck = true
				continue
			}
			// Drained: every byte written before the exit is appended.
			// Reading goes on for descendants that still write.
			p.mu.Lock()
			p.drained[idx] = true
			p.broadcast()
			p.mu.Unlock()
			continue
		}
		// EOF, EIO from a pty whose last slave closed, or a close by
		// KillAll: all end the stream.
		if err != nil {
			break
		}
	}
	if grown {
		p.m.grownPipes.Add(-1) // the pipe closes with the process
	}
	p.mu.Lock()
	p.unref(buf)
	p.compact(o.stream)
	p.ended[idx] = true
	p.openStreams--
	if p.openStreams == 0 {
		p.spare = nil // nothing is read any more
		close(p.streamsDone)
	}
	p.broadcast() // the exit waiter may be counting drained streams
	p.mu.Unlock()
}

// appendOutput numbers what one read returned, in chunks of at most
// chunk bytes, and wakes waiters once for all of them (or before it has to
// wait for room, so that the holder sees what it is waited on to take).
//
// data is a slice of owner's buffer when owner is not nil; the ring then
// gives the buffer back for reuse once its last chunk is evicted.
func (p *Process) appendOutput(stream Stream, data []byte, owner *readBuf, chunk int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fresh := false
	for len(data) > 0 {
		k := min(len(data), chunk)
		piece := data[:k:k]
		data = data[k:]
		over := func() bool {
			return p.ring.len() > 0 && (p.ring.bytes+len(piece) > p.m.cfg.RingBytes || p.ring.len()+1 > p.m.cfg.RingChunks)
		}
		for p.held && !p.stopping && over() {
			// Evict what the holder has taken; wait for it to take more.
			if p.ring.at(0).Seq <= p.ackedThrough {
				p.evict()
				continue
			}
			if fresh {
				p.broadcast()
				fresh = false
			}
			ch := p.space
			p.spaceWaiters++
			p.mu.Unlock()
			<-ch
			p.mu.Lock()
			p.spaceWaiters--
		}
		seq := p.nextSeq
		p.nextSeq++
		if owner != nil {
			owner.refs++
		}
		p.ring.push(Chunk{Seq: seq, Stream: stream, Data: piece, owner: owner})
		for p.ring.bytes > p.m.cfg.RingBytes || p.ring.len() > p.m.cfg.RingChunks {
			p.evict()
		}
		fresh = true
	}
	if fresh {
		p.broadcast()
	}
}

// evict drops the oldest chunk of the ring. Called with p.mu held.
func (p *Process) evict() {
	c := p.ring.pop()
	p.evictedThrough = c.Seq
	if c.owner != nil {
		p.unref(c.owner)
	}
}

// unref drops one reference to a read buffer, and keeps the buffer for
// reuse when it was the last. Called with p.mu held.
func (p *Process) unref(b *readBuf) {
	b.refs--
	if b.refs != 0 {
		return
	}
	if p.openStreams > 0 && len(p.spare) < spareBufs {
		p.spare = append(p.spare, b)
	}
}

// takeBuf returns a read buffer of size bytes, a spare or a new one, with
// one reference: the reader's.
func (p *Process) takeBuf(size int) *readBuf {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.spare); n > 0 {
		b := p.spare[n-1]
		p.spare[n-1] = nil
		p.spare = p.spare[:n-1]
		if cap(b.b) >= size {
			b.b, b.refs = b.b[:size], 1
			return b
		}
	}
	return &readBuf{b: make([]byte, size), refs: 1}
}

// compact runs when the output of stream has ended. The chunks of it that
// are still in the ring, and are slices of a read buffer they use less
// than half of, move into one buffer of their exact size, and the read
// buffers go: a process whose output has ended keeps about its output,
// not the buffers it arrived in. Called with p.mu held.
func (p *Process) compact(stream Stream) {
	used := map[*readBuf]int{}
	for _, c := range p.ring.chunks {
		if c.owner != nil && c.Stream == stream {
			used[c.owner] += len(c.Data)
		}
	}
	total := 0
	for b, n := range used {
		if 2*n >= cap(b.b) {
			delete(used, b) // well used: kept as it is
		} else {
			total += n
		}
	}
	if total == 0 {
		return
	}
	data := make([]byte, 0, total)
	for i := range p.ring.chunks {
		c := &p.ring.chunks[i]
		if c.owner == nil || c.Stream != stream {
			continue
		}
		if _, sparse := used[c.owner]; sparse {
			k := len(data)
			data = append(data, c.Data...)
			p.unref(c.owner)
			c.Data, c.owner = data[k:len(data):len(data)], nil
		}
	}
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

// Hold makes the caller the consumer of the output after seq: until
// Release, chunks after the acknowledged seq are never evicted, and the
// child is slowed down to the consumer's pace instead.
func (p *Process) Hold(afterSeq uint64) {
	p.mu.Lock()
	p.held = true
	p.ackedThrough = afterSeq
	p.wakeSpaceLocked()
	p.mu.Unlock()
}

// Ack records that the holder has taken every event through seq.
func (p *Process) Ack(seq uint64) {
	p.mu.Lock()
	if seq > p.ackedThrough {
		p.ackedThrough = seq
		p.wakeSpaceLocked()
	}
	p.mu.Unlock()
}

// Release ends the hold: the ring evicts again, and the child runs freely.
func (p *Process) Release() {
	p.mu.Lock()
	p.held = false
	p.wakeSpaceLocked()
	p.mu.Unlock()
}

func (p *Process) wakeSpaceLocked() {
	if p.spaceWaiters > 0 {
		close(p.space)
		p.space = make(chan struct{})
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

// Read answers process/read: see ReadOptions. It returns ctx's error if ctx
// ends before the answer is ready.
func (p *Process) Read(ctx context.Context, o ReadOptions) (ReadResult, error) {
	var deadline <-chan time.Time
	if o.Wait > 0 {
		t := time.NewTimer(o.Wait)
		defer t.Stop()
		deadline = t.C
	}
	expired := o.Wait <= 0
	for {
		p.mu.Lock()
		res := p.readLocked(o.AfterSeq, o.MaxBytes)
		changed := p.changed
		p.mu.Unlock()
		// Codex's rule: an exit counts as news only if some seq after
		// AfterSeq precedes NextSeq.
		newTerminal := res.Exited && o.AfterSeq < res.NextSeq-1
		if len(res.Chunks) > 0 || res.Closed || newTerminal || expired {
			return res, nil
		}
		select {
		case <-changed:
		case <-deadline:
			expired = true
		case <-ctx.Done():
			return ReadResult{}, ctx.Err()
		}
	}
}

func (p *Process) readLocked(afterSeq uint64, maxBytes int) ReadResult {
	res := ReadResult{
		Chunks:   []Chunk{},
		NextSeq:  p.nextSeq,
		Exited:   p.exited,
		ExitCode: p.exitCode,
		Closed:   p.closed,
	}
	total := 0
	for i := p.ring.after(afterSeq); i < p.ring.len(); i++ {
		c := p.ring.at(i)
		if maxBytes >= 0 && len(res.Chunks) > 0 && total+len(c.Data) > maxBytes {
			break
		}
		total += len(c.Data)
		res.Chunks = append(res.Chunks, c)
		if maxBytes >= 0 {
			res.NextSeq = c.Seq + 1
			if total >= maxBytes {
				break
			}
		}
	}
	// The caller uses the data after the lock is released, by when the
	// ring may have reused its buffers: it gets copies, in one buffer.
	data := make([]byte, 0, total)
	for i := range res.Chunks {
		c := &res.Chunks[i]
		n := len(data)
		data = append(data, c.Data...)
		c.Data, c.owner = data[n:len(data):len(data)], nil
	}
	return res
}

// Events returns the events after afterSeq, in seq order, for a consumer
// that pushes them on: output chunks up to maxBytes of data (at least one
// event if any; maxBytes < 0 means no limit), the exit and the close. It
// never blocks; use Wait to sleep until there is more. The data is copied;
// VisitEvents saves the copy.
func (p *Process) Events(afterSeq uint64, maxBytes int) EventBatch {
	var out EventBatch
	p.VisitEvents(afterSeq, maxBytes, func(b EventBatch) {
		out = EventBatch{Events: slices.Clone(b.Events), Evicted: b.Evicted}
		total := 0
		for _, ev := range b.Events {
			total += len(ev.Data)
		}
		data := make([]byte, 0, total)
		for i := range out.Events {
			ev := &out.Events[i]
			n := len(data)
			data = append(data, ev.Data...)
			ev.Data = data[n:len(data):len(data)]
		}
	})
	return out
}

// VisitEvents calls fn with what Events would return, but with the
// process locked and without copying the data: fn must not keep the data
// beyond its return (the process reuses its buffers), nor call the
// process's methods. The output pump encodes the events there, straight
// from the ring.
func (p *Process) VisitEvents(afterSeq uint64, maxBytes int, fn func(EventBatch)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b EventBatch
	if afterSeq < p.evictedThrough {
		b.Evicted = p.evictedThrough - afterSeq
		if p.exited && p.exitSeq > afterSeq && p.exitSeq <= p.evictedThrough {
			b.Evicted--
		}
	}
	exitPending := p.exited && p.exitSeq > afterSeq
	total := 0
	b.Events = p.visitScratch[:0]
	defer func() {
		clear(b.Events)
		// Keep the slice for the next call, unless a ring of many tiny
		// chunks made it large: it would stay for the process's life.
		p.visitScratch = nil
		if cap(b.Events) <= maxKeptEvents {
			p.visitScratch = b.Events[:0]
		}
	}()
	for i := p.ring.after(afterSeq); i < p.ring.len(); i++ {
		c := p.ring.at(i)
		if exitPending && p.exitSeq < c.Seq {
			b.Events = append(b.Events, Event{Seq: p.exitSeq, Kind: EventExited, ExitCode: p.exitCode})
			exitPending = false
		}
		if maxBytes >= 0 && len(b.Events) > 0 && total+len(c.Data) > maxBytes {
			fn(b)
			return
		}
		total += len(c.Data)
		b.Events = append(b.Events, Event{Seq: c.Seq, Kind: EventOutput, Stream: c.Stream, Data: c.Data})
	}
	if exitPending {
		b.Events = append(b.Events, Event{Seq: p.exitSeq, Kind: EventExited, ExitCode: p.exitCode})
	}
	if p.closed && p.closedSeq > afterSeq {
		b.Events = append(b.Events, Event{Seq: p.closedSeq, Kind: EventClosed})
	}
	fn(b)
}

// Wait blocks until the process has an event with a seq greater than
// afterSeq (even one since evicted), or ctx is done.
func (p *Process) Wait(ctx context.Context, afterSeq uint64) error {
	for {
		p.mu.Lock()
		ready := p.nextSeq-1 > afterSeq
		changed := p.changed
		p.mu.Unlock()
		if ready {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ring is the retained output of a process: a queue of chunks in seq order.
type ring struct {
	chunks []Chunk
	bytes  int
}

func (r *ring) len() int       { return len(r.chunks) }
func (r *ring) at(i int) Chunk { return r.chunks[i] }
func (r *ring) push(c Chunk)   { r.chunks = append(r.chunks, c); r.bytes += len(c.Data) }
func (r *ring) after(seq uint64) int {
	return sort.Search(len(r.chunks), func(i int) bool { return r.chunks[i].Seq > seq })
}

func (r *ring) pop() Chunk {
	c := r.chunks[0]
	// Clear the slot so that the backing array does not pin evicted data
	// until append next reallocates it.
	r.chunks[0] = Chunk{}
	r.chunks = r.chunks[1:]
	r.bytes -= len(c.Data)
	return c
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

// drainByDeadline lets the output the child wrote before it exited get its
// seq before the exit does, as Codex reports it (output, then exited). It
// sets a read deadline in the past on every output stream: a read returns
// what the pipe holds before it reports the deadline, so once every open
// stream has reported it, all that was written before the exit has been
// appended. It reports false when a stream does not support deadlines.
func (p *Process) drainByDeadline() bool {
	p.mu.Lock()
	for i := range p.drained {
		p.drained[i] = false
	}
	p.mu.Unlock()
	for _, o := range p.sp.outputs {
		if err := o.f.SetReadDeadline(time.Now()); err != nil {
			return false
		}
	}
	// A descendant that keeps the pipe full cannot hold the exit back for
	// long.
	limit := time.NewTimer(time.Second)
	defer limit.Stop()
	for {
		p.mu.Lock()
		done := true
		for i := range p.drained {
			done = done && (p.drained[i] || p.ended[i])
		}
		ch := p.changed
		p.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-ch:
		case <-limit.C:
			return true
		}
	}
}

// drainBeforeExit is the fallback of drainByDeadline: it waits, briefly,
// until no output stream has unread bytes.
//
// drainBeforeExit lets the output the child wrote before it exited get its
// seq before the exit does, as Codex reports it (output, then exited): it
// waits, briefly, until no output stream has unread bytes. A descendant that
// keeps writing cannot hold the exit back for more than the bound.
func (p *Process) drainBeforeExit() {
	deadline := time.NewTimer(100 * time.Millisecond)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		ch := p.changed
		pending := false
		if p.openStreams > 0 {
			for _, o := range p.sp.outputs {
				if unreadBytes(o.f) > 0 {
					pending = true
				}
			}
		}
		p.mu.Unlock()
		if !pending {
			// The last bytes may have been read but not yet appended: let
			// the readers run before deciding.
			for i := 0; i < 4; i++ {
				runtime.Gosched()
			}
			p.mu.Lock()
			again := ch != p.changed
			p.mu.Unlock()
			if !again {
				return
			}
			continue
		}
		select {
		case <-ch:
		case <-deadline.C:
			return
		}
	}
}

// unreadBytes reports how many bytes wait in a pipe or pty to be read.
// pipeSize is the default capacity of a pipe on Linux, and grownPipeSize
// what growPipe asks for: the most an unprivileged process may
// (/proc/sys/fs/pipe-max-size).
const (
	pipeSize      = 64 << 10
	grownPipeSize = 1 << 20
)

// maxGrownPipes is how many pipes a manager keeps grown at once: 8 × 256
// pages is an eighth of the default per-user quota.
const maxGrownPipes = 8

// growPipe grows the pipe f reads from if the manager has fewer than
// maxGrownPipes grown, and reports whether it did; the caller gives the
// place back (grownPipes.Add(-1)) when the pipe is done with.
func (m *Manager) growPipe(f *os.File) bool {
	if m.grownPipes.Add(1) <= maxGrownPipes && growPipe(f) {
		return true
	}
	m.grownPipes.Add(-1)
	return false
}
