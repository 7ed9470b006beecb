//go:build linux

// Command turnbench runs `codex app-server` 0.169 and `codexd app-server`
// side by side, against the same mock Responses model (package mockmodel,
// served by this process), and measures whole agent turns: each turn
// makes three exec_command calls (`echo one`, `true`, `echo three`), one
// per model response, then gets a final answer.
//
// It measures, for both servers in the same run, interleaved:
//   - turn latency, turn/start sent → turn/completed received (p50, p90);
//   - server CPU per turn, the server and every process it started
//     (/proc utime+stime, children included);
//   - the server's RSS after the measured turns;
//   - N threads each running one such turn at once: wall time until the
//     last turn/completed.
//
// It re-executes itself in a new network namespace with only lo, so that
// Codex (and codexd) can reach nothing but 127.0.0.1 (disable with
// -netns=false inside `unshare -n`).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"

	"slices"
	"strings"
	"syscall"
	"time"

	ns "github.com/codexd/codexd/internal/netns"
	"github.com/codexd/codexd/internal/procstat"
	"github.com/codexd/codexd/sandbox"
)

const netnsEnv = "TURNBENCH_NETNS"

type options struct {
	codex, codexd string
	warmup, turns int
	block         int
	threads, reps int
	sandbox       string
	only          string
	codexdProfile string
	codexdMemProf string
	turnTimeout   time.Duration
	keepScratch   bool
	settle        time.Duration
	userHome      bool
}

func main() {
	// The in-process codexd (-codexd-cpuprofile) confines commands by
	// re-executing this binary as its Landlock helper.
	sandbox.RunHelperIfRequested()
	if len(os.Args) > 1 && os.Args[1] == serveFlag {
		os.Exit(serveCodexd(os.Args[2:]))
	}
	var o options
	netns := flag.Bool("netns", true, "run inside a new loopback-only network namespace")
	flag.StringVar(&o.codex, "codex", os.Getenv("CODEX_BIN"), "path of the real `codex` binary (0.169); empty skips it")
	flag.StringVar(&o.codexd, "codexd", "/tmp/x/codexd", "path of the codexd binary")
	flag.IntVar(&o.warmup, "warmup", 10, "turns per server before measuring")
	flag.IntVar(&o.turns, "turns", 100, "measured turns per server, on one thread")
	flag.IntVar(&o.block, "block", 10, "turns in a row on one server before switching to the other")
	flag.IntVar(&o.threads, "threads", 20, "threads running one turn each at once, in the concurrent test")
	flag.IntVar(&o.reps, "reps", 5, "repetitions of the concurrent test (the median is reported; 0 skips it)")
	flag.StringVar(&o.sandbox, "sandbox", "workspace-write", "sandbox_mode of both servers: workspace-write, read-only or danger-full-access")
	flag.StringVar(&o.only, "only", "", "run only this server: codex or codexd")
	flag.StringVar(&o.codexdProfile, "codexd-cpuprofile", "", "serve codexd from this binary (same packages, this tree) and write its CPU profile here")
	flag.StringVar(&o.codexdMemProf, "codexd-memprofile", "", "with -codexd-cpuprofile: write codexd's heap profile here at exit")
	flag.DurationVar(&o.turnTimeout, "turn-timeout", 2*time.Minute, "longest a turn may take")
	flag.DurationVar(&o.settle, "settle", 2*time.Second, "pause after start-up before the idle RSS is read")
	flag.BoolVar(&o.userHome, "user-home", false, "give the servers this user's HOME (its dotfiles run in every login shell) instead of an empty one")
	flag.BoolVar(&o.keepScratch, "keep", false, "keep the scratch directories (CODEX_HOME, rollouts) for inspection")
	flag.BoolVar(&serverLog, "server-log", false, "copy the servers' stderr to this one's")
	flag.StringVar(&mcpBin, "mcp", "", "path of the MCP test server (go build ./mcp/internal/testserver): both servers get -mcp-servers copies of it")
	flag.IntVar(&mcpServers, "mcp-servers", 1, "with -mcp: how many MCP servers to configure")
	flag.DurationVar(&mcpSlow, "mcp-slow", 0, "with -mcp: the last MCP server waits this long before it serves (a slow start)")
	flag.BoolVar(&mcpTurn, "mcp-turn", false, "with -mcp: a turn is one call of bench0's echo tool and an answer, instead of three commands")
	flag.Parse()
	if flag.NArg() > 0 {
		fatalf("unexpected argument %q", flag.Arg(0))
	}
	switch o.sandbox {
	case "workspace-write", "read-only", "danger-full-access":
	default:
		fatalf("-sandbox %q: want workspace-write, read-only or danger-full-access", o.sandbox)
	}
	if o.turns < 1 || o.block < 1 || o.threads < 1 || o.reps < 0 || o.warmup < 0 {
		fatalf("-turns, -block and -threads must be positive, -reps not negative (0 skips the concurrent test)")
	}
	if mcpTurn && mcpBin == "" {
		fatalf("-mcp-turn needs -mcp")
	}
	if err := ns.Isolate(netnsEnv, *netns); err != nil {
		fatalf("%v", err)
	}
	os.Exit(run(o))
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "turnbench: "+format+"\n", args...)
	os.Exit(1)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// side is one server and what was measured of it.
type side struct {
	label string // as printed
	name  string // codex | codexd
	argv  []string
	srv   *server

	version       string
	initialize    time.Duration
	threadStart   time.Duration
	idleRSS       int64 // kB, after initialize and one thread/start
	thread        string
	turnsRun      int
	lat           []time.Duration // measured turns, in order
	blockP50      []time.Duration
	blockCPU      []time.Duration // per turn, per block (server and children)
	cpu           cpuUse          // over the measured turns
	rssAfter      int64           // kB, after warm-up + measured turns
	anonAfter     int64           // kB of it anonymous (RssAnon)
	fileAfter     int64           // kB of it file-backed (RssFile: the binary's pages)
	descAfter     []proc
	threadsAfter  int64
	concWall      []time.Duration
	concCPU       []time.Duration // per turn
	stopWall      time.Duration   // stdin EOF → exit, -1 if killed
	stopCPU       time.Duration
	rssAfterConc  int64
	mockRequests  int64
	serverReqs    int
	startFailures []string
}

func run(o options) int {
	base, err := os.MkdirTemp("", "turnbench-")
	if err != nil {
		fatalf("%v", err)
	}
	if !o.keepScratch {
		defer os.RemoveAll(base)
	} else {
		logf("scratch directories kept in %s", base)
	}
	m, err := startMock()
	if err != nil {
		fatalf("mock model: %v", err)
	}
	defer m.close()

	var sides []*side
	if o.only != "codexd" && o.codex != "" {
		sides = append(sides, &side{label: "Codex 0.169", name: "codex", argv: []string{o.codex, "app-server"}})
	}
	if o.only != "codex" {
		s := &side{label: "codexd", name: "codexd", argv: []string{o.codexd, "app-server"}}
		if o.codexdProfile != "" {
			self, err := os.Executable()
			if err != nil {
				fatalf("%v", err)
			}
			s.argv = []string{self, serveFlag, "-cpuprofile", o.codexdProfile}
			if o.codexdMemProf != "" {
				s.argv = append(s.argv, "-memprofile", o.codexdMemProf)
			}
			s.label = "codexd (in turnbench, profiled)"
		}
		sides = append(sides, s)
	}
	if len(sides) == 0 {
		fatalf("nothing to run")
	}
	for _, s := range sides {
		if out, err := exec.Command(s.argv[0], "--version").Output(); err == nil {
			s.version = strings.TrimSpace(string(out))
		}
	}

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		for _, s := range sides {
			if s.srv != nil {
				s.srv.stop()
			}
		}
		os.RemoveAll(base)
		os.Exit(130)
	}()
	defer func() {
		for _, s := range sides {
			if s.srv != nil {
				s.srv.stop()
			}
		}
	}()

	startLoad := procstat.Loadavg()
	started := time.Now().UTC()
	logf("mock model at %s; sandbox %s; load %s", m.url, o.sandbox, startLoad)
	for _, s := range sides {
		if err := start(s, base, m.url, o); err != nil {
			if s.srv != nil {
				fmt.Fprintf(os.Stderr, "%s stderr:\n%s\n", s.name, s.srv.log.String())
			}
			fatalf("%s: %v", s.name, err)
		}
		logf("%s: pid %d, initialize %v, thread/start %v", s.name, s.srv.pid(), s.initialize.Round(time.Millisecond), s.threadStart.Round(time.Millisecond))
	}
	time.Sleep(o.settle)
	for _, s := range sides {
		s.idleRSS = procstat.RSSKB(s.srv.pid())
	}

	fail := func(s *side, err error) int {
		fmt.Fprintf(os.Stderr, "%s stderr (first 64 KiB):\n%s\n", s.name, s.srv.log.String())
		fatalf("%s: %v", s.name, err)
		return 1
	}

	// Warm-up, then the measured turns, in blocks that alternate the
	// servers (A B, B A, A B, ...), so that a change in the machine's
	// speed falls on both.
	blocks := (o.turns + o.block - 1) / o.block
	for i := 0; i < o.warmup; i++ {
		for _, s := range order(sides, i) {
			if _, err := turn(s, o.turnTimeout); err != nil {
				return fail(s, fmt.Errorf("warm-up turn %d: %w", i+1, err))
			}
		}
	}
	logf("warm-up done (%d turns each); measuring %d turns each in %d blocks", o.warmup, o.turns, blocks)
	for b := 0; b < blocks; b++ {
		n := min(o.block, o.turns-b*o.block)
		for _, s := range order(sides, b) {
			m.renew()
			cpu0 := treeCPU(s.srv.pid())
			var lats []time.Duration
			for i := 0; i < n; i++ {
				d, err := turn(s, o.turnTimeout)
				if err != nil {
					return fail(s, fmt.Errorf("measured turn %d: %w", b*o.block+i+1, err))
				}
				lats = append(lats, d)
			}
			cpu := treeCPU(s.srv.pid()).sub(cpu0)
			s.cpu = s.cpu.add(cpu)
			s.lat = append(s.lat, lats...)
			s.blockP50 = append(s.blockP50, percentile(lats, 50))
			s.blockCPU = append(s.blockCPU, cpu.total()/time.Duration(n))
		}
		var parts []string
		for _, s := range sides {
			parts = append(parts, fmt.Sprintf("%s p50 %v cpu/turn %v", s.name, s.blockP50[b].Round(100*time.Microsecond), s.blockCPU[b].Round(100*time.Microsecond)))
		}
		logf("block %d/%d: %s; load %s", b+1, blocks, strings.Join(parts, ", "), procstat.Loadavg())
	}
	for _, s := range sides {
		s.rssAfter = procstat.RSSKB(s.srv.pid())
		s.anonAfter, _ = procstat.StatusKB(s.srv.pid(), "RssAnon")
		s.fileAfter, _ = procstat.StatusKB(s.srv.pid(), "RssFile")
		s.threadsAfter = threadsOf(s.srv.pid())
		s.descAfter = descendants(s.srv.pid())
	}

	// Concurrent threads: each repetition starts o.threads new threads on
	// each server (not timed), then sends one turn/start to each at once.
	for r := 0; r < o.reps; r++ {
		for _, s := range order(sides, r) {
			m.renew()
			wall, cpu, err := concurrent(s, o.threads, o.turnTimeout)
			if err != nil {
				return fail(s, fmt.Errorf("concurrent test %d: %w", r+1, err))
			}
			s.concWall = append(s.concWall, wall)
			s.concCPU = append(s.concCPU, cpu/time.Duration(o.threads))
		}
		var parts []string
		for _, s := range sides {
			parts = append(parts, fmt.Sprintf("%s %v", s.name, s.concWall[r].Round(time.Millisecond)))
		}
		logf("concurrent %d/%d (%d threads): %s; load %s", r+1, o.reps, o.threads, strings.Join(parts, ", "), procstat.Loadavg())
	}
	for _, s := range sides {
		s.rssAfterConc = procstat.RSSKB(s.srv.pid())
		s.serverReqs = s.srv.client.serverRequests
	}
	// Shutdown: stdin closed, until the process exits.
	for _, s := range sides {
		s.stopWall, s.stopCPU = s.srv.stop()
	}
	report(os.Stdout, o, sides, started, startLoad, procstat.Loadavg(), m.answered())
	return 0
}

// order returns the sides in the order of round i: as given on even
// rounds, reversed on odd ones.
func order(sides []*side, i int) []*side {
	if i%2 == 0 {
		return sides
	}
	out := slices.Clone(sides)
	slices.Reverse(out)
	return out
}

// start starts the server, initializes it and starts the thread the
// sequential turns run on.
func start(s *side, base, mockURL string, o options) error {
	srv, err := startServer(s.name, s.argv, base, mockURL, o.sandbox, o.userHome)
	if err != nil {
		return err
	}
	s.srv = srv
	c := srv.client
	t0 := time.Now()
	if _, err := c.call("initialize", map[string]any{
		"clientInfo":   map[string]any{"name": "turnbench", "title": nil, "version": "0.1.0"},
		"capabilities": nil,
	}, time.Minute); err != nil {
		return err
	}
	s.initialize = time.Since(t0)
	if err := c.notify("initialized", nil); err != nil {
		return err
	}
	t0 = time.Now()
	s.thread, err = threadStart(c, srv.cwd)
	s.threadStart = time.Since(t0)
	return err
}

func threadStart(c *client, cwd string) (string, error) {
	res, err := c.call("thread/start", map[string]any{"cwd": cwd}, time.Minute)
	if err != nil {
		return "", err
	}
	var r struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	if err := jsonUnmarshal(res, &r); err != nil || r.Thread.ID == "" {
		return "", fmt.Errorf("thread/start: no thread id in %.200s", res)
	}
	return r.Thread.ID, nil
}

func turnParams(thread string) map[string]any {
	return map[string]any{
		"threadId": thread,
		"input":    []any{map[string]any{"type": "text", "text": "Run the three commands, then say so.", "text_elements": []any{}}},
	}
}

// turn runs one turn on the side's thread and returns turn/start sent →
// turn/completed received.
func turn(s *side, timeout time.Duration) (time.Duration, error) {
	c := s.srv.client
	ch := c.expectTurn(s.thread)
	t0 := time.Now()
	resp, err := c.send("turn/start", turnParams(s.thread))
	if err != nil {
		return 0, err
	}
	if _, err := c.await("turn/start", resp, timeout); err != nil {
		return 0, err
	}
	r, err := c.waitTurn(ch, timeout)
	if err != nil {
		return 0, err
	}
	if err := r.check(); err != nil {
		return 0, err
	}
	s.turnsRun++
	return r.at.Sub(t0), nil
}

// check refuses a turn that did not do the benchmark's work.
func (r turnResult) check() error {
	if r.status != "completed" {
		return fmt.Errorf("turn %s ended %q: %s", r.turnID, r.status, r.err)
	}
	want := len(commands)
	if mcpTurn {
		want = 1
	}
	if r.commands != want || r.failed != 0 {
		return fmt.Errorf("turn %s: %d commands succeeded and %d failed; want %d and 0", r.turnID, r.commands, r.failed, want)
	}
	return nil
}

// concurrent starts n threads, then one turn on each at once, and returns
// the wall time from the first turn/start to the last turn/completed and
// the server's CPU over that time.
func concurrent(s *side, n int, timeout time.Duration) (time.Duration, time.Duration, error) {
	c := s.srv.client
	threads := make([]string, n)
	for i := range threads {
		id, err := threadStart(c, s.srv.cwd)
		if err != nil {
			return 0, 0, err
		}
		threads[i] = id
	}
	waits := make([]chan turnResult, n)
	resps := make([]chan response, n)
	for i, id := range threads {
		waits[i] = c.expectTurn(id)
	}
	cpu0 := treeCPU(s.srv.pid())
	t0 := time.Now()
	for i, id := range threads {
		r, err := c.send("turn/start", turnParams(id))
		if err != nil {
			return 0, 0, err
		}
		resps[i] = r
	}
	var last time.Time
	for i := range threads {
		if _, err := c.await("turn/start", resps[i], timeout); err != nil {
			return 0, 0, err
		}
		r, err := c.waitTurn(waits[i], timeout)
		if err != nil {
			return 0, 0, err
		}
		if err := r.check(); err != nil {
			return 0, 0, err
		}
		if r.at.After(last) {
			last = r.at
		}
	}
	cpu := treeCPU(s.srv.pid()).sub(cpu0)
	s.turnsRun += n
	return last.Sub(t0), cpu.total(), nil
}
