//go:build unix

package execclient

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexd/codexd/execproto"
	"github.com/codexd/codexd/execserver"
	"github.com/codexd/codexd/jsonrpc"
)

func TestEchoBothStreamsAndExitCode(t *testing.T) {
	_, url := newServer(t, execserver.Config{})
	c := dialT(t, url, Options{})
	if c.SessionID() == "" || c.EnvironmentInfo().ExecutorVersion == "" {
		t.Fatalf("session %q, env %+v", c.SessionID(), c.EnvironmentInfo())
	}
	r := run(t, c, StartOptions{Argv: []string{"sh", "-c", "echo out; echo err >&2; echo more; exit 3"}, Env: hostEnv()})
	if r.err != nil || r.code != 3 || r.stdout != "out\nmore\n" || r.stderr != "err\n" {
		t.Fatalf("got %+v", r)
	}
	r = run(t, c, StartOptions{Argv: []string{"echo", "hello", "world"}, Env: hostEnv()})
	if r.err != nil || r.code != 0 || r.stdout != "hello world\n" || r.stderr != "" {
		t.Fatalf("got %+v", r)
	}
}

func TestInProcess(t *testing.T) {
	srv, err := execserver.New(execserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c, err := NewInProcess(testCtx(t), srv, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// No PATH: the server falls back to a default one.
	r := run(t, c, StartOptions{Argv: []string{"sh", "-c", "echo in-process; exit 7"}})
	if r.err != nil || r.code != 7 || r.stdout != "in-process\n" {
		t.Fatalf("got %+v", r)
	}
}

func TestUnixSocket(t *testing.T) {
	srv, err := execserver.New(execserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "s.sock")
	l, err := srv.Listen(jsonrpc.Listen{Scheme: "unix", Addr: sock})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- l.Serve(nil, nil) }()
	defer func() {
		l.Close()
		srv.Close()
		<-served
	}()
	c := dialT(t, "unix://"+sock, Options{})
	r := run(t, c, StartOptions{Argv: []string{"sh", "-c", "echo over-unix >&2"}, Env: hostEnv()})
	if r.err != nil || r.code != 0 || r.stderr != "over-unix\n" {
		t.Fatalf("got %+v", r)
	}
}

func TestBearerToken(t *testing.T) {
	_, url := newServer(t, execserver.Config{AuthToken: "s3cret"})
	if c, err := Dial(testCtx(t), url, Options{BearerToken: "wrong"}); err == nil {
		c.Close()
		t.Fatal("wrong token accepted")
	}
	c := dialT(t, url, Options{BearerToken: "s3cret"})
	if r := run(t, c, StartOptions{Argv: []string{"true"}, Env: hostEnv()}); r.code != 0 || r.err != nil {
		t.Fatalf("got %+v", r)
	}
}

func TestDialErrors(t *testing.T) {
	for _, url := range []string{"localhost:1", "http://x", "ws://", "unix://"} {
		if _, err := Dial(testCtx(t), url, Options{}); err == nil {
			t.Errorf("Dial(%q) succeeded", url)
		}
	}
	if _, err := Dial(testCtx(t), "unix://"+filepath.Join(t.TempDir(), "none.sock"), Options{}); err == nil {
		t.Error("dialled a missing socket")
	}
}

func TestSignalAndTerminate(t *testing.T) {
	_, url := newServer(t, execserver.Config{})
	c := dialT(t, url, Options{})
	ctx := testCtx(t)

	// cat echoing a line proves it runs, with SIGINT's default action (a
	// shell may catch a signal that arrives between its fork and exec).
	p, err := c.Start(ctx, StartOptions{Argv: []string{"cat"}, Env: hostEnv(), PipeStdin: true})
	if err != nil {
		t.Fatal(err)
	}
	out := collect(p.Stdout())
	if err := p.Write(ctx, []byte("ready\n")); err != nil {
		t.Fatal(err)
	}
	out.waitFor(t, "ready\n")
	if err := p.Signal(ctx); err != nil {
		t.Fatal(err)
	}
	r := finish(t, p)
	if r.err != nil || r.code != 128+2 {
		t.Fatalf("after interrupt: %+v", r)
	}

	p, err = c.Start(ctx, StartOptions{Argv: []string{"sh", "-c", "trap '' INT; echo ready; sleep 30"}, Env: hostEnv()})
	if err != nil {
		t.Fatal(err)
	}
	out = collect(p.Stdout())
	out.waitFor(t, "ready\n")
	running, err := p.Terminate(ctx)
	if err != nil || !running {
		t.Fatalf("terminate: %v, %v", running, err)
	}
	r = finish(t, p)
	if r.err != nil || r.code != 128+9 {
		t.Fatalf("after terminate: %+v", r)
	}
	if running, err := p.Terminate(ctx); err != nil || running {
		t.Fatalf("second terminate: %v, %v", running, err)
	}
}

func TestTTY(t *testing.T) {
	_, url := newServer(t, execserver.Config{})
	c := dialT(t, url, Options{})
	ctx := testCtx(t)
	p, err := c.Start(ctx, StartOptions{
		Argv: []string{"sh", "-c", `tty >/dev/null && echo is-a-tty; echo to-stderr >&2; read line; echo "got:$line"`},
		Env:  hostEnv(), TTY: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	out, errs := collect(p.Stdout()), collect(p.Stderr())
	out.waitFor(t, "to-stderr")
	if err := p.Write(ctx, []byte("hi\n")); err != nil {
		t.Fatal(err)
	}
	stdout, err := out.end(t)
	if err != nil {
		t.Fatal(err)
	}
	stderr, _ := errs.end(t)
	code, err := p.Wait(ctx)
	if err != nil || code != 0 {
		t.Fatalf("wait: %d, %v", code, err)
	}
	for _, want := range []string{"is-a-tty\r\n", "to-stderr\r\n", "got:hi\r\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("pty output %q lacks %q", stdout, want)
		}
	}
	if stderr != "" {
		t.Errorf("stderr of a tty process: %q", stderr)
	}
}

func TestStdin(t *testing.T) {
	_, url := newServer(t, execserver.Config{})
	c := dialT(t, url, Options{})
	ctx := testCtx(t)
	p, err := c.Start(ctx, StartOptions{
		Argv: []string{"sh", "-c", `read a; echo "a:$a"; read b; echo "b:$b" >&2; head -c 300000 | wc -c`},
		Env:  hostEnv(), PipeStdin: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	out, errs := collect(p.Stdout()), collect(p.Stderr())
	if err := p.Write(ctx, []byte("one\n")); err != nil {
		t.Fatal(err)
	}
	out.waitFor(t, "a:one\n")
	if err := p.Write(ctx, []byte("two\n")); err != nil {
		t.Fatal(err)
	}
	errs.waitFor(t, "b:two\n")
	// A write larger than one process/write is split, in order.
	big := strings.Repeat("x", 300000)
	if err := p.Write(ctx, []byte(big)); err != nil {
		t.Fatal(err)
	}
	r := result{}
	r.stdout, _ = out.end(t)
	r.stderr, _ = errs.end(t)
	r.code, r.err = p.Wait(ctx)
	if r.err != nil || r.code != 0 || strings.TrimSpace(strings.TrimPrefix(r.stdout, "a:one\n")) != "300000" || r.stderr != "b:two\n" {
		t.Fatalf("got %+v", r)
	}

	// Without PipeStdin, stdin is /dev/null and writes are refused.
	p, err = c.Start(ctx, StartOptions{Argv: []string{"sh", "-c", "cat; echo eof"}, Env: hostEnv()})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(ctx, []byte("x")); !errors.Is(err, ErrStdinClosed) {
		t.Fatalf("write without stdin: %v", err)
	}
	if r := finish(t, p); r.stdout != "eof\n" || r.code != 0 {
		t.Fatalf("got %+v", r)
	}
}

func TestCwdEnvArg0(t *testing.T) {
	_, url := newServer(t, execserver.Config{})
	c := dialT(t, url, Options{})
	dir := filepath.Join(t.TempDir(), "a dir#with%odd")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	env := hostEnv()
	env["CODEXD_TEST_VAR"] = "v=1"
	r := run(t, c, StartOptions{
		Argv: []string{"sh", "-c", `pwd; echo "$CODEXD_TEST_VAR"; echo "$0"`},
		Cwd:  dir, Env: env, Arg0: "renamed",
	})
	want := dir + "\nv=1\nrenamed\n"
	if r.err != nil || r.code != 0 || r.stdout != want {
		t.Fatalf("got %+v, want stdout %q", r, want)
	}
	// A file URI is passed as is.
	r = run(t, c, StartOptions{Argv: []string{"pwd"}, Cwd: execproto.PathURI(dir), Env: env})
	if r.stdout != dir+"\n" {
		t.Fatalf("got %+v", r)
	}
	if _, err := c.Start(testCtx(t), StartOptions{Argv: []string{"pwd"}, Cwd: "relative"}); err == nil {
		t.Fatal("relative cwd accepted")
	}
	if _, err := c.Start(testCtx(t), StartOptions{Argv: []string{"definitely-not-a-command-xyz"}, Env: env}); err == nil {
		t.Fatal("missing program started")
	}
	if _, err := c.Start(testCtx(t), StartOptions{}); err == nil {
		t.Fatal("empty argv accepted")
	}
}

func TestCallFS(t *testing.T) {
	_, url := newServer(t, execserver.Config{})
	c := dialT(t, url, Options{})
	f := filepath.Join(t.TempDir(), "f.txt")
	if err := os.WriteFile(f, []byte("content"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Call(testCtx(t), c, execproto.FsReadFile, execproto.FsReadFileParams{Path: execproto.PathURI(f)})
	if err != nil {
		t.Fatal(err)
	}
	if res.DataBase64 != base64.StdEncoding.EncodeToString([]byte("content")) {
		t.Fatalf("got %+v", res)
	}
}

// TestBackpressure: with a tiny client buffer, output beyond it is dropped
// from the notifications and refetched with process/read as the reader
// drains, and nothing is lost or repeated.
func TestBackpressure(t *testing.T) {
	_, url := newServer(t, execserver.Config{})
	c := dialT(t, url, Options{MaxBufferedOutput: 4096})
	dir := t.TempDir()
	fifo := filepath.Join(dir, "done")
	mkfifo(t, fifo)
	p, err := c.Start(testCtx(t), StartOptions{
		Argv: []string{"sh", "-c", `seq 1 40000; seq 1 1000 >&2; echo done > "$1"`, "sh", fifo},
		Env:  hostEnv(),
	})
	if err != nil {
		t.Fatal(err)
	}
	// Nothing is read until the child has written everything (about 230
	// KB, well within the server's 1 MiB ring).
	readFifo(t, fifo)
	p.mu.Lock()
	buffered := p.buffered
	p.mu.Unlock()
	if buffered > 4096+8192 {
		t.Fatalf("client buffered %d bytes", buffered)
	}
	r := finish(t, p)
	if r.err != nil || r.code != 0 {
		t.Fatalf("got code %d, err %v", r.code, r.err)
	}
	if r.stdout != seq(1, 40000) || r.stderr != seq(1, 1000) {
		t.Fatalf("output differs: %d/%d bytes", len(r.stdout), len(r.stderr))
	}
}

// TestOutputLost: when the server's ring evicts output the client never
// fetched, Wait reports it and the rest arrives in order.
func TestOutputLost(t *testing.T) {
	cfg := execserver.Config{}
	cfg.Procs.RingBytes = 64 << 10
	_, url := newServer(t, cfg)
	c := dialT(t, url, Options{MaxBufferedOutput: 4096})
	fifo := filepath.Join(t.TempDir(), "done")
	mkfifo(t, fifo)
	p, err := c.Start(testCtx(t), StartOptions{
		Argv: []string{"sh", "-c", `seq 1 100000; echo done > "$1"`, "sh", fifo},
		Env:  hostEnv(),
	})
	if err != nil {
		t.Fatal(err)
	}
	readFifo(t, fifo)
	r := finish(t, p)
	if r.code != 0 || !errors.Is(r.err, ErrOutputLost) {
		t.Fatalf("got code %d, err %v", r.code, r.err)
	}
	if !strings.HasSuffix(r.stdout, "\n99999\n100000\n") || len(r.stdout) >= len(seq(1, 100000)) {
		t.Fatalf("stdout: %d bytes", len(r.stdout))
	}
}

func seq(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

func TestCloseFailsPending(t *testing.T) {
	_, url := newServer(t, execserver.Config{})
	c, err := Dial(testCtx(t), url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Start(testCtx(t), StartOptions{Argv: []string{"sleep", "30"}, Env: hostEnv()})
	if err != nil {
		t.Fatal(err)
	}
	out := collect(p.Stdout())
	c.Close()
	if _, err := out.end(t); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("reader: %v", err)
	}
	if _, err := p.Wait(context.Background()); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("wait: %v", err)
	}
	if _, err := c.Start(testCtx(t), StartOptions{Argv: []string{"true"}}); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("start after close: %v", err)
	}
	if !errors.Is(c.Err(), ErrClientClosed) {
		t.Fatalf("Err: %v", c.Err())
	}
}
