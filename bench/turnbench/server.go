//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/codexd/codexd/internal/procstat"
)

// serverLog copies the servers' stderr to ours (-server-log).
var serverLog bool

// server is one app-server under test: a child process spoken to over its
// stdin and stdout, with a scratch directory of its own.
type server struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	client *client
	dir    string // scratch root, removed at stop
	cwd    string // where its threads run
	log    cappedBuffer
}

// MCP servers of the run (-mcp, -mcp-servers, -mcp-slow, -mcp-turn).
var (
	mcpBin     string
	mcpServers int
	mcpSlow    time.Duration
	mcpTurn    bool
)

// mcpTables are the [mcp_servers] both servers get: mcpServers copies of
// the test server, bench0 … benchN-1, the last one slow to start when
// mcpSlow is set.
func mcpTables() string {
	if mcpBin == "" {
		return ""
	}
	var b strings.Builder
	for i := 0; i < mcpServers; i++ {
		fmt.Fprintf(&b, "\n[mcp_servers.bench%d]\ncommand = %q\n", i, mcpBin)
		if i == mcpServers-1 && mcpSlow > 0 {
			fmt.Fprintf(&b, "args = [\"-delay\", %q]\nstartup_timeout_sec = 60\n", mcpSlow.String())
		}
	}
	return b.String()
}

// configTOML is the config.toml both servers get: Codex's keys, which
// codexd reads too ("Setup that worked" in app-server-observed.md), with
// the mock as the model provider and everything that would reach the
// network turned off.
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
`, sandbox, mockURL)
}

// startServer starts argv as an app-server on stdio, in a scratch
// directory under base: CODEX_HOME, HOME (empty, so that bash -l reads
// only /etc/profile: the same shell start-up for both servers, and none of
// the machine user's dotfiles; with userHome, the user's own), TMPDIR (not
// /tmp's top level, where Codex refuses to put its helpers) and the
// threads' cwd.
func startServer(name string, argv []string, base, mockURL, sandbox string, userHome bool) (*server, error) {
	dir := filepath.Join(base, name)
	s := &server{name: name, dir: dir, cwd: filepath.Join(dir, "work")}
	for _, d := range []string{"codex-home", "home", "tmp", "work"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "codex-home", "config.toml"), []byte(configTOML(mockURL, sandbox)+mcpTables()), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	env := []string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME":
			if userHome {
				break
			}
			continue
		case "CODEX_HOME", "TMPDIR", "OPENAI_API_KEY", "CODEX_EXEC_SERVER_URL":
			continue
		}
		env = append(env, kv)
	}
	if !userHome {
		env = append(env, "HOME="+filepath.Join(dir, "home"))
	}
	cmd.Env = append(env,
		"CODEX_HOME="+filepath.Join(dir, "codex-home"),
		"TMPDIR="+filepath.Join(dir, "tmp"),
		"MOCK_API_KEY=dummy-key")
	cmd.Dir = s.cwd
	cmd.Stderr = &s.log
	if serverLog {
		cmd.Stderr = io.MultiWriter(&s.log, os.Stderr)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s.cmd, s.stdin = cmd, stdin
	s.client = newClient(stdin, stdout)
	return s, nil
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// stop closes the server's stdin (an app-server on stdio exits at EOF),
// then kills its process group if it is still there after 10 s. It
// reports how long the server took to exit and the CPU it used from the
// EOF on (its rusage at exit, which counts the children it waited for), or
// -1 if it was killed.
func (s *server) stop() (wall, cpu time.Duration) {
	wall, cpu = -1, -1
	if s.cmd != nil && s.cmd.Process != nil && s.cmd.ProcessState == nil {
		before := treeCPU(s.pid()).total()
		t0 := time.Now()
		_ = s.stdin.Close()
		done := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(done) }()
		select {
		case <-done:
			wall = time.Since(t0)
			cpu = s.cmd.ProcessState.UserTime() + s.cmd.ProcessState.SystemTime() - before
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
		s.dir = ""
	}
	return wall, cpu
}

// cappedBuffer keeps the first 64 KiB written to it (a server's stderr).
type cappedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := 64<<10 - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}

// procStat is what /proc/PID/stat says of a process's CPU use.
type procStat struct {
	ppid           int
	utime, stime   int64 // clock ticks
	cutime, cstime int64 // of waited-for children, recursively
	comm           string
}

func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	s := string(b)
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || close < open {
		return procStat{}, false
	}
	f := strings.Fields(s[close+1:])
	if len(f) < 15 {
		return procStat{}, false
	}
	n := func(i int) int64 { v, _ := strconv.ParseInt(f[i], 10, 64); return v }
	// f[0] is field 3 (state): ppid is field 4, utime..cstime 14..17.
	return procStat{ppid: int(n(1)), utime: n(11), stime: n(12), cutime: n(13), cstime: n(14), comm: s[open+1 : close]}, true
}

// cpuUse is CPU time used so far by a server: by its own process, and by
// everything it started.
type cpuUse struct{ self, children time.Duration }

func (c cpuUse) total() time.Duration { return c.self + c.children }

func (c cpuUse) sub(d cpuUse) cpuUse { return cpuUse{c.self - d.self, c.children - d.children} }

func (c cpuUse) add(d cpuUse) cpuUse { return cpuUse{c.self + d.self, c.children + d.children} }

// treeCPU is the CPU time used so far by pid and everything it started:
// its own user+system time (self), then that of the children it has waited
// for (cutime+cstime, which include theirs) and that of every descendant
// still alive or not yet waited for (with the children those have waited
// for). A process is counted exactly once whether it has been reaped or
// not, so both figures only grow.
func treeCPU(pid int) cpuUse {
	ents, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	stats := map[int]procStat{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(p); ok {
			stats[p] = st
			children[st.ppid] = append(children[st.ppid], p)
		}
	}
	var self, rest int64
	if st, ok := stats[pid]; ok {
		self = st.utime + st.stime
		rest = st.cutime + st.cstime
	}
	queue := append([]int(nil), children[pid]...)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		st, ok := stats[p]
		if !ok {
			continue
		}
		rest += st.utime + st.stime + st.cutime + st.cstime
		queue = append(queue, children[p]...)
	}
	tick := func(t int64) time.Duration { return time.Duration(t) * time.Second / 100 } // USER_HZ is 100 on Linux
	return cpuUse{self: tick(self), children: tick(rest)}
}

// descendants lists the live processes below pid (pid, comm, VmRSS kB).
type proc struct {
	pid   int
	comm  string
	rssKB int64
}

func descendants(pid int) []proc {
	ents, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	comms := map[int]string{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(p); ok {
			children[st.ppid] = append(children[st.ppid], p)
			comms[p] = st.comm
		}
	}
	var out []proc
	queue := append([]int(nil), children[pid]...)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, proc{pid: p, comm: comms[p], rssKB: procstat.RSSKB(p)})
		queue = append(queue, children[p]...)
	}
	return out
}

func threadsOf(pid int) int64 {
	v, _ := procstat.StatusKB(pid, "Threads")
	return v
}
