//go:build linux

package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// tmuxSession drives a terminal program in a detached tmux session of its
// own (a private server socket), the way a person at a keyboard would: keys
// go in with send-keys, and the screen comes back with capture-pane.
type tmuxSession struct {
	t    *testing.T
	bin  string
	sock string
	name string
}

// tmuxBin finds tmux, or skips the test saying why.
func tmuxBin(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed (apt-get install tmux); the TUI test drives the Codex TUI through it")
	}
	return p
}

// startTmux runs argv in a new detached session of size cols×rows, in dir,
// with env added to the environment. The session and its server are killed
// when the test ends.
func startTmux(t *testing.T, dir string, env []string, cols, rows int, argv ...string) *tmuxSession {
	t.Helper()
	s := &tmuxSession{t: t, bin: tmuxBin(t), sock: filepath.Join(t.TempDir(), "tmux.sock"), name: "tui"}
	// The server's configuration: keep the pane after the program exits,
	// so that its last screen and its exit status can still be read.
	conf := filepath.Join(t.TempDir(), "tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g remain-on-exit on\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-f", conf, "new-session", "-d", "-s", s.name, "-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows), "-c", dir}
	for _, kv := range env {
		args = append(args, "-e", kv)
	}
	args = append(args, "--")
	args = append(args, argv...)
	if out, err := s.cmd(args...).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = s.cmd("kill-server").Run() })
	return s
}

func (s *tmuxSession) cmd(args ...string) *exec.Cmd {
	c := exec.Command(s.bin, append([]string{"-S", s.sock}, args...)...)
	c.Env = append(os.Environ(), "TMUX=")
	return c
}

// send types keys: literal text, or tmux key names such as Enter, Escape
// and C-c when literal is false.
func (s *tmuxSession) send(literal bool, keys ...string) {
	s.t.Helper()
	args := []string{"send-keys", "-t", s.name}
	if literal {
		args = append(args, "-l")
	}
	if out, err := s.cmd(append(args, keys...)...).CombinedOutput(); err != nil {
		s.t.Fatalf("tmux send-keys %q: %v: %s", keys, err, out)
	}
}

// screen returns what the pane shows now.
func (s *tmuxSession) screen() string {
	s.t.Helper()
	out, err := s.cmd("capture-pane", "-p", "-t", s.name).Output()
	if err != nil {
		s.t.Fatalf("tmux capture-pane: %v", err)
	}
	return string(out)
}

// waitFor polls the screen until ok accepts it, or fails the test with the
// last screen after timeout. Polling is the only way to observe a terminal;
// the deadline is generous, and no assertion depends on how fast it is.
func (s *tmuxSession) waitFor(what string, timeout time.Duration, ok func(screen string) bool) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		scr := s.screen()
		if ok(scr) {
			return scr
		}
		select {
		case <-ctx.Done():
			s.t.Fatalf("waiting for %s: not on screen after %s; the screen was:\n%s", what, timeout, scr)
		case <-tick.C:
		}
	}
}

// waitText waits until the screen contains every one of texts.
func (s *tmuxSession) waitText(timeout time.Duration, texts ...string) string {
	s.t.Helper()
	return s.waitFor(fmt.Sprintf("%q", texts), timeout, func(scr string) bool {
		for _, x := range texts {
			if !strings.Contains(scr, x) {
				return false
			}
		}
		return true
	})
}

// lockedBuffer is a bytes.Buffer that a child process writes while the
// test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startRemoteTUI writes the Codex TUI's own CODEX_HOME under root (nothing
// that would reach beyond loopback; extra is more top-level config, such as
// the sandbox mode the TUI sends with thread/start) and starts the TUI in
// tmux against the app-server at url. It runs under sh, which reports its
// exit status on the screen, so the status is read where a person would
// read it; it returns once the composer shows.
func startRemoteTUI(t *testing.T, root, work, tmp, home, codex, url, extra string) *tmuxSession {
	t.Helper()
	tuiHome := mkdir(t, root, "tui-home")
	writeFile(t, filepath.Join(tuiHome, "config.toml"), extra+`
check_for_update_on_startup = false
[analytics]
enabled = false
[feedback]
enabled = false
[features]
plugins = false
remote_plugin = false
apps = false
in_app_updates = false
tool_suggest = false
[tui]
screen_reader_detection_done = true
`)
	tui := startTmux(t, work, []string{"CODEX_HOME=" + tuiHome, "TMPDIR=" + tmp, "HOME=" + home, "TERM=xterm-256color"},
		120, 40, "sh", "-c", `"$@"; echo "TUI exited with status $?"`, "sh", codex, "--remote", url)
	tui.waitText(60*time.Second, "Ask Codex to do anything")
	return tui
}
