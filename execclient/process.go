package execclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/codexd/codexd/execproto"
	"github.com/codexd/codexd/jsonrpc"
)

// StartOptions describe a process to start.
type StartOptions struct {
	// Argv is the command; Argv[0] is looked up in the PATH of Env.
	Argv []string
	// Cwd is the working directory: an absolute host path (converted to a
	// file:// URI), or a file:// URI as is. "" means the server's own
	// working directory, as reported in environmentInfo.cwd.
	Cwd string
	// Env is the whole environment of the child: the server inherits
	// nothing, not even PATH. nil means an empty environment.
	Env map[string]string
	// TTY runs the child on a pseudo-terminal; its output then arrives on
	// Stdout only, and Stderr is empty.
	TTY bool
	// PipeStdin makes a non-tty child's stdin writable through Write;
	// otherwise it is /dev/null. A tty's stdin is always writable.
	PipeStdin bool
	// Arg0, when set, replaces argv[0] as the child sees it.
	Arg0 string
	// Sandbox, when set, has the server confine the process (see Sandbox);
	// nil runs it as Argv says.
	Sandbox *Sandbox
}

// maxWriteChunk splits large writes into several process/write calls.
const maxWriteChunk = 1 << 20

// Process is a process started through a Client. Its methods are safe for
// concurrent use.
type Process struct {
	c     *Client
	id    string
	limit int

	wmu      sync.Mutex // orders writes
	writeSeq uint64

	mu        sync.Mutex
	cond      *sync.Cond
	stdout    chunkQueue
	stderr    chunkQueue
	buffered  int    // bytes in stdout and stderr
	lastSeq   uint64 // every event up to here was delivered or accounted for
	maxSeen   uint64 // highest seq seen in a notification
	needFetch bool   // a gap is known: process/read must fill it
	fetching  bool   // a fetch loop is running
	exited    bool
	exitCode  int
	exitSeq   uint64 // seq of the exited event, when known
	closed    bool
	lost      uint64 // seqs missing without explanation
	err       error  // why the process failed on the client's side
	done      chan struct{}
	pushed    chan struct{} // closed by the first notification after a resume
}

// Start starts a process. Its output is delivered to Stdout and Stderr from
// the first byte; the call is retried across a resume (a retry that finds
// the process already started counts as success, as ids are unique to this
// client).
func (c *Client) Start(ctx context.Context, o StartOptions) (*Process, error) {
	if len(o.Argv) == 0 {
		return nil, errors.New("execclient: argv must not be empty")
	}
	cwd, err := c.cwdURI(o.Cwd)
	if err != nil {
		return nil, err
	}
	env := o.Env
	if env == nil {
		env = map[string]string{}
	}
	var sb json.RawMessage
	if o.Sandbox != nil {
		if sb, err = o.Sandbox.wire(); err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.nextProc++
	p := &Process{
		c:     c,
		id:    c.idPrefix + strconv.FormatUint(c.nextProc, 10),
		limit: c.opts.MaxBufferedOutput,
		done:  make(chan struct{}),
	}
	p.cond = sync.NewCond(&p.mu)
	// Registered before the request goes out: the server's notifications
	// may be handled before the caller sees the response.
	c.procs[p.id] = p
	c.mu.Unlock()

	params := execproto.ProcessStartParams{
		ProcessID: p.id, Argv: o.Argv, Cwd: cwd, Env: env, Tty: o.TTY, PipeStdin: o.PipeStdin, Sandbox: sb,
	}
	if o.Arg0 != "" {
		arg0 := o.Arg0
		params.Arg0 = &arg0
	}
	attempts := 0
	err = c.call(ctx, true, func(conn *jsonrpc.Conn) error {
		attempts++
		_, err := execproto.ProcessStart.Call(ctx, conn, params)
		var rpcErr *jsonrpc.Error
		if attempts > 1 && errors.As(err, &rpcErr) && strings.HasSuffix(rpcErr.Message, " already exists") {
			return nil // the first attempt got through before the drop
		}
		return err
	})
	if err != nil {
		c.forget(p)
		p.fail(err)
		if errors.Is(err, jsonrpc.ErrCancelled) || errors.Is(err, jsonrpc.ErrTimeout) || errors.Is(err, jsonrpc.ErrClosed) {
			// The start may have happened: do not leave an orphan.
			tctx, cancel := context.WithTimeout(c.ctx, 2*time.Second)
			_, _ = Call(tctx, c, execproto.ProcessTerminate, execproto.ProcessTerminateParams{ProcessID: p.id})
			cancel()
		}
		return nil, fmt.Errorf("execclient: process/start: %w", err)
	}
	return p, nil
}

func (c *Client) cwdURI(cwd string) (string, error) {
	switch {
	case cwd == "":
		if c.env.Cwd != "" {
			return c.env.Cwd, nil
		}
		return "file:///", nil
	case strings.HasPrefix(strings.ToLower(cwd), "file:"):
		return cwd, nil
	case !filepath.IsAbs(cwd):
		return "", fmt.Errorf("execclient: cwd %q is not an absolute path", cwd)
	}
	return execproto.PathURI(filepath.Clean(cwd)), nil
}

// ID returns the client-chosen process id.
func (p *Process) ID() string { return p.id }

// Done is closed once Wait would return.
func (p *Process) Done() <-chan struct{} { return p.done }

// Stdout returns the reader of the process's stdout (or of its pty). It
// returns io.EOF after process/closed once everything was read, or the
// client's error (ErrClientClosed, ErrSessionLost) if the process's end was
// never learned.
func (p *Process) Stdout() io.Reader { return &reader{p: p, q: &p.stdout} }

// Stderr returns the reader of the process's stderr; see Stdout.
func (p *Process) Stderr() io.Reader { return &reader{p: p, q: &p.stderr} }

// Wait waits for process/closed, which comes after the exit and after all
// output, and returns the exit code (128+N after death by signal N). With
// ErrOutputLost the code is valid but some output was lost. It needs the
// readers to be drained (see the package doc).
func (p *Process) Wait(ctx context.Context) (int, error) {
	select {
	case <-p.done:
	case <-ctx.Done():
		return -1, ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		return -1, p.err
	}
	if p.lost > 0 {
		return p.exitCode, fmt.Errorf("%w (%d chunks)", ErrOutputLost, p.lost)
	}
	return p.exitCode, nil
}

// Write sends data to the process's stdin. Writes are ordered; each has a
// unique writeId, so a write retried after a resume is not written twice.
// There is no way to close a remote stdin in the protocol.
func (p *Process) Write(ctx context.Context, data []byte) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	for first := true; first || len(data) > 0; first = false {
		n := min(len(data), maxWriteChunk)
		chunk := data[:n]
		data = data[n:]
		p.writeSeq++
		params := execproto.ProcessWriteParams{ProcessID: p.id, Chunk: chunk, WriteID: "w" + strconv.FormatUint(p.writeSeq, 10)}
		var res execproto.ProcessWriteResponse
		err := p.c.call(ctx, true, func(conn *jsonrpc.Conn) error {
			var err error
			res, err = execproto.ProcessWrite.Call(ctx, conn, params)
			return err
		})
		if err != nil {
			return fmt.Errorf("execclient: process/write: %w", err)
		}
		switch res.Status {
		case execproto.WriteAccepted:
		case execproto.WriteStdinClosed:
			return ErrStdinClosed
		case execproto.WriteUnknownProcess:
			return ErrUnknownProcess
		default:
			return fmt.Errorf("execclient: process/write: status %q", res.Status)
		}
	}
	return nil
}

// Signal sends an interrupt (SIGINT to the process group). It is not
// retried if the connection drops while the request is in flight, so that
// an interrupt is never delivered twice.
func (p *Process) Signal(ctx context.Context) error {
	_, err := Call(ctx, p.c, execproto.ProcessSignalM, execproto.ProcessSignalParams{
		ProcessID: p.id, Signal: execproto.SignalInterrupt,
	})
	return err
}

// Terminate kills the process group with SIGKILL and reports whether the
// process was still running.
func (p *Process) Terminate(ctx context.Context) (bool, error) {
	var res execproto.ProcessTerminateResponse
	err := p.c.call(ctx, true, func(conn *jsonrpc.Conn) error {
		var err error
		res, err = execproto.ProcessTerminate.CallWith(ctx, conn,
			execproto.ProcessTerminateParams{ProcessID: p.id}, jsonrpc.CallOptions{Cleanup: true})
		return err
	})
	return res.Running, err
}

func (p *Process) onOutput(n execproto.ProcessOutputNotification) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sawPush()
	if p.closed || p.err != nil || n.Seq <= p.lastSeq {
		return // a duplicate, already delivered
	}
	p.maxSeen = max(p.maxSeen, n.Seq)
	if n.Seq == p.lastSeq+1 && (p.buffered == 0 || p.buffered+len(n.Chunk) <= p.limit) {
		p.deliver(n.Stream, n.Chunk)
		p.lastSeq = n.Seq
		return
	}
	// A gap (a notification lost across a resume) or a full buffer: the
	// output is refetched from the server's ring.
	p.needFetch = true
	p.kick()
}

func (p *Process) onExited(n execproto.ProcessExitedNotification) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sawPush()
	if p.closed || p.err != nil {
		return
	}
	p.exited, p.exitCode, p.exitSeq = true, int(n.ExitCode), n.Seq
	if n.Seq <= p.lastSeq {
		return
	}
	p.maxSeen = max(p.maxSeen, n.Seq)
	if n.Seq == p.lastSeq+1 {
		p.lastSeq = n.Seq
		return
	}
	p.needFetch = true
	p.kick()
}

func (p *Process) onClosed(n execproto.ProcessClosedNotification) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sawPush()
	if p.closed || p.err != nil || n.Seq <= p.lastSeq {
		return
	}
	p.maxSeen = max(p.maxSeen, n.Seq)
	if n.Seq == p.lastSeq+1 && p.exited {
		p.lastSeq = n.Seq
		p.markClosed()
		return
	}
	p.needFetch = true
	p.kick()
}

// sawPush records that the server pushes this process's events. Called
// with p.mu held.
func (p *Process) sawPush() {
	if p.pushed != nil {
		close(p.pushed)
		p.pushed = nil
	}
}

// resumeRereads are the delays, after a resume, of the process/read calls
// made until the resumed connection pushes an event of the process. See
// catchUp.
var resumeRereads = []time.Duration{50 * time.Millisecond, 250 * time.Millisecond, time.Second, 3 * time.Second}

// catchUp refetches whatever a dropped connection may have lost: the
// notification that was in flight, and everything that happened while
// detached (a resumed server pushes only events after the resume). A
// server that starts its resumed pump after it answered initialize leaves
// a window in which an event is neither pushed nor seen by the first read;
// if the process then ends, nothing would ever be pushed again. So until
// the new connection pushes an event of this process, which proves its
// pump runs, process/read is repeated at the resumeRereads delays.
func (p *Process) catchUp() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.err != nil {
		return
	}
	p.needFetch = true
	p.kick()
	pushed := make(chan struct{})
	p.pushed = pushed
	p.c.goroutine(func() {
		for _, d := range resumeRereads {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-pushed:
			case <-p.done:
			case <-p.c.ctx.Done():
			}
			t.Stop()
			p.mu.Lock()
			if p.pushed != pushed || p.closed || p.err != nil {
				p.mu.Unlock()
				return
			}
			p.needFetch = true
			p.kick()
			p.mu.Unlock()
		}
	})
}

// kick starts the fetch loop if there is something to fetch and room for
// it. Called with p.mu held.
func (p *Process) kick() {
	if p.fetching || !p.needFetch || p.closed || p.err != nil || p.buffered > p.limit/2 {
		return
	}
	p.fetching = p.c.goroutine(p.fetchLoop)
}

// fetchLoop fills gaps with process/read (afterSeq = the last seq
// delivered) until a read returns no chunk, so that every event up to the
// server's next seq is accounted for.
func (p *Process) fetchLoop() {
	for {
		p.mu.Lock()
		if p.closed || p.err != nil || !p.needFetch || (p.buffered > 0 && p.buffered >= p.limit) {
			p.fetching = false
			p.mu.Unlock()
			return
		}
		p.needFetch = false
		after := p.lastSeq
		budget := uint64(max(p.limit-p.buffered, 1))
		p.mu.Unlock()

		res, err := p.c.ReadProcess(p.c.ctx, execproto.ProcessReadParams{
			ProcessID: p.id, AfterSeq: &after, MaxBytes: &budget,
		})
		if err != nil {
			var rpcErr *jsonrpc.Error
			if errors.As(err, &rpcErr) {
				// The server no longer knows the process: nothing more can
				// be learned of it.
				p.fail(fmt.Errorf("%w: process/read: %v", ErrUnknownProcess, err))
			}
			// Otherwise the client has ended, and failed the process.
			p.mu.Lock()
			p.fetching = false
			p.mu.Unlock()
			return
		}
		p.mu.Lock()
		p.applyRead(res)
		p.mu.Unlock()
	}
}

// applyRead delivers the chunks of a process/read answer that are new.
// Called with p.mu held.
func (p *Process) applyRead(res execproto.ProcessReadResponse) {
	if p.closed || p.err != nil {
		return
	}
	if res.Exited && res.ExitCode != nil && !p.exited {
		p.exited, p.exitCode = true, int(*res.ExitCode)
	}
	for _, ch := range res.Chunks {
		if ch.Seq <= p.lastSeq {
			continue
		}
		p.accountGap(p.lastSeq, ch.Seq, 0)
		p.deliver(ch.Stream, ch.Chunk)
		p.lastSeq = ch.Seq
	}
	if len(res.Chunks) > 0 {
		p.needFetch = true // read on until an answer without chunks
		return
	}
	// Without chunks, nextSeq is the process's next unused seq: every event
	// before it is now accounted for.
	if res.NextSeq > p.lastSeq+1 {
		closedSeq := uint64(0)
		if res.Closed {
			closedSeq = res.NextSeq - 1
		}
		p.accountGap(p.lastSeq, res.NextSeq, closedSeq)
		p.lastSeq = res.NextSeq - 1
	}
	if res.Closed {
		p.markClosed()
		return
	}
	if p.maxSeen > p.lastSeq {
		p.needFetch = true
	}
}

// accountGap counts the seqs strictly between lo and hi that are neither
// the exited event nor closedSeq: output the server evicted before the
// client fetched it.
func (p *Process) accountGap(lo, hi, closedSeq uint64) {
	if hi <= lo+1 {
		return
	}
	missing := hi - lo - 1
	if closedSeq > lo && closedSeq < hi {
		missing--
	}
	switch {
	case p.exitSeq > lo && p.exitSeq < hi:
		missing--
	case p.exitSeq == 0 && p.exited && missing > 0:
		// The exit event's seq was never notified; it is the likeliest
		// reason for one missing seq.
		p.exitSeq = hi - 1
		missing--
	}
	p.lost += missing
}

// deliver queues output for the readers. Called with p.mu held.
func (p *Process) deliver(stream execproto.OutputStream, data []byte) {
	if len(data) == 0 {
		return
	}
	if stream == execproto.StreamStderr {
		p.stderr.push(data)
	} else {
		p.stdout.push(data)
	}
	p.buffered += len(data)
	p.cond.Broadcast()
}

// markClosed ends the process. Called with p.mu held.
func (p *Process) markClosed() {
	p.closed = true
	p.cond.Broadcast()
	close(p.done)
	p.c.forget(p)
}

// fail ends the process with err unless it has already ended.
func (p *Process) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.err != nil {
		return
	}
	p.err = err
	p.cond.Broadcast()
	close(p.done)
	p.c.forget(p)
}

type reader struct {
	p *Process
	q *chunkQueue
}

func (r *reader) Read(b []byte) (int, error) {
	p := r.p
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if r.q.len() > 0 {
			if len(b) == 0 {
				return 0, nil
			}
			n := r.q.read(b)
			p.buffered -= n
			p.kick()
			return n, nil
		}
		if p.closed {
			return 0, io.EOF
		}
		if p.err != nil {
			return 0, p.err
		}
		p.cond.Wait()
	}
}

// chunkQueue is a FIFO of byte slices.
type chunkQueue struct {
	chunks [][]byte
	off    int // read offset into chunks[0]
	n      int // unread bytes
}

func (q *chunkQueue) len() int { return q.n }

func (q *chunkQueue) push(b []byte) {
	q.chunks = append(q.chunks, b)
	q.n += len(b)
}

func (q *chunkQueue) read(b []byte) int {
	total := 0
	for total < len(b) && len(q.chunks) > 0 {
		c := q.chunks[0][q.off:]
		n := copy(b[total:], c)
		total += n
		q.off += n
		if q.off == len(q.chunks[0]) {
			q.chunks[0] = nil
			q.chunks = q.chunks[1:]
			q.off = 0
		}
	}
	q.n -= total
	return total
}
