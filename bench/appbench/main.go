//go:build linux

// Command appbench measures codexd's app-server side by side with Codex's
// own (`codex app-server`, 0.169) in one run: the time from process start
// to the initialize response (with a fresh and with a used CODEX_HOME), RSS
// after initialize and with 1,000 loaded threads, turn/start →
// turn/completed latency on a core that answers at once, and notifications
// per second fanned out to 100 subscribed WebSocket connections.
//
//	go build -o /tmp/codexd ./cmd/codexd
//	cd bench/appbench && go run . -codex $CODEX_BIN -codexd /tmp/codexd
//
// codexd serves its scripted instant core (the hidden --bench-instant-core
// flag), and, in a column of its own, its real core; Codex and codexd's
// real core use a mock Responses API (package mockmodel, in this process)
// that answers at once. Both run with a throwaway CODEX_HOME. The whole run
// happens in a new network namespace with only a loopback interface
// (-netns=false when already inside `unshare -n`). Every executable is
// dropped from the page cache first, so that all are read back from disk
// alike (see evictPageCache).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	ns "github.com/codexd/codexd/internal/netns"
	"github.com/codexd/codexd/mockmodel"
)

const netnsEnv = "APPBENCH_NETNS"

type options struct {
	codex, codexd string
	reps          int
	threads       int
	turns         int
	conns         int
	fanTurns      int
	fanDeltas     int
	only          string
	alone         bool
	real          bool
	evict         bool
}

func main() {
	var o options
	netns := flag.Bool("netns", true, "run inside a new loopback-only network namespace")
	flag.StringVar(&o.codex, "codex", os.Getenv("CODEX_BIN"), "path of the real `codex` binary (0.169); empty skips it")
	flag.StringVar(&o.codexd, "codexd", "/tmp/codexd", "path of the codexd binary")
	flag.IntVar(&o.reps, "reps", 10, "start-ups measured per server and CODEX_HOME kind")
	flag.IntVar(&o.threads, "threads", 1000, "threads loaded for the RSS test")
	flag.IntVar(&o.turns, "turns", 100, "turns timed in the latency test (after 10 warm-up turns)")
	flag.IntVar(&o.conns, "conns", 100, "subscribed connections in the fan-out test")
	flag.IntVar(&o.fanTurns, "fan-turns", 20, "turns streamed to the subscribers in the fan-out test")
	flag.IntVar(&o.fanDeltas, "fan-deltas", 100, "deltas per turn in the fan-out test")
	flag.StringVar(&o.only, "only", "", "run only this server: codex, codexd, real or appserver")
	flag.BoolVar(&o.alone, "alone", true, "also measure the app-server alone (this binary serving it over the instant core, without the real core linked)")
	flag.BoolVar(&o.real, "real", true, "also measure `codexd app-server` with its real core, against the mock model as Codex")
	flag.BoolVar(&o.evict, "evict", true, "drop every server's executable from the page cache before the run (see evictPageCache)")
	serve := flag.Bool("serve-appserver", false, "internal: serve the app-server over the instant core on -listen")
	listen := flag.String("listen", "stdio://", "internal: with -serve-appserver")
	deltas := flag.Int("deltas", 1, "internal: with -serve-appserver, deltas per answer")
	flag.Parse()
	if *serve {
		os.Exit(serveAppServer(*listen, *deltas))
	}
	if err := ns.Isolate(netnsEnv, *netns); err != nil {
		fatalf("%v", err)
	}
	os.Exit(run(o))
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "appbench: "+format+"\n", args...)
	os.Exit(1)
}

// subject is one server under test.
type subject struct {
	name string
	argv func(listen string) []string
}

// figures are one server's results.
type figures struct {
	startFresh, startUsed []time.Duration
	cpuFresh, cpuUsed     []time.Duration
	rssInit, rssThreads   int64
	anonInit              int64
	latency               []time.Duration
	fanRate               float64
	fanNotes              int64
	fanTime               time.Duration
}

func run(o options) int {
	mock := mockmodel.New(mockmodel.Options{Script: &mockmodel.Script{Rules: []mockmodel.Rule{
		{When: mockmodel.Match{UserContains: "FANOUT"}, Respond: mockmodel.Response{Output: []mockmodel.Output{
			{Type: "message", Text: strings.Repeat("word ", o.fanDeltas), Deltas: o.fanDeltas}}}},
		{Respond: mockmodel.Response{Output: []mockmodel.Output{{Type: "message", Text: mockmodel.HelloText, Deltas: 1}}}},
	}}})
	mockURL, err := mock.Start("127.0.0.1:0")
	if err != nil {
		fatalf("mock model: %v", err)
	}
	if !strings.HasSuffix(mockURL, "/v1") {
		mockURL = strings.TrimSuffix(mockURL, "/") + "/v1"
	}
	defer mock.Close()
	var subjects []subject
	if o.codex != "" && o.only != "codexd" {
		subjects = append(subjects, subject{"Codex 0.169", func(listen string) []string {
			a := []string{o.codex, "app-server"}
			if listen != "" {
				a = append(a, "--listen", listen)
			}
			return a
		}})
	}
	if o.only == "" || o.only == "codexd" {
		subjects = append(subjects, subject{"codexd", func(listen string) []string {
			n := "1"
			if listen != "" {
				n = strconv.Itoa(o.fanDeltas)
			}
			a := []string{o.codexd, "app-server", "--bench-instant-core", n}
			if listen != "" {
				a = append(a, "--listen", listen)
			}
			return a
		}})
	}
	if o.real && (o.only == "" || o.only == "real") {
		// The real binary as users run it: the real core, reading the same
		// throwaway CODEX_HOME as Codex, against the same mock model.
		subjects = append(subjects, subject{"codexd, real core", func(listen string) []string {
			a := []string{o.codexd, "app-server"}
			if listen != "" {
				a = append(a, "--listen", listen)
			}
			return a
		}})
	}
	if o.alone && (o.only == "" || o.only == "appserver") {
		dir, err := os.MkdirTemp("", "appbench-exe-")
		if err != nil {
			fatalf("%v", err)
		}
		defer os.RemoveAll(dir)
		exe, err := copyExecutable(dir)
		if err != nil {
			fatalf("%v", err)
		}
		subjects = append(subjects, subject{"app-server alone", func(listen string) []string {
			n := "1"
			if listen != "" {
				n = strconv.Itoa(o.fanDeltas)
			}
			a := []string{exe, "-serve-appserver", "-deltas", n}
			if listen != "" {
				a = append(a, "-listen", listen)
			}
			return a
		}})
	}
	results := make([]*figures, len(subjects))
	for i := range results {
		results[i] = &figures{}
	}
	step := func(what string, f func(s subject, r *figures) error) {
		for i, s := range subjects {
			logf("%s: %s", s.name, what)
			if err := f(s, results[i]); err != nil {
				fatalf("%s: %s: %v", s.name, what, err)
			}
		}
	}
	// Every executable is read back from disk, then started once
	// unmeasured (see evictPageCache).
	if o.evict {
		for _, s := range subjects {
			if err := evictPageCache(s.argv("")[0]); err != nil {
				fatalf("%s: evicting the page cache: %v", s.name, err)
			}
		}
	}
	step("warm-up start", func(s subject, r *figures) error {
		_, err := startup(s, mockURL, "")
		return err
	})
	// Start-ups alternate between the servers, rep by rep, so that a
	// change in the machine's speed falls on both.
	for rep := 0; rep < o.reps; rep++ {
		step(fmt.Sprintf("start-up %d/%d", rep+1, o.reps), func(s subject, r *figures) error {
			st, err := startup(s, mockURL, "")
			r.startFresh = append(r.startFresh, st.wall)
			r.cpuFresh = append(r.cpuFresh, st.cpu)
			if rep == 0 || st.rss < r.rssInit {
				r.rssInit, r.anonInit = st.rss, st.anon
			}
			return err
		})
	}
	homes := make([]string, len(subjects))
	for i, s := range subjects {
		h, err := newHome(mockURL)
		if err != nil {
			fatalf("%v", err)
		}
		defer os.RemoveAll(h)
		homes[i] = h
		if _, err := startup(s, mockURL, h); err != nil { // warm the home
			fatalf("%s: %v", s.name, err)
		}
	}
	for rep := 0; rep < o.reps; rep++ {
		for i, s := range subjects {
			st, err := startup(s, mockURL, homes[i])
			if err != nil {
				fatalf("%s: %v", s.name, err)
			}
			results[i].startUsed = append(results[i].startUsed, st.wall)
			results[i].cpuUsed = append(results[i].cpuUsed, st.cpu)
		}
	}
	step(fmt.Sprintf("RSS with %d threads", o.threads), func(s subject, r *figures) error {
		var err error
		r.rssThreads, err = loadThreads(s, mockURL, o.threads)
		return err
	})
	step(fmt.Sprintf("latency of %d turns", o.turns), func(s subject, r *figures) error {
		var err error
		r.latency, err = turnLatency(s, mockURL, o.turns)
		return err
	})
	step(fmt.Sprintf("fan-out to %d connections", o.conns), func(s subject, r *figures) error {
		var err error
		r.fanNotes, r.fanTime, err = fanout(s, mockURL, o)
		r.fanRate = float64(r.fanNotes) / r.fanTime.Seconds()
		return err
	})
	report(o, subjects, results)
	return 0
}

// startFigures are one start-up's.
type startFigures struct {
	// wall runs from just before exec to the initialize response; cpu is
	// the CPU time the server's threads had used by then, which a loaded
	// machine does not stretch.
	wall, cpu time.Duration
	// rss and anon (KiB) are read once initialized, after a short settle.
	rss, anon int64
}

// startup starts the server over stdio, times process start → initialize
// response, and reads its RSS (and the anonymous part of it) once
// initialized, after a short settle. home "" means a fresh CODEX_HOME.
func startup(s subject, mockURL, home string) (startFigures, error) {
	var f startFigures
	if home == "" {
		h, err := newHome(mockURL)
		if err != nil {
			return f, err
		}
		defer os.RemoveAll(h)
		home = h
	}
	t0 := time.Now()
	srv, err := start(s.name, s.argv(""), home)
	if err != nil {
		return f, err
	}
	defer srv.stop()
	if _, err := srv.call(1, "initialize", initialize); err != nil {
		return f, err
	}
	f.wall = time.Since(t0)
	pid := srv.cmd.Process.Pid
	f.cpu = cpuTime(pid)
	time.Sleep(300 * time.Millisecond) // let start-up work that follows the answer settle
	f.rss, f.anon = groupRSSKiB(pid), groupKiB(pid, "RssAnon:")
	return f, nil
}

// loadThreads starts n threads (32 requests in flight) and reads the RSS.
func loadThreads(s subject, mockURL string, n int) (int64, error) {
	home, err := newHome(mockURL)
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(home)
	srv, err := start(s.name, s.argv(""), home)
	if err != nil {
		return 0, err
	}
	defer srv.stop()
	if _, err := srv.call(1, "initialize", initialize); err != nil {
		return 0, err
	}
	sent, done := 0, 0
	for done < n {
		for sent < n && sent-done < 32 {
			if err := srv.send(fmt.Sprintf(`{"method":"thread/start","id":%d,"params":{"ephemeral":true}}`, 100+sent)); err != nil {
				return 0, err
			}
			sent++
		}
		m, err := srv.read()
		if err != nil {
			return 0, err
		}
		if m.Method == "" {
			if m.Error != nil {
				return 0, fmt.Errorf("thread/start: %s", m.Error)
			}
			done++
		}
	}
	time.Sleep(500 * time.Millisecond)
	return groupRSSKiB(srv.cmd.Process.Pid), nil
}

// turnLatency times turn/start → turn/completed, one turn after another.
func turnLatency(s subject, mockURL string, turns int) ([]time.Duration, error) {
	home, err := newHome(mockURL)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(home)
	srv, err := start(s.name, s.argv(""), home)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	if _, err := srv.call(1, "initialize", initialize); err != nil {
		return nil, err
	}
	res, err := srv.call(2, "thread/start", `{}`)
	if err != nil {
		return nil, err
	}
	var ts struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	if err := json.Unmarshal(res, &ts); err != nil {
		return nil, err
	}
	var out []time.Duration
	for i := 0; i < 10+turns; i++ {
		t0 := time.Now()
		if err := srv.send(fmt.Sprintf(`{"method":"turn/start","id":%d,"params":{"threadId":%q,"input":[{"type":"text","text":"hi","text_elements":[]}]}}`, 10+i, ts.Thread.ID)); err != nil {
			return nil, err
		}
		if _, err := srv.until(isNote("turn/completed")); err != nil {
			return nil, err
		}
		if i >= 10 {
			out = append(out, time.Since(t0))
		}
	}
	return out, nil
}

// fanout streams turns to conns subscribed WebSocket connections and
// counts the notifications they receive per second.
func fanout(s subject, mockURL string, o options) (int64, time.Duration, error) {
	home, err := newHome(mockURL)
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(home)
	port, err := freePort()
	if err != nil {
		return 0, 0, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	srv, err := start(s.name, s.argv("ws://"+addr), home)
	if err != nil {
		return 0, 0, err
	}
	defer srv.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := waitListening(ctx, addr); err != nil {
		return 0, 0, err
	}
	conns := make([]*wsConn, o.conns)
	for i := range conns {
		c, err := dialWS(ctx, "ws://"+addr)
		if err != nil {
			return 0, 0, err
		}
		defer c.close()
		if _, err := c.call(ctx, "initialize", initialize); err != nil {
			return 0, 0, err
		}
		c.debug = i == 1 && os.Getenv("APPBENCH_DEBUG") != ""
		conns[i] = c
	}
	res, err := conns[0].call(ctx, "thread/start", `{}`)
	if err != nil {
		return 0, 0, err
	}
	var ts struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	if err := json.Unmarshal(res, &ts); err != nil {
		return 0, 0, err
	}
	turn := fmt.Sprintf(`{"threadId":%q,"input":[{"type":"text","text":"FANOUT","text_elements":[]}]}`, ts.Thread.ID)
	// A first turn makes the thread resumable (Codex refuses to resume a
	// thread with no user message yet).
	if _, err := conns[0].call(ctx, "turn/start", turn); err != nil {
		return 0, 0, err
	}
	if err := conns[0].waitCompleted(ctx, 1); err != nil {
		return 0, 0, err
	}
	for _, c := range conns[1:] {
		if _, err := c.call(ctx, "thread/resume", fmt.Sprintf(`{"threadId":%q,"excludeTurns":true}`, ts.Thread.ID)); err != nil {
			return 0, 0, err
		}
	}
	base := make([]int64, len(conns))
	baseDone := make([]int, len(conns))
	for i, c := range conns {
		base[i] = c.count()
		c.mu.Lock()
		baseDone[i] = c.completed
		c.mu.Unlock()
	}
	t0 := time.Now()
	for k := 1; k <= o.fanTurns; k++ {
		if _, err := conns[0].call(ctx, "turn/start", turn); err != nil {
			return 0, 0, err
		}
		if err := conns[0].waitCompleted(ctx, baseDone[0]+k); err != nil {
			return 0, 0, err
		}
	}
	for i, c := range conns {
		if err := c.waitCompleted(ctx, baseDone[i]+o.fanTurns); err != nil {
			return 0, 0, fmt.Errorf("connection %d: %w", i, err)
		}
	}
	elapsed := time.Since(t0)
	var total int64
	for i, c := range conns {
		total += c.count() - base[i]
	}
	return total, elapsed, nil
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func pct(ds []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	return s[int(float64(len(s)-1)*p)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

func report(o options, subjects []subject, r []*figures) {
	fmt.Printf("\nappbench, %s, %d start-ups per kind, %d threads, %d turns, %d connections × %d turns × %d deltas\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), o.reps, o.threads, o.turns, o.conns, o.fanTurns, o.fanDeltas)
	header := "| metric |"
	sep := "| --- |"
	for _, s := range subjects {
		header += " " + s.name + " |"
		sep += " ---: |"
	}
	ratios := len(subjects) > 1 && strings.HasPrefix(subjects[0].name, "Codex")
	if ratios {
		for _, s := range subjects[1:] {
			header += " " + s.name + " / Codex |"
			sep += " ---: |"
		}
		header += " goal |"
		sep += " --- |"
	}
	fmt.Println(header)
	fmt.Println(sep)
	row := func(name string, goal string, lowerBetter bool, vals ...float64) {
		line := "| " + name + " |"
		for _, v := range vals {
			line += fmt.Sprintf(" %.2f |", v)
		}
		if ratios && vals[0] > 0 {
			for _, v := range vals[1:] {
				line += fmt.Sprintf(" %.3f |", v/vals[0])
			}
			line += " " + goal + " |"
		}
		fmt.Println(line)
	}
	get := func(f func(*figures) float64) []float64 {
		var out []float64
		for _, x := range r {
			out = append(out, f(x))
		}
		return out
	}
	msf := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	row("start → initialize answer, fresh CODEX_HOME, median (ms)", "≤ 0.2×", true, get(func(x *figures) float64 { return msf(median(x.startFresh)) })...)
	row("start → initialize answer, used CODEX_HOME, median (ms)", "≤ 0.2×", true, get(func(x *figures) float64 { return msf(median(x.startUsed)) })...)
	row("CPU time to the initialize answer, fresh CODEX_HOME, median (ms)", "", true, get(func(x *figures) float64 { return msf(median(x.cpuFresh)) })...)
	row("CPU time to the initialize answer, used CODEX_HOME, median (ms)", "", true, get(func(x *figures) float64 { return msf(median(x.cpuUsed)) })...)
	row("RSS after initialize (MiB)", "≤ 0.3×", true, get(func(x *figures) float64 { return float64(x.rssInit) / 1024 })...)
	row("  of which anonymous (MiB)", "", true, get(func(x *figures) float64 { return float64(x.anonInit) / 1024 })...)
	row(fmt.Sprintf("RSS with %d loaded threads (MiB)", o.threads), "≤ 0.3×", true, get(func(x *figures) float64 { return float64(x.rssThreads) / 1024 })...)
	row("turn/start → turn/completed, median (ms)", "", true, get(func(x *figures) float64 { return msf(median(x.latency)) })...)
	row("turn/start → turn/completed, p90 (ms)", "", true, get(func(x *figures) float64 { return msf(pct(x.latency, 0.9)) })...)
	row(fmt.Sprintf("notifications/s to %d connections", o.conns), "", false, get(func(x *figures) float64 { return x.fanRate })...)
	for i, s := range subjects {
		fmt.Printf("\n%s: fan-out %d notifications in %s\n", s.name, r[i].fanNotes, r[i].fanTime.Round(time.Millisecond))
	}
}
