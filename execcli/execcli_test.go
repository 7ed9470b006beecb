package execcli

import (
	"bytes"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/codexd/codexd/execserver"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const waitTimeout = 15 * time.Second

// buffer is a bytes.Buffer that the test can wait on.
type buffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{}
}

func newBuffer() *buffer { return &buffer{changed: make(chan struct{})} }

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	close(b.changed)
	b.changed = make(chan struct{})
	return b.b.Write(p)
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func (b *buffer) waitFor(t *testing.T, s string) {
	t.Helper()
	timer := time.NewTimer(waitTimeout)
	defer timer.Stop()
	for {
		b.mu.Lock()
		got, ch := b.b.String(), b.changed
		b.mu.Unlock()
		if strings.Contains(got, s) {
			return
		}
		select {
		case <-ch:
		case <-timer.C:
			t.Fatalf("no %q within %v; got %q", s, waitTimeout, got)
		}
	}
}

type outcome struct {
	code           int
	stdout, stderr string
}

// runAsync runs the command on its own goroutine.
func runAsync(args []string, stdin io.Reader, sigs chan os.Signal) (stdout, stderr *buffer, done chan outcome) {
	stdout, stderr, done = newBuffer(), newBuffer(), make(chan outcome, 1)
	go func() {
		code := run(args, stdin, stdout, stderr, sigs, os.Environ())
		done <- outcome{code, stdout.String(), stderr.String()}
	}()
	return stdout, stderr, done
}

func wait(t *testing.T, done chan outcome) outcome {
	t.Helper()
	select {
	case o := <-done:
		return o
	case <-time.After(waitTimeout):
		t.Fatal("codexd run did not return")
	}
	return outcome{}
}

func runSync(t *testing.T, args []string, stdin io.Reader) outcome {
	t.Helper()
	_, _, done := runAsync(args, stdin, nil)
	return wait(t, done)
}

// testServer serves an exec-server over WebSocket and returns its URL.
func testServer(t *testing.T, cfg execserver.Config) string {
	t.Helper()
	srv, err := execserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		hs.Close()
	})
	return "ws" + strings.TrimPrefix(hs.URL, "http")
}

// modes runs f embedded and against a WebSocket server.
func modes(t *testing.T, f func(t *testing.T, server []string)) {
	t.Run("embedded", func(t *testing.T) { f(t, nil) })
	t.Run("websocket", func(t *testing.T) {
		f(t, []string{"--server", testServer(t, execserver.Config{})})
	})
}

func args(server []string, rest ...string) []string {
	return append(append([]string{}, server...), rest...)
}

func TestExitCodes(t *testing.T) {
	modes(t, func(t *testing.T, server []string) {
		cases := []struct {
			script string
			want   int
		}{
			{"exit 0", 0},
			{"exit 3", 3},
			{"exit 255", 255},
			{"kill -TERM $$", 128 + 15},
			{"kill -KILL $$", 128 + 9},
		}
		for _, c := range cases {
			o := runSync(t, args(server, "--", "sh", "-c", c.script), nil)
			if o.code != c.want {
				t.Errorf("%q: exit %d, want %d (stderr %q)", c.script, o.code, c.want, o.stderr)
			}
		}
	})
}

func TestStdoutStderrSeparation(t *testing.T) {
	modes(t, func(t *testing.T, server []string) {
		o := runSync(t, args(server, "--", "sh", "-c", "echo out1; echo err1 >&2; echo out2; echo err2 >&2"), nil)
		if o.code != 0 || o.stdout != "out1\nout2\n" || o.stderr != "err1\nerr2\n" {
			t.Fatalf("got %+v", o)
		}
	})
}

func TestCwdAndEnv(t *testing.T) {
	modes(t, func(t *testing.T, server []string) {
		dir := t.TempDir()
		t.Setenv("CODEXD_EXEC_INHERITED", "inherited")
		if server != nil {
			// A remote server gets the local environment only when asked
			// (TestRemoteGetsNoLocalEnvironment).
			server = append(server, "--inherit-env")
		}
		o := runSync(t, args(server, "--cwd", dir, "--env", "CODEXD_A=1", "--env", "CODEXD_B=x=y", "--",
			"sh", "-c", `pwd; echo "$CODEXD_A $CODEXD_B $CODEXD_EXEC_INHERITED"`), nil)
		if o.code != 0 || o.stdout != dir+"\n1 x=y inherited\n" {
			t.Fatalf("got %+v", o)
		}
		// --env overrides the local environment.
		o = runSync(t, args(server, "--env", "CODEXD_EXEC_INHERITED=over", "--", "sh", "-c", `echo "$CODEXD_EXEC_INHERITED"`), nil)
		if o.stdout != "over\n" {
			t.Fatalf("got %+v", o)
		}
	})
}

func TestStdinForwarding(t *testing.T) {
	modes(t, func(t *testing.T, server []string) {
		o := runSync(t, args(server, "--", "sh", "-c", `read a; read b; echo "$b $a"`), strings.NewReader("first\nsecond\n"))
		if o.code != 0 || o.stdout != "second first\n" {
			t.Fatalf("got %+v", o)
		}
		// --no-stdin: the command reads /dev/null.
		o = runSync(t, args(server, "--no-stdin", "--", "sh", "-c", `cat; echo eof`), strings.NewReader("ignored\n"))
		if o.code != 0 || o.stdout != "eof\n" {
			t.Fatalf("got %+v", o)
		}
	})
}

func TestTTY(t *testing.T) {
	modes(t, func(t *testing.T, server []string) {
		// Local EOF becomes ^D, which ends cat's read on the terminal.
		o := runSync(t, args(server, "--tty", "--", "sh", "-c", `tty >/dev/null && echo tty-ok; cat`), strings.NewReader("typed\n"))
		if o.code != 0 || !strings.Contains(o.stdout, "tty-ok\r\n") || !strings.Contains(o.stdout, "typed\r\n") {
			t.Fatalf("got %+v", o)
		}
	})
}

func TestCtrlC(t *testing.T) {
	modes(t, func(t *testing.T, server []string) {
		// First Ctrl-C: interrupt. cat echoing a line proves it runs.
		in, inW := io.Pipe()
		defer inW.Close()
		sigs := make(chan os.Signal, 2)
		stdout, _, done := runAsync(args(server, "--", "cat"), in, sigs)
		if _, err := inW.Write([]byte("ready\n")); err != nil {
			t.Fatal(err)
		}
		stdout.waitFor(t, "ready\n")
		sigs <- os.Interrupt
		if o := wait(t, done); o.code != 128+int(syscall.SIGINT) {
			t.Fatalf("after Ctrl-C: %+v", o)
		}
		inW.Close()

		// Second Ctrl-C: terminate a command that ignores interrupts.
		in2, inW2 := io.Pipe()
		defer inW2.Close()
		sigs2 := make(chan os.Signal, 2)
		stdout, _, done = runAsync(args(server, "--", "sh", "-c", `trap "" INT; cat`), in2, sigs2)
		if _, err := inW2.Write([]byte("ready\n")); err != nil {
			t.Fatal(err)
		}
		stdout.waitFor(t, "ready\n")
		sigs2 <- os.Interrupt
		sigs2 <- os.Interrupt
		if o := wait(t, done); o.code != 128+int(syscall.SIGKILL) {
			t.Fatalf("after two Ctrl-C: %+v", o)
		}
	})
}

func TestStartFailures(t *testing.T) {
	modes(t, func(t *testing.T, server []string) {
		o := runSync(t, args(server, "--", "definitely-not-a-command-xyz"), nil)
		if o.code != ExitNotFound || !strings.Contains(o.stderr, "codexd run: cannot run definitely-not-a-command-xyz") {
			t.Fatalf("missing command: %+v", o)
		}
		dir := t.TempDir()
		o = runSync(t, args(server, "--", dir), nil)
		if o.code != ExitCannotRun {
			t.Fatalf("directory as command: %+v", o)
		}
	})
}

func TestUsage(t *testing.T) {
	for _, a := range [][]string{
		{},
		{"--"},
		{"--bogus", "--", "true"},
		{"--env", "NOEQUALS", "--", "true"},
		{"--env", "=v", "--", "true"},
		{"--server", "http://127.0.0.1:1", "--", "true"},
		{"--server", "127.0.0.1:1", "--", "true"},
		{"--auth-token-file", "/nonexistent", "--", "true"},
		{"--tty=maybe", "--", "true"},
	} {
		o := runSync(t, a, nil)
		if o.code != ExitUsage || o.stderr == "" || o.stdout != "" {
			t.Errorf("%q: %+v", a, o)
		}
	}
	// A missing token file is a usage error too.
	o := runSync(t, []string{"--server", "ws://127.0.0.1:1", "--auth-token-file", filepath.Join(t.TempDir(), "none"), "--", "true"}, nil)
	if o.code != ExitUsage {
		t.Errorf("missing token file: %+v", o)
	}
	// --help prints the usage on stdout and exits 0; nothing runs.
	for _, h := range []string{"--help", "-h"} {
		if o := runSync(t, []string{h, "--", "false"}, nil); o.code != 0 || !strings.Contains(o.stdout, "usage: codexd run") || o.stderr != "" {
			t.Errorf("%s: %+v", h, o)
		}
	}
}

func TestUnreachableServer(t *testing.T) {
	for _, url := range []string{"ws://127.0.0.1:1", "unix://" + filepath.Join(t.TempDir(), "no.sock")} {
		o := runSync(t, []string{"--server", url, "--", "true"}, nil)
		if o.code != ExitFailure || !strings.Contains(o.stderr, "codexd run: cannot connect to "+url) {
			t.Errorf("%s: %+v", url, o)
		}
	}
}

func TestAuthToken(t *testing.T) {
	url := testServer(t, execserver.Config{AuthToken: "tok"})
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good"), filepath.Join(dir, "bad")
	if err := os.WriteFile(good, []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("nope\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if o := runSync(t, []string{"--server", url, "--auth-token-file", good, "--", "echo", "authed"}, nil); o.code != 0 || o.stdout != "authed\n" {
		t.Fatalf("good token: %+v", o)
	}
	if o := runSync(t, []string{"--server", url, "--auth-token-file", bad, "--", "true"}, nil); o.code != ExitFailure {
		t.Fatalf("bad token: %+v", o)
	}
	if o := runSync(t, []string{"--server", url, "--", "true"}, nil); o.code != ExitFailure {
		t.Fatalf("no token: %+v", o)
	}
}

// TestMainSmoke runs the exported entry point once (it installs real
// signal handlers).
func TestMainSmoke(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"--", "sh", "-c", "echo main; exit 4"}, nil, &out, &errb); code != 4 || out.String() != "main\n" {
		t.Fatalf("code %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}
