//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// server is one app-server under test, a child process.
type server struct {
	name string
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	log  bytes.Buffer
	home string
}

// codexConfig is a throwaway CODEX_HOME's config.toml: the mock model on
// loopback, no update checks, no plugins, no analytics (the setup of
// app-server-observed.md).
const codexConfig = `model = "mock-model"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "workspace-write"
model_context_window = %d
check_for_update_on_startup = false
[model_providers.mock]
name = "Mock Responses"
base_url = "%s"
wire_api = "responses"
env_key = "MOCK_API_KEY"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 60000
[analytics]
enabled = false
[feedback]
enabled = false
[otel]
exporter = "none"
log_user_prompt = false
[features]
plugins = false
remote_plugin = false
apps = false
in_app_updates = false
tool_suggest = false
`

// newHome makes a throwaway CODEX_HOME pointing at the mock model.
func newHome(mockURL string, window int) (string, error) {
	home, err := os.MkdirTemp("", "longbench-home-")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o700); err != nil {
		return "", err
	}
	return home, os.WriteFile(filepath.Join(home, "config.toml"), []byte(fmt.Sprintf(codexConfig, window, mockURL)), 0o600)
}

// start runs argv with CODEX_HOME=home, its stdin and stdout piped.
func start(name string, argv []string, home string) (*server, error) {
	s := &server{name: name, home: home}
	cmd := exec.Command(argv[0], argv[1:]...)
	// HOME is the throwaway directory too: Codex snapshots the user's login
	// shell for each thread, and the machine's dotfiles (a pyenv init, say)
	// would be measured with it.
	cmd.Env = append(os.Environ(), "HOME="+home, "CODEX_HOME="+home, "TMPDIR="+filepath.Join(home, "tmp"), "MOCK_API_KEY=dummy", "RUST_LOG=error")
	cmd.Dir = home
	cmd.Stderr = &s.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := evictPageCache(argv[0]); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s.cmd, s.in, s.out = cmd, in, bufio.NewReaderSize(out, 1<<20)
	return s, nil
}

// stop kills the server's process group and waits for it.
func (s *server) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	_ = s.cmd.Wait()
}

func (s *server) send(line string) error {
	_, err := io.WriteString(s.in, line+"\n")
	return err
}

// msg is a message read from a server, decoded only as far as needed.
type msg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	Params json.RawMessage `json:"params"`
}

func (s *server) read() (*msg, error) {
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("%s: %w (stderr: %s)", s.name, err, tail(s.log.String()))
	}
	var m msg
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, fmt.Errorf("%s sent %q: %w", s.name, line, err)
	}
	return &m, nil
}

// until reads until a message that match accepts.
func (s *server) until(match func(*msg) bool) (*msg, error) {
	for {
		m, err := s.read()
		if err != nil {
			return nil, err
		}
		if match(m) {
			return m, nil
		}
	}
}

func isResponse(id int) func(*msg) bool {
	want := strconv.Itoa(id)
	return func(m *msg) bool { return m.Method == "" && string(m.ID) == want }
}

func isNote(method string) func(*msg) bool {
	return func(m *msg) bool { return m.Method == method && m.ID == nil }
}

// call sends a request and returns its result.
func (s *server) call(id int, method, params string) (json.RawMessage, error) {
	if err := s.send(fmt.Sprintf(`{"method":%q,"id":%d,"params":%s}`, method, id, params)); err != nil {
		return nil, err
	}
	m, err := s.until(isResponse(id))
	if err != nil {
		return nil, err
	}
	if m.Error != nil {
		return nil, fmt.Errorf("%s: %s: %s", s.name, method, m.Error)
	}
	return m.Result, nil
}

const initialize = `{"clientInfo":{"name":"appbench","title":null,"version":"1.0"},"capabilities":{"experimentalApi":true}}`

func rssKiB(pid int) int64 { return statusKiB(pid, "VmRSS:") }

// statusKiB reads a field of /proc/PID/status, in KiB.
func statusKiB(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, field) {
			f := strings.Fields(l)
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return -1
}

// groupRSSKiB is the RSS of a process and its descendants (Codex runs
// helpers).
func groupRSSKiB(pid int) int64 { return groupKiB(pid, "VmRSS:") }

// groupKiB sums a /proc/PID/status field over a process and its
// descendants.
func groupKiB(pid int, field string) int64 {
	total := statusKiB(pid, field)
	// Each thread lists the children it forked: Codex (tokio) and Go both
	// fork from any thread, so every task's list is read.
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		kids, _ := os.ReadFile(t)
		for _, k := range strings.Fields(string(kids)) {
			if n, err := strconv.Atoi(k); err == nil {
				total += groupKiB(n, field)
			}
		}
	}
	return total
}

func tail(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}

// evictPageCache drops path's pages from the page cache (read-only advice,
// as appbench does, whose README says why): a binary just built sits in the
// page cache in large folios, which a page fault maps whole, so it would
// look resident in full; read back through readahead it is mapped around
// what is touched. Both servers get the same treatment before every start.
func evictPageCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return err
	}
	const fadvDontNeed = 4 // POSIX_FADV_DONTNEED
	if _, _, e := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontNeed, 0, 0); e != 0 {
		return fmt.Errorf("posix_fadvise %s: %w", path, e)
	}
	return nil
}
