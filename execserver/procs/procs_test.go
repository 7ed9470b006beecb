//go:build linux

package procs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) {
	RunGuardIfRequested()
	if dir := os.Getenv(guardServerEnv); dir != "" {
		os.Exit(guardServer(dir))
	}
	if os.Getenv(subreaperHelperEnv) != "" {
		// A child of TestSubreaper: subreaper mode is for the whole
		// process, so it runs apart from the other tests.
		os.Exit(subreaperHelper())
	}
	goleak.VerifyTestMain(m)
}

// testPath is the PATH given to children that need one.
var testPath = map[string]string{"PATH": "/usr/bin:/bin"}

func newManager(t *testing.T, cfg Config) *Manager {
	t.Helper()
	m := NewManager(cfg)
	t.Cleanup(m.Close)
	return m
}

func start(t *testing.T, m *Manager, opts StartOptions) *Process {
	t.Helper()
	if opts.Env == nil {
		opts.Env = testPath
	}
	p, err := m.Start(opts)
	if err != nil {
		t.Fatalf("start %q: %v", opts.Argv, err)
	}
	return p
}

func deadline(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// pump consumes every event of p the way the server's notification pump
// does, until the closed event, and checks the seq rules on the way.
func pump(t *testing.T, p *Process) []Event {
	t.Helper()
	ctx := deadline(t, 10*time.Second)
	var all []Event
	var last uint64
	for {
		b := p.Events(last, 3000)
		if b.Evicted != 0 {
			t.Fatalf("unexpected eviction of %d chunks", b.Evicted)
		}
		for _, ev := range b.Events {
			if ev.Seq != last+1 {
				t.Fatalf("seq %d after %d: gap", ev.Seq, last)
			}
			last = ev.Seq
			all = append(all, ev)
			if ev.Kind == EventClosed {
				if more := p.Events(last, -1); len(more.Events) != 0 {
					t.Fatalf("events after closed: %+v", more.Events)
				}
				return all
			}
		}
		if err := p.Wait(ctx, last); err != nil {
			t.Fatalf("waiting for events after seq %d: %v", last, err)
		}
	}
}

type outcome struct {
	out      map[Stream]string
	exitCode int
	exits    int
}

func summarize(t *testing.T, evs []Event) outcome {
	t.Helper()
	o := outcome{out: map[Stream]string{}, exitCode: -1}
	for i, ev := range evs {
		switch ev.Kind {
		case EventOutput:
			if len(ev.Data) > DefaultChunkSize {
				t.Errorf("chunk of %d bytes", len(ev.Data))
			}
			o.out[ev.Stream] += string(ev.Data)
		case EventExited:
			o.exits++
			o.exitCode = ev.ExitCode
		case EventClosed:
			if i != len(evs)-1 {
				t.Errorf("closed is not last")
			}
		}
	}
	if o.exits != 1 {
		t.Errorf("%d exited events, want 1", o.exits)
	}
	return o
}

func run(t *testing.T, m *Manager, opts StartOptions) outcome {
	t.Helper()
	return summarize(t, pump(t, start(t, m, opts)))
}

func TestPipes(t *testing.T) {
	m := newManager(t, Config{})
	o := run(t, m, StartOptions{ID: "p", Argv: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}})
	if o.out[StreamStdout] != "out\n" || o.out[StreamStderr] != "err\n" || o.exitCode != 3 {
		t.Fatalf("got %+v", o)
	}
}

func TestPipesStdinIsDevNullAndOwnSession(t *testing.T) {
	m := newManager(t, Config{})
	p := start(t, m, StartOptions{ID: "s", Argv: []string{"sh", "-c", "cat; readlink /proc/self/fd/0; cat /proc/$$/stat"}})
	o := summarize(t, pump(t, p))
	lines := strings.Split(o.out[StreamStdout], "\n")
	if lines[0] != "/dev/null" {
		t.Errorf("stdin is %q", lines[0])
	}
	checkOwnSession(t, lines[1], p.Pid())
}

// checkOwnSession checks a /proc/<pid>/stat line: the child leads its own
// process group and session.
func checkOwnSession(t *testing.T, stat string, pid int) {
	t.Helper()
	f := strings.Fields(stat[strings.LastIndex(stat, ")")+1:])
	want := strconv.Itoa(pid)
	if len(f) < 4 || f[2] != want || f[3] != want {
		t.Errorf("pgrp/session of %d: %q", pid, stat)
	}
}

func TestTTY(t *testing.T) {
	m := newManager(t, Config{})
	p := start(t, m, StartOptions{ID: "t", TTY: true, Argv: []string{"sh", "-c", "stty size; read x; echo got:$x; cat /proc/$$/stat"}})
	ctx := deadline(t, 10*time.Second)
	// Wait for stty's answer before writing, so the line is read by read.
	r, err := p.Read(ctx, ReadOptions{MaxBytes: NoByteLimit, Wait: 10 * time.Second})
	if err != nil || len(r.Chunks) == 0 {
		t.Fatalf("read: %+v %v", r, err)
	}
	if st, err := p.Write(ctx, "w1", []byte("hi\n")); st != WriteAccepted || err != nil {
		t.Fatalf("write: %v %v", st, err)
	}
	o := summarize(t, pump(t, p))
	out := o.out[StreamPty]
	if len(o.out) != 1 || !strings.HasPrefix(out, "24 80\r\n") || !strings.Contains(out, "got:hi\r\n") || o.exitCode != 0 {
		t.Fatalf("got %+v", o)
	}
	checkOwnSession(t, out[strings.LastIndex(out, "got:hi\r\n")+len("got:hi\r\n"):], p.Pid())
}

func TestExitBySignal(t *testing.T) {
	m := newManager(t, Config{})
	for _, c := range []struct {
		sig  string
		code int
	}{{"TERM", 143}, {"KILL", 137}, {"INT", 130}} {
		o := run(t, m, StartOptions{ID: c.sig, Argv: []string{"sh", "-c", "kill -" + c.sig + " $$"}})
		if o.exitCode != c.code {
			t.Errorf("SIG%s: exit code %d, want %d", c.sig, o.exitCode, c.code)
		}
	}
	o := run(t, m, StartOptions{ID: "tty", TTY: true, Argv: []string{"sh", "-c", "kill -KILL $$"}})
	if o.exitCode != 137 {
		t.Errorf("tty SIGKILL: exit code %d", o.exitCode)
	}
}

func TestEnvReplacesEnvironment(t *testing.T) {
	t.Setenv("PROCS_TEST_LEAK", "1")
	m := newManager(t, Config{})
	o := run(t, m, StartOptions{ID: "e", Argv: []string{"/usr/bin/env"}, Env: map[string]string{"B": "2", "A": "1"}})
	if o.out[StreamStdout] != "A=1\nB=2\n" {
		t.Fatalf("env: %q", o.out[StreamStdout])
	}
	o = run(t, m, StartOptions{ID: "tty", TTY: true, Argv: []string{"env"}, Env: map[string]string{"PATH": "/usr/bin:/bin", "X": "y"}})
	if o.out[StreamPty] != "PATH=/usr/bin:/bin\r\nX=y\r\n" {
		t.Fatalf("tty env: %q", o.out[StreamPty])
	}
	// An empty environment still finds programs in musl's default PATH.
	p, err := m.Start(StartOptions{ID: "empty", Argv: []string{"env"}, Env: map[string]string{}})
	if err != nil {
		t.Fatal(err)
	}
	if o := summarize(t, pump(t, p)); o.out[StreamStdout] != "" {
		t.Fatalf("empty env: %q", o.out[StreamStdout])
	}
	// The child's PATH is searched, not the server's.
	_, err = m.Start(StartOptions{ID: "nopath", Argv: []string{"true"}, Env: map[string]string{"PATH": "/nonexistent"}})
	if !errors.Is(err, ErrSpawn) || err.Error() != "No such file or directory (os error 2)" {
		t.Fatalf("start with bad PATH: %v", err)
	}
}

func TestArg0AndCwd(t *testing.T) {
	m := newManager(t, Config{})
	o := run(t, m, StartOptions{ID: "a", Argv: []string{"/bin/sh", "-c", `echo "$0"`}, Arg0: "myname"})
	if o.out[StreamStdout] != "myname\n" {
		t.Fatalf("arg0: %q", o.out[StreamStdout])
	}

	dir := t.TempDir()
	script := filepath.Join(dir, "prog")
	if err := os.WriteFile(script, []byte("#!/bin/sh\npwd\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	want, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A relative program with a slash is resolved against cwd.
	for _, tty := range []bool{false, true} {
		o = run(t, m, StartOptions{ID: fmt.Sprint("cwd", tty), Argv: []string{"./prog"}, Cwd: dir, TTY: tty})
		got := strings.TrimSpace(o.out[StreamStdout] + o.out[StreamPty])
		if got != want {
			t.Fatalf("tty=%v: pwd %q, want %q", tty, got, want)
		}
	}
	_, err = m.Start(StartOptions{ID: "gone", Argv: []string{"true"}, Cwd: filepath.Join(dir, "missing"), Env: testPath})
	if !errors.Is(err, ErrSpawn) || err.Error() != "No such file or directory (os error 2)" {
		t.Fatalf("missing cwd: %v", err)
	}
}

func TestStartErrors(t *testing.T) {
	m := newManager(t, Config{})
	p := start(t, m, StartOptions{ID: "a", Argv: []string{"sleep", "100"}})

	_, err := m.Start(StartOptions{ID: "a", Argv: []string{"true"}})
	var e *Error
	if !errors.Is(err, ErrDuplicateProcess) || !errors.As(err, &e) || e.Error() != "process a already exists" || e.ProcessID != "a" {
		t.Fatalf("duplicate: %v", err)
	}
	// Codex checks argv before the id.
	if _, err := m.Start(StartOptions{ID: "a"}); !errors.Is(err, ErrEmptyArgv) || err.Error() != "argv must not be empty" {
		t.Fatalf("empty argv: %v", err)
	}
	for _, c := range []struct {
		opts StartOptions
		msg  string
	}{
		{StartOptions{Argv: []string{"/nonexistent/prog"}}, "No such file or directory (os error 2)"},
		{StartOptions{Argv: []string{"no-such-program-xyz"}, Env: testPath}, "No such file or directory (os error 2)"},
		{StartOptions{Argv: []string{"/tmp"}}, "Permission denied (os error 13)"},
		{StartOptions{Argv: []string{"sh"}, TTY: true}, "Unable to spawn sh because:\nUnable to resolve the PATH"},
		{StartOptions{Argv: []string{"no-such-program-xyz"}, TTY: true, Env: testPath}, "Unable to spawn no-such-program-xyz because:\nNo viable candidates found in PATH \"/usr/bin:/bin\""},
	} {
		c.opts.ID = "b"
		_, err := m.Start(c.opts)
		if !errors.Is(err, ErrSpawn) || err.Error() != c.msg {
			t.Errorf("start %q: %v, want %q", c.opts.Argv, err, c.msg)
		}
	}
	// A failed start releases its id.
	start(t, m, StartOptions{ID: "b", Argv: []string{"true"}})

	if _, err := m.Read(context.Background(), "nope", ReadOptions{}); !errors.Is(err, ErrUnknownProcess) || err.Error() != "unknown process id nope" {
		t.Fatalf("read unknown: %v", err)
	}
	if st, err := m.Write(context.Background(), "nope", "w", nil); st != WriteUnknownProcess || err != nil {
		t.Fatalf("write unknown: %v %v", st, err)
	}
	if _, err := m.Write(context.Background(), "nope", "", nil); !errors.Is(err, ErrEmptyWriteID) || err.Error() != "writeId must not be empty" {
		t.Fatalf("empty write id: %v", err)
	}
	if m.Terminate("nope") {
		t.Fatal("terminate unknown reported running")
	}
	if err := m.Signal("nope", syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if !m.Terminate("a") {
		t.Fatal("terminate of a running process reported not running")
	}
	<-p.Done()
	if m.Terminate("a") {
		t.Fatal("terminate of an exited process reported running")
	}
	if err := m.Signal("a", syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	m.Close()
	if _, err := m.Start(StartOptions{ID: "c", Argv: []string{"true"}}); !errors.Is(err, ErrManagerClosed) {
		t.Fatalf("start after close: %v", err)
	}
}

func TestWriteDedupeAndStdinClosed(t *testing.T) {
	m := newManager(t, Config{})
	ctx := deadline(t, 10*time.Second)
	p := start(t, m, StartOptions{ID: "w", PipeStdin: true, Argv: []string{"sh", "-c", "while read l; do echo got:$l; done"}})
	for _, w := range []struct{ id, data string }{{"w1", "a"}, {"w1", "b"}, {"w2", "c"}, {"w1", "a"}, {"w3", "end"}} {
		st, err := m.Write(ctx, "w", w.id, []byte(w.data+"\n"))
		if st != WriteAccepted || err != nil {
			t.Fatalf("write %v: %v %v", w, st, err)
		}
	}
	var out string
	var after uint64
	for !strings.Contains(out, "got:end\n") {
		r, err := p.Read(ctx, ReadOptions{AfterSeq: after, MaxBytes: NoByteLimit, Wait: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range r.Chunks {
			out += string(c.Data)
		}
		// As Codex clients do: continue after everything seen, exit
		// included, or an exited process would answer at once forever.
		after = r.NextSeq - 1
	}
	if out != "got:a\ngot:c\ngot:end\n" {
		t.Fatalf("stdin saw %q", out)
	}
	p.Terminate()
	<-p.Done()
	// Terminated while running: the write fails (TestWriteAfterTerminateFails).
	if _, err := m.Write(ctx, "w", "w4", []byte("x")); !errors.Is(err, ErrStdinTerminated) || err.Error() != "failed to write to process stdin" {
		t.Fatalf("write after close: %v", err)
	}
	// A write id already accepted is still acknowledged.
	if st, err := m.Write(ctx, "w", "w2", []byte("x")); st != WriteAccepted || err != nil {
		t.Fatalf("repeated write after close: %v %v", st, err)
	}

	q := start(t, m, StartOptions{ID: "n", Argv: []string{"true"}})
	if st, err := m.Write(ctx, "n", "w", []byte("x")); st != WriteStdinClosed || err != nil {
		t.Fatalf("write without stdin: %v %v", st, err)
	}
	<-q.Done()
	if st, err := m.Write(ctx, "n", "w", []byte("x")); st != WriteStdinClosed || err != nil {
		t.Fatalf("write without stdin after close: %v %v", st, err)
	}
}

func TestWriteBlocksOnFullQueueUntilContextEnds(t *testing.T) {
	m := newManager(t, Config{StdinQueue: 1})
	p := start(t, m, StartOptions{ID: "w", PipeStdin: true, Argv: []string{"sleep", "100"}})
	big := make([]byte, 1<<20) // more than a pipe holds: the writer blocks
	ctx := deadline(t, 10*time.Second)
	for i := range 2 {
		if st, err := p.Write(ctx, fmt.Sprint(i), big); st != WriteAccepted || err != nil {
			t.Fatalf("write %d: %v %v", i, st, err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := p.Write(short, "x", big); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("write to a full queue: %v", err)
	}
	// The writer, blocked in write(2), must not keep the process open.
	p.Terminate()
	<-p.Done()
}

func TestReadRules(t *testing.T) {
	m := newManager(t, Config{})
	ctx := deadline(t, 10*time.Second)
	p := start(t, m, StartOptions{ID: "r", Argv: []string{"head", "-c", "100000", "/dev/zero"}})
	evs := pump(t, p)
	closedSeq := evs[len(evs)-1].Seq
	var chunks []Event
	for _, ev := range evs {
		if ev.Kind == EventOutput {
			chunks = append(chunks, ev)
		}
	}
	lastChunk := chunks[len(chunks)-1].Seq

	all, err := p.Read(ctx, ReadOptions{MaxBytes: NoByteLimit})
	if err != nil || len(all.Chunks) != len(chunks) || all.NextSeq != closedSeq+1 || !all.Exited || !all.Closed || all.ExitCode != 0 {
		t.Fatalf("read all: %d chunks, next %d, %+v", len(all.Chunks), all.NextSeq, err)
	}
	for _, max := range []int{0, 1} {
		r, _ := p.Read(ctx, ReadOptions{MaxBytes: max})
		if len(r.Chunks) != 1 || r.Chunks[0].Seq != chunks[0].Seq || r.NextSeq != chunks[0].Seq+1 {
			t.Fatalf("maxBytes %d: %+v", max, r)
		}
	}
	// With maxBytes, NextSeq stops after the last chunk returned, before
	// the exit and close.
	r, _ := p.Read(ctx, ReadOptions{MaxBytes: 1 << 30})
	if len(r.Chunks) != len(chunks) || r.NextSeq != lastChunk+1 {
		t.Fatalf("maxBytes large: %d chunks, next %d, last chunk %d", len(r.Chunks), r.NextSeq, lastChunk)
	}
	// The budget stops before the chunk that would exceed it.
	budget := len(chunks[0].Data) + len(chunks[1].Data)
	r, _ = p.Read(ctx, ReadOptions{MaxBytes: budget + len(chunks[2].Data) - 1})
	if len(r.Chunks) != 2 || r.NextSeq != chunks[1].Seq+1 {
		t.Fatalf("maxBytes %d: %d chunks", budget, len(r.Chunks))
	}
	r, _ = p.Read(ctx, ReadOptions{AfterSeq: closedSeq + 5, MaxBytes: 10})
	if len(r.Chunks) != 0 || r.Chunks == nil || r.NextSeq != closedSeq+1 {
		t.Fatalf("after the end: %+v", r)
	}
}

func TestReadLongPoll(t *testing.T) {
	m := newManager(t, Config{})
	ctx := deadline(t, 20*time.Second)
	p := start(t, m, StartOptions{ID: "lp", PipeStdin: true, Argv: []string{"sh", "-c", "read x; echo got:$x; read y"}})

	// Nothing happens: the poll times out.
	t0 := time.Now()
	r, err := p.Read(ctx, ReadOptions{MaxBytes: NoByteLimit, Wait: 150 * time.Millisecond})
	if err != nil || len(r.Chunks) != 0 || r.Exited || r.NextSeq != 1 {
		t.Fatalf("idle read: %+v %v", r, err)
	}
	if d := time.Since(t0); d < 150*time.Millisecond {
		t.Fatalf("idle read returned after %v", d)
	}

	// Output arriving wakes a long poll early.
	type result struct {
		r   ReadResult
		err error
		d   time.Duration
	}
	done := make(chan result, 1)
	go func() {
		t0 := time.Now()
		r, err := p.Read(ctx, ReadOptions{MaxBytes: NoByteLimit, Wait: time.Minute})
		done <- result{r, err, time.Since(t0)}
	}()
	if _, err := p.Write(ctx, "1", []byte("hi\n")); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil || len(res.r.Chunks) != 1 || string(res.r.Chunks[0].Data) != "got:hi\n" || res.d > 10*time.Second {
		t.Fatalf("woken read: %+v", res)
	}
	seq := res.r.Chunks[0].Seq

	// A context ends a long poll.
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		r, err := p.Read(cctx, ReadOptions{AfterSeq: seq, Wait: time.Minute})
		done <- result{r, err, 0}
	}()
	cancel()
	if res := <-done; !errors.Is(res.err, context.Canceled) {
		t.Fatalf("cancelled read: %+v", res)
	}

	// An exit wakes a long poll too.
	go func() {
		r, err := p.Read(ctx, ReadOptions{AfterSeq: seq, MaxBytes: NoByteLimit, Wait: time.Minute})
		done <- result{r, err, 0}
	}()
	if !p.Terminate() {
		t.Fatal("terminate reported not running")
	}
	res = <-done
	if res.err != nil || !res.r.Exited || res.r.ExitCode != 137 {
		t.Fatalf("read woken by exit: %+v", res)
	}
}

func TestReadWaitsForCloseAfterExit(t *testing.T) {
	m := newManager(t, Config{})
	ctx := deadline(t, 10*time.Second)
	// The shell exits while its background child holds stdout open.
	p := start(t, m, StartOptions{ID: "x", PipeStdin: true, Argv: []string{"sh", "-c", "exec 3<&0; sh -c 'read x; echo late:$x' <&3 & exit 4"}})
	var exitSeq uint64
	for exitSeq == 0 {
		b := p.Events(0, -1)
		for _, ev := range b.Events {
			if ev.Kind == EventExited {
				exitSeq = ev.Seq
			}
		}
		if exitSeq == 0 {
			if err := p.Wait(ctx, p.NextSeq()-1); err != nil {
				t.Fatal(err)
			}
		}
	}
	// An exited process is news only for a reader that has not seen it.
	r, err := p.Read(ctx, ReadOptions{AfterSeq: exitSeq - 1, MaxBytes: NoByteLimit, Wait: time.Minute})
	if err != nil || !r.Exited || r.Closed || r.ExitCode != 4 {
		t.Fatalf("read before exit seq: %+v %v", r, err)
	}
	done := make(chan ReadResult, 1)
	go func() {
		r, _ := p.Read(ctx, ReadOptions{AfterSeq: exitSeq, MaxBytes: NoByteLimit, Wait: time.Minute})
		done <- r
	}()
	// Output after the exit still flows, through the grandchild.
	if st, err := p.Write(ctx, "1", []byte("z\n")); st != WriteAccepted || err != nil {
		t.Fatalf("write after exit: %v %v", st, err)
	}
	r = <-done
	if len(r.Chunks) != 1 || string(r.Chunks[0].Data) != "late:z\n" || r.Chunks[0].Seq != exitSeq+1 {
		t.Fatalf("late output: %+v", r)
	}
	evs := pump(t, p)
	if evs[len(evs)-1].Seq != exitSeq+2 {
		t.Fatalf("closed seq %d, exit seq %d", evs[len(evs)-1].Seq, exitSeq)
	}
}

func TestRingEviction(t *testing.T) {
	m := newManager(t, Config{RingBytes: 64 << 10})
	ctx := deadline(t, 10*time.Second)
	p := start(t, m, StartOptions{ID: "big", Argv: []string{"head", "-c", "1048576", "/dev/zero"}})
	<-p.Done()
	r, err := p.Read(ctx, ReadOptions{MaxBytes: NoByteLimit})
	if err != nil {
		t.Fatal(err)
	}
	first := r.Chunks[0].Seq
	total := 0
	for _, c := range r.Chunks {
		total += len(c.Data)
	}
	if first == 1 || total > 64<<10 || total < 64<<10-DefaultChunkSize {
		t.Fatalf("retained %d bytes from seq %d", total, first)
	}
	// The exit may precede output the reader had not drained yet; it is
	// never evicted.
	b := p.Events(0, -1)
	var exitSeq uint64
	for i, ev := range b.Events {
		if ev.Kind == EventExited {
			exitSeq = ev.Seq
		}
		// Only an exit older than the oldest retained chunk may precede a
		// gap: the evicted chunks around it.
		if i > 0 && ev.Seq > first && ev.Seq != b.Events[i-1].Seq+1 {
			t.Fatalf("events have a gap at %d", ev.Seq)
		}
	}
	wantEvicted := first - 1
	if exitSeq < first {
		wantEvicted--
	}
	if b.Evicted != wantEvicted || b.Events[0].Seq != min(first, exitSeq) {
		t.Fatalf("evicted %d, first event %d, first chunk %d, exit %d", b.Evicted, b.Events[0].Seq, first, exitSeq)
	}
	last := b.Events[len(b.Events)-1]
	if exitSeq == 0 || last.Kind != EventClosed || last.Seq != r.NextSeq-1 {
		t.Fatalf("exit %d, last event %+v", exitSeq, last)
	}
	if b := p.Events(first-1, -1); b.Evicted != 0 {
		t.Fatalf("evicted after seq %d: %d", first-1, b.Evicted)
	}

	// The chunk-count bound evicts too.
	m2 := newManager(t, Config{RingChunks: 3})
	q := start(t, m2, StartOptions{ID: "many", Argv: []string{"sh", "-c", "for i in 1 2 3 4 5 6 7 8; do echo $i; read x </dev/null; done"}})
	<-q.Done()
	r, _ = q.Read(ctx, ReadOptions{MaxBytes: NoByteLimit})
	if len(r.Chunks) > 3 || !strings.HasSuffix(string(r.Chunks[len(r.Chunks)-1].Data), "8\n") {
		t.Fatalf("%d chunks retained: %+v", len(r.Chunks), r.Chunks)
	}
}

// procState returns the state letter of pid in /proc, or "" if it is gone.
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndex(s, ")")+1:])
	return f[0]
}

// diesWithin reports whether pid, which need not be our child, has
// terminated or does within d. A pidfd becomes readable when its process
// exits, so this waits on an event rather than polling /proc.
func diesWithin(t *testing.T, pid int, d time.Duration) bool {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return true
	}
	if err != nil {
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	defer unix.Close(fd)
	end := time.Now().Add(d)
	for {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(time.Until(end).Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.Fatalf("poll pidfd: %v", err)
		}
		return n == 1
	}
}

// readUntil long-polls p's output from the start until it contains want.
func readUntil(t *testing.T, p *Process, want string) string {
	t.Helper()
	ctx := deadline(t, 10*time.Second)
	var out string
	var after uint64
	for !strings.Contains(out, want) {
		r, err := p.Read(ctx, ReadOptions{AfterSeq: after, MaxBytes: NoByteLimit, Wait: 10 * time.Second})
		if err != nil {
			t.Fatalf("reading %s for %q: %v (have %q)", p.ID(), want, err, out)
		}
		for _, c := range r.Chunks {
			out += string(c.Data)
		}
		// As Codex clients do: continue after everything seen, exit
		// included, or an exited process would answer at once forever.
		after = r.NextSeq - 1
		if r.Closed && !strings.Contains(out, want) {
			t.Fatalf("%s closed without printing %q: %q", p.ID(), want, out)
		}
	}
	return out
}

// grandchild starts "sh -c" with a background sleep and returns the
// sleep's pid, read from the output.
func grandchild(t *testing.T, m *Manager, id string, tty bool) (*Process, int) {
	t.Helper()
	p := start(t, m, StartOptions{ID: id, TTY: tty, Argv: []string{"sh", "-c", "sleep 100 & echo $!; wait"}})
	out := readUntil(t, p, "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("grandchild pid %q", out)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return p, pid
}

func TestTerminateKillsGroup(t *testing.T) {
	m := newManager(t, Config{})
	for _, tty := range []bool{false, true} {
		p, gc := grandchild(t, m, fmt.Sprint("g", tty), tty)
		if st := procState(gc); st != "S" && st != "R" {
			t.Fatalf("grandchild %d is not running: %q", gc, st)
		}
		if !p.Terminate() {
			t.Fatal("terminate reported not running")
		}
		o := summarize(t, pump(t, p))
		if o.exitCode != 137 {
			t.Fatalf("exit code %d", o.exitCode)
		}
		// Closed means the grandchild let go of the output: it is dying.
		if !diesWithin(t, gc, 5*time.Second) {
			t.Fatalf("grandchild %d survived terminate: state %s", gc, procState(gc))
		}
	}
}

func TestSignalInterruptReachesGroup(t *testing.T) {
	m := newManager(t, Config{})
	// Only the inner shell and its sleep get SIGINT's default action; the
	// outer shell traps it and goes on once its child died. Had the signal
	// reached the leader alone, the child would sleep on.
	p := start(t, m, StartOptions{ID: "i", Argv: []string{"sh", "-c", `trap "echo trapped" INT; sh -c "echo ready; exec sleep 100"; echo after`}})
	ctx := deadline(t, 10*time.Second)
	r, err := p.Read(ctx, ReadOptions{MaxBytes: NoByteLimit, Wait: 10 * time.Second})
	if err != nil || len(r.Chunks) == 0 || string(r.Chunks[0].Data) != "ready\n" {
		t.Fatalf("ready: %+v %v", r, err)
	}
	if err := m.Signal("i", syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	o := summarize(t, pump(t, p))
	if o.out[StreamStdout] != "ready\ntrapped\nafter\n" || o.exitCode != 0 {
		t.Fatalf("got %+v", o)
	}
}

func TestKillAll(t *testing.T) {
	m := newManager(t, Config{KillGrace: 200 * time.Millisecond})
	p1, gc1 := grandchild(t, m, "pipes", false)
	p2, gc2 := grandchild(t, m, "tty", true)
	p3 := start(t, m, StartOptions{ID: "stdin", PipeStdin: true, Argv: []string{"cat"}})
	// A descendant in its own session escapes the group kill, but its
	// parent still leads to it: it dies with the rest.
	p4 := start(t, m, StartOptions{ID: "escaped", Argv: []string{"sh", "-c", `setsid sh -c 'echo $$; exec sleep 100' & wait`}})
	ctx := deadline(t, 10*time.Second)
	escaped, err := strconv.Atoi(strings.TrimSpace(readUntil(t, p4, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(escaped, syscall.SIGKILL) })

	m.KillAll()
	for _, p := range []*Process{p1, p2, p3, p4} {
		select {
		case <-p.Done():
		default:
			t.Fatalf("%s not closed after KillAll", p.ID())
		}
	}
	for _, p := range []*Process{p1, p2, p3, p4} {
		if code, ok := p.ExitCode(); !ok || code != 137 {
			t.Errorf("%s: exit code %d", p.ID(), code)
		}
	}
	for _, gc := range []int{gc1, gc2} {
		if !diesWithin(t, gc, 5*time.Second) {
			t.Errorf("grandchild %d survived KillAll", gc)
		}
	}
	if !diesWithin(t, escaped, 5*time.Second) {
		t.Errorf("escaped descendant %d survived KillAll", escaped)
	}
	// Killed processes stay readable until their TTL.
	if r, err := m.Read(ctx, "pipes", ReadOptions{}); err != nil || !r.Closed {
		t.Fatalf("read after KillAll: %+v %v", r, err)
	}
}

func TestClosedTTL(t *testing.T) {
	m := newManager(t, Config{ClosedTTL: 50 * time.Millisecond})
	expired := make(chan string, 1)
	m.onExpire = func(id string) { expired <- id }
	p := start(t, m, StartOptions{ID: "t", Argv: []string{"true"}})
	<-p.Done()
	// Closed is retained: readable, and its id reserved.
	if r, err := m.Read(context.Background(), "t", ReadOptions{}); err != nil || !r.Closed {
		t.Fatalf("read closed: %+v %v", r, err)
	}
	select {
	case id := <-expired:
		t.Fatalf("%s expired early", id)
	default:
		if _, err := m.Start(StartOptions{ID: "t", Argv: []string{"true"}}); !errors.Is(err, ErrDuplicateProcess) {
			t.Fatalf("restart during TTL: %v", err)
		}
	}
	select {
	case <-expired:
	case <-time.After(10 * time.Second):
		t.Fatal("TTL never expired")
	}
	if _, err := m.Get("t"); !errors.Is(err, ErrUnknownProcess) {
		t.Fatalf("after TTL: %v", err)
	}
	q := start(t, m, StartOptions{ID: "t", Argv: []string{"true"}})
	<-q.Done()
}

func countFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func TestChurnLeaksNothing(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 100
	}
	base := countFDs(t)
	m := NewManager(Config{ClosedTTL: time.Hour})
	// Generous: this test is about leaks, and 1000 processes under -race
	// on a loaded 2-core machine take a while.
	ctx := deadline(t, 3*time.Minute)
	var started []*Process
	for i := range n {
		// One in ten on a tty, to churn pty masters too.
		tty := i%10 == 0
		id := strconv.Itoa(i)
		p, err := m.Start(StartOptions{ID: id, Argv: []string{"true"}, TTY: tty, PipeStdin: i%3 == 0, Env: testPath})
		if err != nil {
			t.Fatal(err)
		}
		started = append(started, p)
		var after uint64
		for {
			r, err := m.Read(ctx, id, ReadOptions{AfterSeq: after, Wait: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if r.Closed {
				if r.ExitCode != 0 {
					t.Fatalf("%s: exit %d", id, r.ExitCode)
				}
				break
			}
			after = r.NextSeq - 1
		}
	}
	// process/closed goes out as the last stream ends; the descriptors are
	// closed just after, before Done.
	for _, p := range started {
		select {
		case <-p.Done():
		case <-ctx.Done():
			t.Fatalf("process %s not done", p.ID())
		}
	}
	// Each leader is reaped once the manager has seen its group empty (a
	// leader not yet reaped holds a pidfd).
	waitUnpinned(t, m, ctx)
	if got := countFDs(t); got != base {
		t.Errorf("fds: %d with %d closed processes, %d before", got, n, base)
	}
	m.Close()
	if got := countFDs(t); got != base {
		t.Errorf("fds: %d after close, %d before", got, base)
	}
	goleak.VerifyNone(t)
}

func TestConcurrentUse(t *testing.T) {
	m := newManager(t, Config{})
	ctx := deadline(t, 20*time.Second)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := strconv.Itoa(i)
			p, err := m.Start(StartOptions{ID: id, PipeStdin: true, Argv: []string{"cat"}, Env: testPath})
			if err != nil {
				t.Error(err)
				return
			}
			var inner sync.WaitGroup
			for j := range 4 {
				inner.Add(1)
				go func() {
					defer inner.Done()
					if _, err := m.Write(ctx, id, strconv.Itoa(j), []byte("x")); err != nil {
						t.Error(err)
					}
					m.Read(ctx, id, ReadOptions{MaxBytes: 10, Wait: 10 * time.Millisecond})
					p.Events(0, 100)
				}()
			}
			inner.Wait()
			var got []byte
			var after uint64
			for len(got) < 4 {
				r, err := p.Read(ctx, ReadOptions{AfterSeq: after, MaxBytes: NoByteLimit, Wait: 10 * time.Second})
				if err != nil {
					t.Error(err)
					return
				}
				for _, c := range r.Chunks {
					got = append(got, c.Data...)
				}
				after = r.NextSeq - 1
			}
			if !bytes.Equal(got, []byte("xxxx")) {
				t.Errorf("%s: echoed %q", id, got)
			}
			m.Terminate(id)
			<-p.Done()
		}()
	}
	wg.Wait()
}

// TestKillAllReachesMembersOfClosedProcesses: a closed process's leader is
// reaped, but a member of its group that let go of the output still runs;
// KillAll kills it, without signalling the group id as a whole (a stranger
// may have reused the leader's pid).
func TestKillAllReachesMembersOfClosedProcesses(t *testing.T) {
	m := newManager(t, Config{})
	p := start(t, m, StartOptions{ID: "left", Argv: []string{"sh", "-c", "sleep 100 >/dev/null 2>&1 & echo $!"}})
	o := summarize(t, pump(t, p))
	pid, err := strconv.Atoi(strings.TrimSpace(o.out[StreamStdout]))
	if err != nil {
		t.Fatalf("member pid %q", o.out[StreamStdout])
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	if st := procState(pid); st != "S" && st != "R" {
		t.Fatalf("member %d is not running after its leader closed: %q", pid, st)
	}
	m.KillAll()
	if !diesWithin(t, pid, 5*time.Second) {
		t.Fatalf("member %d of a closed process survived KillAll: state %s", pid, procState(pid))
	}
}

// waitUnpinned waits until m keeps no leader unreaped.
func waitUnpinned(t *testing.T, m *Manager, ctx context.Context) {
	t.Helper()
	for {
		n, shrunk := m.pinned()
		if n == 0 {
			return
		}
		select {
		case <-shrunk:
		case <-ctx.Done():
			t.Fatalf("%d leaders still unreaped", n)
		}
	}
}

// TestWriteAfterTerminateFails: once a running process is terminated, a
// write to its stdin fails (Codex 0.169 answers -32603 "failed to write to
// process stdin", on pipes and ttys, before and after it closes), unlike a
// write after a process exited on its own, which is accepted and lost.
func TestWriteAfterTerminateFails(t *testing.T) {
	m := newManager(t, Config{})
	ctx := deadline(t, 10*time.Second)
	for _, tty := range []bool{false, true} {
		id := fmt.Sprintf("t-%v", tty)
		p := start(t, m, StartOptions{ID: id, PipeStdin: !tty, TTY: tty, Argv: []string{"cat"}})
		if !p.Terminate() {
			t.Fatalf("%s: terminate of a running cat reported it not running", id)
		}
		check := func(when string) {
			_, err := m.Write(ctx, id, "w-"+when, []byte("x\n"))
			var pe *Error
			if !errors.Is(err, ErrStdinTerminated) || err.Error() != "failed to write to process stdin" || !errors.As(err, &pe) || pe.RPCCode() != -32603 {
				t.Fatalf("%s: write %s terminate: %v", id, when, err)
			}
		}
		check("right after")
		<-p.Done()
		check("after the close of")
	}
}
