//go:build linux

// Command execbench measures codexd's exec-server side by side with Codex's
// own (`codex exec-server`, 0.169) in one run: process latency, 200
// concurrent processes, output throughput, server memory idle and under
// load, and the server's memory while a client stops reading.
//
//	go run ./bench/execbench -codex $CODEX_BIN -codexd /tmp/codexd
//
// It runs itself again inside a new network namespace that has only a
// loopback interface, so that both servers and the client share 127.0.0.1
// and nothing else (disable with -netns=false).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/codexd/codexd/execserver"
	"github.com/codexd/codexd/execserver/procs"
	ns "github.com/codexd/codexd/internal/netns"
	"github.com/codexd/codexd/internal/procstat"
	"github.com/codexd/codexd/jsonrpc"
)

const netnsEnv = "EXECBENCH_NETNS"

type options struct {
	codex, codexd  string
	latencyRuns    int
	reps           int
	pacedRuns      int
	scaleProcs     int
	throughput     int64
	bpBytes        int64
	bpDuration     time.Duration
	bpLimitMiB     int64
	only           string
	codexdProfile  string
	serveInProcess bool
	profileOut     string
	serveChunk     int
	memProfile     string
}

func main() {
	var o options
	netns := flag.Bool("netns", true, "run inside a new loopback-only network namespace")
	flag.StringVar(&o.codex, "codex", os.Getenv("CODEX_BIN"), "path of the real `codex` binary (0.169); empty skips it")
	flag.StringVar(&o.codexd, "codexd", "/tmp/codexd", "path of the codexd binary")
	flag.IntVar(&o.latencyRuns, "n", 200, "process/start → process/closed runs of `true`")
	flag.IntVar(&o.pacedRuns, "paced", 100, "runs of `true` paced 50 ms apart")
	flag.IntVar(&o.reps, "reps", 3, "repetitions of the throughput test (the median rate is reported)")
	flag.IntVar(&o.scaleProcs, "procs", 200, "concurrent processes in the scale test")
	flag.Int64Var(&o.throughput, "bytes", 256<<20, "bytes streamed in the throughput test")
	flag.Int64Var(&o.bpBytes, "bp-bytes", 1<<30, "bytes the process writes to the stalled client")
	flag.DurationVar(&o.bpDuration, "bp-duration", 10*time.Second, "how long to watch the server while its client is stalled")
	flag.Int64Var(&o.bpLimitMiB, "bp-limit", 3072, "kill a server whose RSS passes this many MiB in the backpressure test")
	flag.StringVar(&o.only, "only", "", "run only this server: codex or codexd")
	flag.StringVar(&o.codexdProfile, "codexd-cpuprofile", "", "serve codexd in this binary (same packages, this tree) and write its CPU profile here")
	flag.BoolVar(&o.serveInProcess, "serve", false, "internal: serve codexd's exec-server in this process")
	flag.StringVar(&o.profileOut, "serve-cpuprofile", "", "internal: CPU profile of -serve")
	flag.IntVar(&o.serveChunk, "codexd-chunk", 0, "with -codexd-cpuprofile: codexd's pipe read size (procs.Config.ChunkSize; 0 = its default)")
	flag.StringVar(&o.memProfile, "codexd-memprofile", "", "with -codexd-cpuprofile: also write codexd's heap profile (allocations included) here at exit")
	flag.BoolVar(&serverLog, "server-log", false, "copy the servers' stderr to this one's")
	readFileMiB := flag.Int64("readfile-mib", 0, "instead of the comparison, measure codexd's peak RSS for one fs/readFile of a file this large (MiB)")
	flag.Parse()

	if o.serveInProcess {
		os.Exit(serve(o.profileOut, o.memProfile, o.serveChunk))
	}
	if err := ns.Isolate(netnsEnv, *netns); err != nil {
		fatalf("%v", err)
	}
	if *readFileMiB > 0 {
		os.Exit(readFilePeak(o, *readFileMiB))
	}
	os.Exit(run(o))
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "execbench: "+format+"\n", args...)
	os.Exit(1)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
}

// serve is codexd's exec-server, in this process, for profiling.
func serve(profile, memProfile string, chunk int) int {
	if memProfile != "" {
		runtime.MemProfileRate = 64 << 10
		defer func() {
			f, err := os.Create(memProfile)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return
			}
			defer f.Close()
			_ = pprof.Lookup("allocs").WriteTo(f, 0)
		}()
	}
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	addr, _ := jsonrpc.ParseListenURL("ws://127.0.0.1:0")
	if err := execserver.Run(ctx, execserver.Config{Procs: procs.Config{ChunkSize: chunk}}, addr, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func run(o options) int {
	ctx := context.Background()
	load0 := procstat.Loadavg()
	type target struct {
		name string
		argv []string
	}
	var targets []target
	if o.codex != "" && o.only != "codexd" {
		targets = append(targets, target{"Codex 0.169", []string{o.codex, "exec-server", "--listen", "ws://127.0.0.1:0"}})
	}
	if o.only != "codex" {
		argv := []string{o.codexd, "exec-server", "--listen", "ws://127.0.0.1:0"}
		if o.codexdProfile != "" {
			self, err := os.Executable()
			if err != nil {
				fatalf("%v", err)
			}
			argv = []string{self, "-serve", "-serve-cpuprofile", o.codexdProfile, "-codexd-chunk", fmt.Sprint(o.serveChunk),
				"-codexd-memprofile", o.memProfile}
		}
		targets = append(targets, target{"codexd", argv})
	}
	// Each server is started, measured idle and for latency; then the
	// throughput repetitions of all servers alternate (rep 1 of each, then
	// rep 2, in rotating order), so that a change in the machine's speed
	// over the run (other tenants of a shared VM) spreads over all of them
	// rather than skewing one; then each gets the scale and stalled-client
	// tests.
	var results []*result
	var servers []*server
	defer func() {
		for _, srv := range servers {
			srv.stop()
		}
	}()
	for _, t := range targets {
		logf("== %s: %s", t.name, strings.Join(t.argv, " "))
		r, srv, err := benchStart(ctx, o, t.name, t.argv)
		if err != nil {
			fmt.Fprintf(os.Stderr, "execbench: %s: %v\n", t.name, err)
			return 1
		}
		results = append(results, r)
		servers = append(servers, srv)
	}
	for i, r := range results {
		r.tputBaseRSS = procstat.RSSKB(servers[i].pid())
	}
	for rep := range o.reps {
		for k := range results {
			i := (rep + k) % len(results)
			if err := benchThroughputRep(ctx, o, results[i], servers[i], rep); err != nil {
				fmt.Fprintf(os.Stderr, "execbench: %s: %v\n", results[i].name, err)
				return 1
			}
		}
	}
	for i, r := range results {
		sort.Float64s(r.tputRates)
		r.tputMBs = r.tputRates[len(r.tputRates)/2]
		if err := benchScale(ctx, o, r, servers[i]); err != nil {
			fmt.Fprintf(os.Stderr, "execbench: %s: %v\n", r.name, err)
			return 1
		}
		if err := benchBackpressure(ctx, o, r, servers[i]); err != nil {
			fmt.Fprintf(os.Stderr, "execbench: %s: %v\n", r.name, err)
			return 1
		}
	}
	printReport(o, results, load0, procstat.Loadavg())
	return 0
}

// result holds one server's figures.
type result struct {
	name    string
	version string

	startupRSS, idleRSS int64 // kB

	latencies          []time.Duration
	latMed, latP90     time.Duration
	pacedMed, pacedP90 time.Duration

	scaleProcs int
	scaleWall  time.Duration

	tputMBs       float64   // median over the repetitions
	tputRates     []float64 // MB/s, per repetition
	tputDelivered []int64   // bytes delivered, per repetition
	tputWall      time.Duration
	tputCPU       time.Duration // summed over the repetitions
	tputClientCPU time.Duration // summed over the repetitions
	tputBaseRSS   int64
	tputChunks    int64 // process/output notifications, summed
	tputPeakRSS   int64

	bpBaseRSS, bpMaxRSS, bpEndRSS int64
	bpWrote                       int64 // bytes the writer had written when watching stopped
	bpKilled                      bool
	bpOtherMed                    time.Duration // latency of `true` on another connection meanwhile
	bpSamples                     []int64
}

// benchStart starts a server and measures it idle and for latency; the
// server is left running for the other tests.
func benchStart(ctx context.Context, o options, name string, argv []string) (*result, *server, error) {
	r := &result{name: name}
	r.version = versionOf(argv[0])
	srv, err := startServer(ctx, name, argv)
	if err != nil {
		return nil, nil, err
	}
	pid := srv.pid()
	r.startupRSS = procstat.RSSKB(pid)
	logf("%s listening on %s (pid %d), RSS at start %d kB", name, srv.url, pid, r.startupRSS)

	// Idle: after one handshake, on a connection that stays open.
	sctx, cancel := context.WithTimeout(ctx, drainTimeout)
	c, err := dial(sctx, srv.url, true)
	cancel()
	if err != nil {
		srv.stop()
		return nil, nil, fmt.Errorf("dial: %w", err)
	}
	r.idleRSS = procstat.RSSKB(pid)
	err = benchLatency(ctx, o, r, c)
	c.close()
	if err != nil {
		srv.stop()
		return nil, nil, err
	}
	return r, srv, nil
}

// benchLatency times process/start → process/closed of /bin/true, one at a
// time on one connection, after 20 runs to warm up: back to back, then
// paced 50 ms apart.
//
// Back to back, a server that leaves Nagle's algorithm on (Codex does not
// set TCP_NODELAY) holds its last small notification until the client's
// delayed ACK, about 40 ms; paced, the client's kernel is back in quick-ACK
// mode and that wait mostly goes away. Both figures are reported.
func benchLatency(ctx context.Context, o options, r *result, c *client) error {
	if err := latencyRuns(ctx, o.latencyRuns, 0, "lat", c, &r.latencies); err != nil {
		return err
	}
	r.latMed, r.latP90 = percentile(r.latencies, 50), percentile(r.latencies, 90)
	logf("%s latency: median %v p90 %v over %d runs", r.name, r.latMed, r.latP90, len(r.latencies))
	var paced []time.Duration
	if err := latencyRuns(ctx, o.pacedRuns, 50*time.Millisecond, "paced", c, &paced); err != nil {
		return err
	}
	r.pacedMed, r.pacedP90 = percentile(paced, 50), percentile(paced, 90)
	logf("%s latency paced 50 ms apart: median %v p90 %v over %d runs", r.name, r.pacedMed, r.pacedP90, len(paced))
	return nil
}

func latencyRuns(ctx context.Context, n int, pace time.Duration, prefix string, c *client, out *[]time.Duration) error {
	for i := range n + 20 {
		if pace > 0 {
			<-time.After(pace)
		}
		sctx, cancel := context.WithTimeout(ctx, drainTimeout)
		t0 := time.Now()
		p, ch, err := c.startProcess(sctx, fmt.Sprintf("%s-%d", prefix, i), []string{"/bin/true"}, false)
		if err == nil {
			err = c.wait(sctx, p)
		}
		d := time.Since(t0)
		if err == nil {
			if resp := <-ch; resp.Error != nil {
				err = fmt.Errorf("process/start: %s", resp.Error.Message)
			}
		}
		cancel()
		if err != nil {
			return fmt.Errorf("latency run %d: %w", i, err)
		}
		if p.exitCode != 0 {
			return fmt.Errorf("latency run %d: exit code %d", i, p.exitCode)
		}
		if i >= 20 {
			*out = append(*out, d)
		}
	}
	return nil
}

// benchThroughputRep has one process write o.throughput bytes to stdout,
// to arrive as process/output on a fresh connection. The caller runs it
// o.reps times per server and keeps the median rate; the peak RSS is the
// highest over every repetition.
func benchThroughputRep(ctx context.Context, o options, r *result, srv *server, rep int) error {
	pid := srv.pid()
	sctx, cancel := context.WithTimeout(ctx, drainTimeout)
	c, err := dial(sctx, srv.url, true)
	if err != nil {
		cancel()
		return err
	}
	resetPeak(pid)
	sm := sampleRSS(pid, 10*time.Millisecond, 0, nil)
	cpu0, self0 := cpuTime(pid), selfCPU()
	t0 := time.Now()
	p, _, err := c.startProcess(sctx, fmt.Sprintf("tput-%d", rep),
		[]string{"/usr/bin/head", "-c", fmt.Sprint(o.throughput), "/dev/zero"}, false)
	if err == nil {
		err = c.wait(sctx, p)
	}
	wall := time.Since(t0)
	cpu, clientCPU := cpuTime(pid)-cpu0, selfCPU()-self0
	peak := sm.stop()
	if hwm, err := procstat.StatusKB(pid, "VmHWM"); err == nil && hwm > peak {
		peak = hwm
	}
	cancel()
	c.close()
	if err != nil {
		return fmt.Errorf("throughput: %w", err)
	}
	rate := mbps(p.bytes, wall)
	r.tputRates = append(r.tputRates, rate)
	r.tputPeakRSS = max(r.tputPeakRSS, peak)
	r.tputDelivered = append(r.tputDelivered, p.bytes)
	r.tputChunks += p.chunks
	r.tputCPU += cpu
	r.tputClientCPU += clientCPU
	r.tputWall += wall
	if p.bytes != o.throughput {
		// Not fatal: the report shows how much was lost.
		logf("%s throughput: LOST OUTPUT: got %d bytes of %d; %d seqs never notified",
			r.name, p.bytes, o.throughput, p.skipped)
	}
	logf("%s throughput %d/%d: %d bytes in %v = %.1f MB/s, server CPU %v, client CPU %v, peak RSS %d kB",
		r.name, rep+1, o.reps, p.bytes, wall, rate, cpu, clientCPU, peak)
	return nil
}

// benchScale starts o.scaleProcs processes at once on one connection, each
// printing its own line and living 100 ms, and measures the wall time until
// every one is closed with its output collected.
func benchScale(ctx context.Context, o options, r *result, srv *server) error {
	sctx, cancel := context.WithTimeout(ctx, drainTimeout)
	defer cancel()
	c, err := dial(sctx, srv.url, true)
	if err != nil {
		return err
	}
	defer c.close()
	r.scaleProcs = o.scaleProcs
	procs := make([]*procState, o.scaleProcs)
	chans := make([]chan response, o.scaleProcs)
	t0 := time.Now()
	for i := range procs {
		procs[i], chans[i], err = c.startProcess(sctx, fmt.Sprintf("scale-%d", i),
			[]string{"/bin/sh", "-c", "echo out-$0; sleep 0.1", fmt.Sprint(i)}, true)
		if err != nil {
			return err
		}
	}
	for i, p := range procs {
		if err := c.wait(sctx, p); err != nil {
			return fmt.Errorf("scale process %d: %w", i, err)
		}
	}
	r.scaleWall = time.Since(t0)
	for i, p := range procs {
		if resp := <-chans[i]; resp.Error != nil {
			return fmt.Errorf("scale process %d: start: %s", i, resp.Error.Message)
		}
		if got, want := p.out.String(), fmt.Sprintf("out-%d\n", i); got != want {
			return fmt.Errorf("scale process %d printed %q, want %q", i, got, want)
		}
	}
	logf("%s scale: %d processes in %v", r.name, o.scaleProcs, r.scaleWall)
	return nil
}

// benchBackpressure has a client start a process that writes o.bpBytes and
// then never read its WebSocket again. It watches the server's RSS for
// o.bpDuration, and meanwhile checks that another client is still served.
func benchBackpressure(ctx context.Context, o options, r *result, srv *server) error {
	pid := srv.pid()
	r.bpBaseRSS = procstat.RSSKB(pid)
	sctx, cancel := context.WithTimeout(ctx, drainTimeout)
	defer cancel()
	stalled, err := dial(sctx, srv.url, false)
	if err != nil {
		return err
	}
	defer stalled.close()
	b, _ := json.Marshal(map[string]any{"id": 1, "method": "process/start",
		"params": startParams("bp", []string{"/usr/bin/head", "-c", fmt.Sprint(o.bpBytes), "/dev/zero"})})
	if err := stalled.send(sctx, string(b)); err != nil {
		return err
	}
	sm := sampleRSS(pid, 50*time.Millisecond, o.bpLimitMiB<<10, func() {
		r.bpKilled = true
		logf("%s passed %d MiB in the backpressure test: killing it", r.name, o.bpLimitMiB)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	})
	deadline := time.Now().Add(o.bpDuration)
	var other []time.Duration
	if oc, err := dial(sctx, srv.url, true); err == nil {
		for i := 0; time.Now().Before(deadline); i++ {
			t0 := time.Now()
			p, _, err := oc.startProcess(sctx, fmt.Sprintf("other-%d", i), []string{"/bin/true"}, false)
			if err == nil {
				err = oc.wait(sctx, p)
			}
			if err != nil {
				break
			}
			other = append(other, time.Since(t0))
			// Pace the other client, so that the watch is mostly of the
			// stalled one.
			<-time.After(50 * time.Millisecond)
		}
		oc.close()
	}
	if d := time.Until(deadline); d > 0 {
		<-time.After(d)
	}
	// The writer is still there if the server held it back; if it is gone,
	// it wrote everything.
	r.bpWrote = o.bpBytes
	for _, d := range descendants(pid) {
		if commOf(d) == "head" {
			r.bpWrote = wcharOf(d)
		}
	}
	r.bpMaxRSS = sm.stop()
	r.bpSamples = sm.trace
	r.bpEndRSS = procstat.RSSKB(pid)
	r.bpOtherMed = percentile(other, 50)
	logf("%s backpressure: RSS before %d kB, max %d kB, at end %d kB; writer had written %d bytes; other client's `true` median %v (%d runs)",
		r.name, r.bpBaseRSS, r.bpMaxRSS, r.bpEndRSS, r.bpWrote, r.bpOtherMed, len(other))
	return nil
}

// versionOf asks the binary for --version; for a Go binary that has none
// (codexd), it reports the VCS stamp `go version -m` finds in it.
func versionOf(bin string) string {
	if out, err := exec.Command(bin, "--version").Output(); err == nil && len(out) > 0 {
		return strings.TrimSpace(string(out))
	}
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		return "unknown"
	}
	var rev, modified, gov string
	for i, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case i == 0 && len(f) > 1:
			gov = f[1]
		case len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision="):
			rev = strings.TrimPrefix(f[1], "vcs.revision=")
		case len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.modified="):
			modified = strings.TrimPrefix(f[1], "vcs.modified=")
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v := "built with " + gov
	if rev != "" {
		v += ", commit " + rev
		if modified == "true" {
			v += " plus uncommitted changes"
		}
	}
	return v
}

func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s)*p + 99) / 100
	if i > 0 {
		i--
	}
	return s[i]
}

func mbps(n int64, d time.Duration) float64 { return float64(n) / 1e6 / d.Seconds() }

func sumBytes(ns []int64) float64 {
	var t float64
	for _, n := range ns {
		t += float64(n)
	}
	return t
}

func meanMiB(ns []int64) float64 {
	if len(ns) == 0 {
		return 0
	}
	return sumBytes(ns) / float64(len(ns)) / (1 << 20)
}

func printReport(o options, rs []*result, load0, load1 string) {
	host, _ := os.Hostname()
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	fmt.Printf("execbench — %s, %s, nproc %d, kernel %s, %s\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"),
		host, runtime.NumCPU(), strings.TrimSpace(string(kernel)), runtime.Version())
	for _, r := range rs {
		fmt.Printf("- %s: %s\n", r.name, r.version)
	}
	fmt.Printf("- load average (1, 5, 15 min) at start: %s; at end: %s\n", load0, load1)
	fmt.Println()
	var codex, codexd *result
	for _, r := range rs {
		if r.name == "codexd" {
			codexd = r
		} else {
			codex = r
		}
	}
	type row struct {
		metric       string
		get          func(*result) float64
		format       string
		goal         string
		goalRatio    float64 // codexd/Codex must be ≤ this (or ≥ with higher)
		higherIsGood bool
		// holds, when set, judges codexd's own figure instead of the ratio.
		holds func(codexd float64) bool
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	mib := func(kb int64) float64 { return float64(kb) / 1024 }
	rows := []row{
		{metric: fmt.Sprintf("latency `true`, start→closed, median (ms, n=%d)", o.latencyRuns), get: func(r *result) float64 { return ms(r.latMed) }, format: "%.2f", goal: "≤ 0.5×", goalRatio: 0.5},
		{metric: "latency `true`, p90 (ms)", get: func(r *result) float64 { return ms(r.latP90) }, format: "%.2f", goal: "≤ 0.5×", goalRatio: 0.5},
		{metric: fmt.Sprintf("latency `true`, paced 50 ms apart, median (ms, n=%d)", o.pacedRuns), get: func(r *result) float64 { return ms(r.pacedMed) }, format: "%.2f", goal: "≤ 0.5×", goalRatio: 0.5},
		{metric: "latency `true`, paced, p90 (ms)", get: func(r *result) float64 { return ms(r.pacedP90) }, format: "%.2f", goal: "≤ 0.5×", goalRatio: 0.5},
		{metric: fmt.Sprintf("%d concurrent processes, wall (ms)", o.scaleProcs), get: func(r *result) float64 { return ms(r.scaleWall) }, format: "%.0f"},
		{metric: fmt.Sprintf("throughput, %d MiB written, delivered bytes via process/output (MB/s, median of %d)", o.throughput>>20, o.reps), get: func(r *result) float64 { return r.tputMBs }, format: "%.1f", goal: "≥ 2×", goalRatio: 2, higherIsGood: true},
		{metric: "output delivered, mean of the repetitions (MiB)", get: func(r *result) float64 { return meanMiB(r.tputDelivered) }, format: "%.1f"},
		{metric: "mean process/output chunk (KiB)", get: func(r *result) float64 { return sumBytes(r.tputDelivered) / float64(max(r.tputChunks, 1)) / 1024 }, format: "%.1f"},
		{metric: "server CPU per GiB delivered (s)", get: func(r *result) float64 { return r.tputCPU.Seconds() / (sumBytes(r.tputDelivered) / (1 << 30)) }, format: "%.2f"},
		{metric: "bench client CPU per GiB delivered (s)", get: func(r *result) float64 { return r.tputClientCPU.Seconds() / (sumBytes(r.tputDelivered) / (1 << 30)) }, format: "%.2f"},
		{metric: "idle RSS, at start (MiB)", get: func(r *result) float64 { return mib(r.startupRSS) }, format: "%.1f"},
		{metric: "idle RSS, one client connected (MiB)", get: func(r *result) float64 { return mib(r.idleRSS) }, format: "%.1f", goal: "≤ 0.5×", goalRatio: 0.5},
		{metric: "RSS before the throughput test (MiB)", get: func(r *result) float64 { return mib(r.tputBaseRSS) }, format: "%.1f"},
		{metric: "peak RSS during throughput (MiB)", get: func(r *result) float64 { return mib(r.tputPeakRSS) }, format: "%.1f", goal: "≤ 0.5×", goalRatio: 0.5},
		{metric: "RSS before the stalled client (MiB)", get: func(r *result) float64 { return mib(r.bpBaseRSS) }, format: "%.1f"},
		{metric: fmt.Sprintf("max RSS, client stalled, writer of %d MiB, %v (MiB)", o.bpBytes>>20, o.bpDuration), get: func(r *result) float64 { return mib(r.bpMaxRSS) }, format: "%.1f"},
		{metric: "RSS growth while the client stalled (MiB)", get: func(r *result) float64 { return mib(r.bpMaxRSS - r.bpBaseRSS) }, format: "%.1f",
			goal: fmt.Sprintf("bounded: ≤ %d MiB", maxStallGrowthMiB), holds: func(v float64) bool { return v <= maxStallGrowthMiB }},
		{metric: "bytes the writer got out while the client stalled (MiB)", get: func(r *result) float64 { return float64(r.bpWrote) / (1 << 20) }, format: "%.1f"},
		{metric: "another client's `true` meanwhile, median (ms)", get: func(r *result) float64 { return ms(r.bpOtherMed) }, format: "%.2f"},
	}
	fmt.Println("| metric | Codex 0.169 | codexd | codexd / Codex | goal | met |")
	fmt.Println("| --- | ---: | ---: | ---: | --- | --- |")
	for _, rw := range rows {
		cell := func(r *result) string {
			if r == nil {
				return "—"
			}
			return fmt.Sprintf(rw.format, rw.get(r))
		}
		ratio, met := "—", ""
		if rw.holds != nil && codexd != nil {
			met = map[bool]string{true: "yes", false: "**no**"}[rw.holds(rw.get(codexd))]
		}
		if codex != nil && codexd != nil && rw.get(codex) != 0 {
			q := rw.get(codexd) / rw.get(codex)
			ratio = fmt.Sprintf("%.2f", q)
			if rw.goal != "" && rw.holds == nil {
				ok := q <= rw.goalRatio
				if rw.higherIsGood {
					ok = q >= rw.goalRatio
				}
				met = map[bool]string{true: "yes", false: "**no**"}[ok]
			}
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s |\n", rw.metric, cell(codex), cell(codexd), ratio, rw.goal, met)
	}
	for _, r := range rs {
		if r.bpKilled {
			fmt.Printf("\n%s was killed when its RSS passed %d MiB in the backpressure test.\n", r.name, o.bpLimitMiB)
		}
	}
	fmt.Println()
	for _, r := range rs {
		fmt.Printf("%s RSS while its client stalled (MiB, every 50 ms, every 20th sample): %s\n", r.name, sparse(r.bpSamples, 20))
	}
}

// maxStallGrowthMiB is how much a server's RSS may grow while its client
// stalls and a process writes a GiB to it: the issue asks for memory that
// does not grow without bound; 16 MiB is the ring, the outbound queue and
// the socket buffers with room to spare, and 1.6 % of what is written.
const maxStallGrowthMiB = 16

func sparse(kb []int64, every int) string {
	var parts []string
	for i := 0; i < len(kb); i += every {
		parts = append(parts, fmt.Sprintf("%.0f", float64(kb[i])/1024))
	}
	return strings.Join(parts, " ")
}
