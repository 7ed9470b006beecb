package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// execServer is one `codexd exec-server` process on its own loopback port
// and --root. kill (SIGKILL) and start again bring it back on the same
// port, with none of its sessions, as a restarted exec-server comes back.
type execServer struct {
	bin, id, root, addr, url string
	cmd                      *exec.Cmd
	log                      *capped
}

func newExecServer(bin, id, base string) (*execServer, error) {
	root := filepath.Join(base, "exec-"+id)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	s := &execServer{bin: bin, id: id, root: root, addr: addr, log: &capped{}}
	return s, s.start()
}

func (s *execServer) start() error {
	cmd := exec.Command(s.bin, "exec-server", "--listen", "ws://"+s.addr, "--root", s.root)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.root, "LANG=C.UTF-8"}
	cmd.Dir = s.root
	cmd.Stderr = s.log
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(l)
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case u := <-line:
		if !strings.HasPrefix(u, "ws://") {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return fmt.Errorf("exec-server %s printed %q: %s", s.id, u, s.log)
		}
		s.url = u
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("exec-server %s did not start: %s", s.id, s.log)
	}
	s.cmd = cmd
	return nil
}

// kill ends the process with SIGKILL (its commands die with it) and reaps it.
func (s *execServer) kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	_ = s.cmd.Wait()
	s.cmd = nil
}

// appServer is `codexd app-server` on stdio, with a CODEX_HOME whose
// config makes the mock its model.
type appServer struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	c     *client
	cwd   string
	log   *capped
}

func configTOML(mockURL, sandbox string) string {
	return fmt.Sprintf(`model = "mock-model"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = %q
check_for_update_on_startup = false

[model_providers.mock]
name = "Mock Responses"
base_url = %q
wire_api = "responses"
env_key = "MOCK_API_KEY"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 60000

[analytics]
enabled = false
`, sandbox, mockURL)
}

func startAppServer(bin, base, mockURL, sandbox string, onNote func(string, json.RawMessage)) (*appServer, error) {
	dir := filepath.Join(base, "app")
	for _, d := range []string{"codex-home", "home", "tmp", "work"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "codex-home", "config.toml"), []byte(configTOML(mockURL, sandbox)), 0o644); err != nil {
		return nil, err
	}
	a := &appServer{cwd: filepath.Join(dir, "work"), log: &capped{}}
	cmd := exec.Command(bin, "app-server")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8",
		"HOME=" + filepath.Join(dir, "home"), "CODEX_HOME=" + filepath.Join(dir, "codex-home"),
		"TMPDIR=" + filepath.Join(dir, "tmp"), "MOCK_API_KEY=dummy-key"}
	cmd.Dir = a.cwd
	cmd.Stderr = a.log
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	a.cmd, a.stdin = cmd, in
	a.c = newClient(in, out, onNote)
	return a, nil
}

func (a *appServer) stop() {
	_ = a.stdin.Close()
	done := make(chan struct{})
	go func() { _ = a.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = a.cmd.Process.Kill()
		<-done
	}
}

// capped keeps the last 64 KiB written to it (a server's stderr).
type capped struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(p)
	if c.buf.Len() > 64<<10 {
		b := c.buf.Bytes()[c.buf.Len()-32<<10:]
		c.buf = *bytes.NewBuffer(append([]byte(nil), b...))
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}
