package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/codexd/codexd/core/tools"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/execenv"
)

// execSessions are a thread's unified-exec processes: commands started by
// exec_command that the model can continue with write_stdin while they run.
type execSessions struct {
	dial   func(ctx context.Context) (*execclient.Client, error)
	shellP string
	env    func() map[string]string

	mu    sync.Mutex
	procs map[int]*execProc
}

func newExecSessions(dial func(ctx context.Context) (*execclient.Client, error), shell string, env func() map[string]string) *execSessions {
	return &execSessions{dial: dial, shellP: shell, env: env, procs: map[int]*execProc{}}
}

func (e *execSessions) shell() string { return e.shellP }

// execProc is one process and what it printed.
type execProc struct {
	id      int
	itemID  string
	tty     bool
	command string
	argv    []string
	cwd     string
	start   time.Time
	proc    *execclient.Process
	env     string // the environment it runs on, "" for the default

	mu        sync.Mutex
	pending   []byte // printed since the last collect (head and tail kept)
	dropped   int    // bytes cut from the middle of pending
	unemitted []chunk
	unBytes   int // bytes in unemitted
	lastUsed  time.Time
	total     []byte // everything, capped at maxAggregated
	notify    chan struct{}
	sink      func(stream string, data []byte)
	readers   int
	exited    bool
	exitCode  int
	waitErr   error
	exitCh    chan struct{}
}

type chunk struct {
	stream string
	data   []byte
}

const maxAggregated = 1 << 20

// unifiedExecEnv is what Codex sets for every command, after the policy:
// no colours, no pagers, a UTF-8 locale.
var unifiedExecEnv = [][2]string{
	{"NO_COLOR", "1"}, {"TERM", "dumb"}, {"LANG", "C.UTF-8"}, {"LC_CTYPE", "C.UTF-8"},
	{"LC_ALL", "C.UTF-8"}, {"COLORTERM", ""}, {"PAGER", "cat"}, {"GIT_PAGER", "cat"},
	{"GH_PAGER", "cat"}, {"CODEX_CI", "1"},
}

// threadIDEnvVar tells a command which thread ran it, as Codex does.
const threadIDEnvVar = "CODEX_THREAD_ID"

// commandEnv is the environment of a command of thread id: this process's
// through the shell environment policy, the providers' credentials always
// removed, then CODEX_THREAD_ID and unifiedExecEnv. An empty id sets no
// CODEX_THREAD_ID.
func (c *Core) commandEnv(id string) map[string]string {
	env := execenv.Build(os.Environ(), c.cfg.ShellEnvironment, c.cfg.SecretEnvVars)
	if id != "" {
		env[threadIDEnvVar] = id
	}
	for _, kv := range unifiedExecEnv {
		env[kv[0]] = kv[1]
	}
	return env
}

// allocate reserves a fresh session id (Codex's are random in
// [1000, 100000)).
func (e *execSessions) allocate() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	for {
		id := 1000 + rand.IntN(99000)
		if _, used := e.procs[id]; !used {
			e.procs[id] = nil
			return id
		}
	}
}

func (e *execSessions) release(id int) {
	e.mu.Lock()
	delete(e.procs, id)
	e.mu.Unlock()
}

func (e *execSessions) get(id int) *execProc {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.procs[id]
}

// prune terminates the least recently used process when the thread has
// MaxProcessesPerThread of them, as Codex prunes its unified-exec
// processes.
func (e *execSessions) prune() {
	e.mu.Lock()
	var oldest *execProc
	var oldestUsed time.Time
	n := 0
	for _, p := range e.procs {
		if p == nil {
			continue
		}
		n++
		p.mu.Lock()
		used := p.lastUsed
		p.mu.Unlock()
		if oldest == nil || used.Before(oldestUsed) {
			oldest, oldestUsed = p, used
		}
	}
	if n < tools.MaxProcessesPerThread || oldest == nil {
		e.mu.Unlock()
		return
	}
	delete(e.procs, oldest.id)
	e.mu.Unlock()
	oldest.terminate()
}

// start starts argv under session id; confine, when set, has the
// exec-server sandbox it.
func (e *execSessions) start(ctx context.Context, id int, itemID string, argv []string, displayArgv []string, cwd string, tty bool, command string, confine *execclient.Sandbox) (*execProc, error) {
	e.prune()
	p, err := e.spawn(ctx, id, itemID, argv, displayArgv, cwd, tty, command, e.env(), confine)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.procs[id] = p
	e.mu.Unlock()
	return p, nil
}

// spawn starts argv through the exec-server and reads its output, without
// making it one of the thread's sessions.
func (e *execSessions) spawn(ctx context.Context, id int, itemID string, argv []string, displayArgv []string, cwd string, tty bool, command string, env map[string]string, confine *execclient.Sandbox) (*execProc, error) {
	c, err := e.dial(ctx)
	if err != nil {
		return nil, err
	}
	proc, err := c.Start(ctx, execclient.StartOptions{Argv: argv, Cwd: cwd, Env: env, TTY: tty, Sandbox: confine})
	if err != nil {
		if envID := turnEnvironmentID(ctx); envID != "" {
			// Say which machine refused, as a lost running command does.
			return nil, fmt.Errorf("environment `%s`: %w", envID, err)
		}
		return nil, err
	}
	p := &execProc{
		id: id, itemID: itemID, tty: tty, command: command, argv: displayArgv, cwd: cwd, env: turnEnvironmentID(ctx),
		start: time.Now(), lastUsed: time.Now(), proc: proc, notify: make(chan struct{}), exitCh: make(chan struct{}),
	}
	p.readers = 2
	stdout := "stdout"
	if tty {
		stdout = "pty"
	}
	go p.read(proc.Stdout(), stdout)
	go p.read(proc.Stderr(), "stderr")
	go p.wait()
	return p, nil
}

func (p *execProc) read(r io.Reader, stream string) {
	buf := make([]byte, 8192)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			data := append([]byte(nil), buf[:n]...)
			p.mu.Lock()
			p.appendPending(data)
			if room := maxAggregated - len(p.total); room > 0 {
				p.total = append(p.total, data[:min(room, len(data))]...)
			}
			sink := p.sink
			if sink == nil {
				// Nobody waits: keep the latest output for the next call's
				// deltas, within a bound.
				p.unemitted = append(p.unemitted, chunk{stream, data})
				p.unBytes += len(data)
				for p.unBytes > maxAggregated && len(p.unemitted) > 1 {
					p.unBytes -= len(p.unemitted[0].data)
					p.unemitted = p.unemitted[1:]
				}
			}
			p.wakeLocked()
			p.mu.Unlock()
			if sink != nil {
				sink(stream, data)
			}
		}
		if err != nil {
			p.mu.Lock()
			p.readers--
			p.wakeLocked()
			p.mu.Unlock()
			return
		}
	}
}

// appendPending adds output for the next collect, keeping at most
// maxAggregated bytes: the first half and the latest half, as Codex's
// head-and-tail buffer does (mu held).
func (p *execProc) appendPending(data []byte) {
	p.pending = append(p.pending, data...)
	if len(p.pending) <= maxAggregated {
		return
	}
	half := maxAggregated / 2
	cut := len(p.pending) - maxAggregated
	p.dropped += cut
	p.pending = append(p.pending[:half], p.pending[half+cut:]...)
}

// takePending returns the output since the last collect (mu held).
func (p *execProc) takePending() []byte {
	out := p.pending
	if p.dropped > 0 {
		half := maxAggregated / 2
		marker := []byte("\n…" + strconv.Itoa(p.dropped) + " bytes dropped…\n")
		out = append(append(append([]byte(nil), out[:half]...), marker...), out[half:]...)
	}
	p.pending, p.dropped = nil, 0
	p.lastUsed = time.Now()
	return out
}

func (p *execProc) wait() {
	code, err := p.proc.Wait(context.Background())
	p.mu.Lock()
	p.exited, p.exitCode, p.waitErr = true, code, err
	if errors.Is(err, execclient.ErrClientClosed) || errors.Is(err, execclient.ErrSessionLost) {
		p.exitCode = -1
		if p.env != "" {
			// The machine is gone, not the command's fault: say which.
			msg := []byte(lostEnvironmentText(p.env, err))
			p.appendPending(msg)
			p.total = append(p.total, msg...)
		}
	}
	p.wakeLocked()
	p.mu.Unlock()
	close(p.exitCh)
}

func (p *execProc) wakeLocked() {
	close(p.notify)
	p.notify = make(chan struct{})
}

// attach makes output stream to sink (a tool call is waiting on the
// process); output printed while nobody waited is handed to sink first.
func (p *execProc) attach(sink func(stream string, data []byte)) {
	p.mu.Lock()
	backlog := p.unemitted
	p.unemitted, p.unBytes = nil, 0
	p.sink = sink
	p.mu.Unlock()
	for _, c := range backlog {
		sink(c.stream, c.data)
	}
}

func (p *execProc) detach() {
	p.mu.Lock()
	p.sink = nil
	p.mu.Unlock()
}

// collect waits until the process has exited and its output was read, the
// deadline passes, or ctx ends, and returns what it printed meanwhile.
func (p *execProc) collect(ctx context.Context, deadline time.Time) (out []byte, exited bool, code int) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		p.mu.Lock()
		if p.exited && p.readers == 0 {
			out = p.takePending()
			code := p.exitCode
			p.mu.Unlock()
			return out, true, code
		}
		ch := p.notify
		p.mu.Unlock()
		select {
		case <-ch:
			continue
		case <-timer.C:
		case <-ctx.Done():
		}
		p.mu.Lock()
		out = p.takePending()
		p.mu.Unlock()
		return out, false, 0
	}
}

// aggregated is everything the process printed (capped).
func (p *execProc) aggregated() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.ToValidUTF8(string(p.total), "\uFFFD")
}

// terminate kills the process group and waits (briefly) for its end.
func (p *execProc) terminate() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = p.proc.Terminate(ctx)
	select {
	case <-p.exitCh:
	case <-ctx.Done():
	}
}

// closeAll terminates every process of the thread.
func (e *execSessions) closeAll() {
	e.mu.Lock()
	procs := make([]*execProc, 0, len(e.procs))
	for _, p := range e.procs {
		if p != nil {
			procs = append(procs, p)
		}
	}
	e.procs = map[int]*execProc{}
	e.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() { defer wg.Done(); p.terminate() }()
	}
	wg.Wait()
}
