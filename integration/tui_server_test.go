//go:build linux

package integration

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tuiServer is `codexd app-server --listen ws://127.0.0.1:0`, as the TUI
// tests run it, behind a proxy that keeps a transcript of what the TUI and
// codexd say (URL is the proxy's: the TUI connects there). On failure the
// test's log gets the server's stderr and the transcript's tail.
type tuiServer struct {
	t     *testing.T
	URL   string
	proxy *wsProxy
	cmd   *exec.Cmd
	done  chan error
	log   *lockedBuffer
	// exited is set once stop has seen the process end.
	exited bool
}

// tuiServerConfig is the config.toml of the codexd app-server a TUI test
// drives: the mock model at modelURL as its only provider, with no
// retries (a failed request shows at once rather than after backoff), and
// the given approval policy and sandbox mode. extra goes before the
// provider's table: more top-level keys, or tables of its own such as
// [mcp_servers.NAME].
func tuiServerConfig(modelURL, approval, sandboxMode, extra string) string {
	return fmt.Sprintf(`model = "mock-model"
model_provider = "mockhttp"
approval_policy = %q
sandbox_mode = %q
%s
[model_providers.mockhttp]
name = "mock"
base_url = %q
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`, approval, sandboxMode, extra, modelURL)
}

// startTUIServer starts codexd's app-server in work, with CODEX_HOME home
// (codexd's own: its config.toml names the model provider), TMPDIR tmp
// and HOME userHome. It is killed, if still running, when the test ends.
func startTUIServer(t *testing.T, codexd, work, home, tmp, userHome string) *tuiServer {
	t.Helper()
	s := &tuiServer{t: t, done: make(chan error, 1), log: &lockedBuffer{}}
	s.cmd = exec.Command(codexd, "app-server", "--listen", "ws://127.0.0.1:0")
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // even if this test is killed
	s.cmd.Dir = work
	s.cmd.Env = append(os.Environ(), "CODEX_HOME="+home, "TMPDIR="+tmp, "HOME="+userHome)
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stderr = s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		if !s.exited {
			_ = s.cmd.Process.Kill()
			<-s.done
		}
		if t.Failed() {
			t.Logf("codexd app-server stderr:\n%s", s.log.String())
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the app-server's URL: %v", err)
	}
	url := strings.TrimSpace(line)
	if !strings.HasPrefix(url, "ws://127.0.0.1:") {
		t.Fatalf("app-server printed %q, want its ws:// URL", line)
	}
	s.proxy, err = startWSProxy(url)
	if err != nil {
		t.Fatal(err)
	}
	s.URL = s.proxy.URL
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the last messages between the TUI and codexd:\n%s", s.proxy.transcript(80))
		}
		s.proxy.Close()
	})
	return s
}

// stop sends SIGTERM and fails the test unless the server exits cleanly
// within 30 s.
func (s *tuiServer) stop() {
	s.t.Helper()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		s.exited = true
		if err != nil {
			s.t.Fatalf("codexd app-server after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		s.t.Fatal("codexd app-server did not stop within 30s of SIGTERM")
	}
}

// quitTUI leaves the TUI with /quit and fails the test unless it exits
// with status 0.
func quitTUI(t *testing.T, tui *tmuxSession, wait time.Duration) {
	t.Helper()
	tui.send(true, "/quit")
	tui.waitText(wait, "› /quit")
	tui.send(false, "Enter")
	scr := tui.waitFor("the TUI to exit", wait, func(s string) bool { return strings.Contains(s, "TUI exited with status") })
	if !strings.Contains(scr, "TUI exited with status 0") {
		t.Fatalf("the TUI did not exit with status 0; its last screen:\n%s", scr)
	}
}
