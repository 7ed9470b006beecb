// Command fleetbench runs issue 18's fleet through real processes: one
// `codexd app-server` (over stdio) drives N threads (default 20) spread
// over M separate `codexd exec-server` processes (default 4), each on its
// own loopback port with its own --root; every turn runs three commands
// (the mock model asks for them one at a time). It measures throughput
// and per-turn latency against the same threads on `local` (the
// app-server's in-process exec-server), then a fault run: one exec-server
// is SIGKILLed mid-run and started again on its port after -down; it
// reports, per thread, the turns that saw errors and how long after the
// restart its threads ran clean turns again.
//
// Only loopback addresses are used. Progress goes to stderr, a markdown
// report to stdout.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var (
	codexdBin = flag.String("codexd", "", "the codexd binary (required)")
	nThreads  = flag.Int("threads", 20, "threads per phase")
	nServers  = flag.Int("servers", 4, "exec-server processes")
	nTurns    = flag.Int("turns", 20, "turns per thread per phase")
	reps      = flag.Int("reps", 3, "local/remote phase pairs (interleaved)")
	sandbox   = flag.String("sandbox", "danger-full-access", "sandbox_mode of the threads")
	killAt    = flag.Float64("kill-at", 0.3, "fault run: kill the first exec-server once this fraction of its turns completed")
	down      = flag.Duration("down", 2*time.Second, "fault run: how long the killed exec-server stays down")
	noFault   = flag.Bool("no-fault", false, "skip the fault run")
)

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().UTC().Format("15:04:05.000")}, args...)...)
}

// threadState is what the notifications tell of one thread.
type threadState struct {
	id, env string
	done    chan turnDone

	mu       sync.Mutex
	ok, bad  int      // command items of the current turn
	badTexts []string // the first failures' output, for the report
	notes    []envNote
}

type turnDone struct {
	status  string
	ok, bad int
	at      time.Time
}

type envNote struct {
	connected bool
	at        time.Time
}

var (
	threadsMu sync.Mutex
	threads   = map[string]*threadState{}
)

func thread(id string) *threadState {
	threadsMu.Lock()
	defer threadsMu.Unlock()
	return threads[id]
}

func onNote(method string, params json.RawMessage) {
	var p struct {
		ThreadID string `json:"threadId"`
		Item     struct {
			Type             string  `json:"type"`
			Status           string  `json:"status"`
			AggregatedOutput *string `json:"aggregatedOutput"`
		} `json:"item"`
		Turn struct {
			Status string `json:"status"`
		} `json:"turn"`
	}
	switch method {
	case "item/completed", "turn/completed", "thread/environment/disconnected", "thread/environment/connected":
	default:
		return
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	st := thread(p.ThreadID)
	if st == nil {
		return
	}
	now := time.Now()
	st.mu.Lock()
	defer st.mu.Unlock()
	switch method {
	case "item/completed":
		if p.Item.Type != "commandExecution" {
			return
		}
		if p.Item.Status == "completed" {
			st.ok++
			return
		}
		st.bad++
		if len(st.badTexts) < 2 && p.Item.AggregatedOutput != nil {
			st.badTexts = append(st.badTexts, strings.TrimSpace(*p.Item.AggregatedOutput))
		}
	case "turn/completed":
		d := turnDone{status: p.Turn.Status, ok: st.ok, bad: st.bad, at: now}
		st.ok, st.bad = 0, 0
		select {
		case st.done <- d:
		default:
		}
	default:
		st.notes = append(st.notes, envNote{connected: method == "thread/environment/connected", at: now})
	}
}

// turnRec is one measured turn.
type turnRec struct {
	start, end time.Time
	ok, bad    int
	status     string
}

type phase struct {
	name    string
	wall    time.Duration
	turns   [][]turnRec // per thread
	states  []*threadState
	killAt  time.Time
	startAt time.Time // the restart
}

func (ph *phase) latencies() []time.Duration {
	var out []time.Duration
	for _, ts := range ph.turns {
		for _, t := range ts {
			out = append(out, t.end.Sub(t.start))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// failed counts the phase's failed commands.
func (ph *phase) failed() int {
	n := 0
	for _, ts := range ph.turns {
		for _, t := range ts {
			n += t.bad
		}
	}
	return n
}

func (ph *phase) throughput() float64 {
	n := 0
	for _, ts := range ph.turns {
		n += len(ts)
	}
	return float64(n) / ph.wall.Seconds()
}

func pct(d []time.Duration, p float64) time.Duration { return d[int(p*float64(len(d)-1))] }

func main() {
	flag.Parse()
	if *codexdBin == "" {
		fmt.Fprintln(os.Stderr, "fleetbench: -codexd is required")
		os.Exit(2)
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench:", err)
		os.Exit(1)
	}
}

func run() error {
	base, err := os.MkdirTemp("", "fleetbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)
	m, err := startMock()
	if err != nil {
		return err
	}
	defer m.close()
	servers := make([]*execServer, *nServers)
	for i := range servers {
		if servers[i], err = newExecServer(*codexdBin, fmt.Sprintf("e%d", i), base); err != nil {
			return err
		}
		defer servers[i].kill()
	}
	app, err := startAppServer(*codexdBin, base, m.url, *sandbox, onNote)
	if err != nil {
		return err
	}
	defer app.stop()
	c := app.c
	if _, err := c.call("initialize", map[string]any{
		"clientInfo":   map[string]any{"name": "fleetbench", "title": nil, "version": "0.1.0"},
		"capabilities": map[string]any{"experimentalApi": true},
	}, 30*time.Second); err != nil {
		return fmt.Errorf("initialize: %w\n%s", err, app.log)
	}
	if err := c.notify("initialized", map[string]any{}); err != nil {
		return err
	}
	for _, s := range servers {
		if _, err := c.call("environment/add", map[string]any{"environmentId": s.id, "execServerUrl": s.url}, 30*time.Second); err != nil {
			return fmt.Errorf("environment/add %s: %w", s.id, err)
		}
	}
	logf("app-server up, %d exec-servers: %s", len(servers), func() string {
		var b []string
		for _, s := range servers {
			b = append(b, s.id+"="+s.url)
		}
		return strings.Join(b, " ")
	}())

	var locals, remotes []*phase
	for r := range *reps {
		for _, remote := range []bool{false, true} {
			m.renew()
			ph, err := runPhase(c, servers, remote, nil)
			if err != nil {
				return err
			}
			lat := ph.latencies()
			logf("rep %d %s: %.1f turns/s, p50 %s p90 %s, %d failed commands", r+1, ph.name, ph.throughput(), pct(lat, 0.5).Round(time.Millisecond), pct(lat, 0.9).Round(time.Millisecond), ph.failed())
			if n := ph.failed(); n > 0 {
				return fmt.Errorf("%s: %d commands failed outside the fault run: %s", ph.name, n, ph.states[0].badTexts)
			}
			if remote {
				remotes = append(remotes, ph)
			} else {
				locals = append(locals, ph)
			}
		}
	}
	var fault *phase
	if !*noFault {
		m.renew()
		if fault, err = runPhase(c, servers, true, servers[0]); err != nil {
			return err
		}
	}
	report(locals, remotes, fault, servers)
	return nil
}

// runPhase starts *nThreads threads (on local, or spread over the
// exec-servers), runs *nTurns turns on each, all threads at once, and
// returns what it measured. With victim, the victim exec-server is
// SIGKILLed once killAt of its threads' turns completed, and started again
// after down; its threads go on until each ran 3 clean turns after that.
func runPhase(c *client, servers []*execServer, remote bool, victim *execServer) (*phase, error) {
	ph := &phase{name: "local", turns: make([][]turnRec, *nThreads), states: make([]*threadState, *nThreads)}
	if remote {
		ph.name = fmt.Sprintf("remote%d", len(servers))
	}
	if victim != nil {
		ph.name = "fault"
	}
	for i := range *nThreads {
		params := map[string]any{"ephemeral": true}
		env := "local"
		if remote {
			s := servers[i%len(servers)]
			env = s.id
			params["cwd"] = s.root
			params["environments"] = []any{map[string]any{"environmentId": s.id, "cwd": s.root}}
		}
		res, err := c.call("thread/start", params, 30*time.Second)
		if err != nil {
			return nil, fmt.Errorf("thread/start: %w", err)
		}
		var r struct {
			Thread struct {
				ID string `json:"id"`
			} `json:"thread"`
		}
		if err := json.Unmarshal(res, &r); err != nil || r.Thread.ID == "" {
			return nil, fmt.Errorf("thread/start answered %s", res)
		}
		st := &threadState{id: r.Thread.ID, env: env, done: make(chan turnDone, 1)}
		threadsMu.Lock()
		threads[st.id] = st
		threadsMu.Unlock()
		ph.states[i] = st
	}
	var victimTurns atomic.Int64
	killed := make(chan struct{})
	victimTotal := 0
	if victim != nil {
		for _, st := range ph.states {
			if st.env == victim.id {
				victimTotal += *nTurns
			}
		}
	}
	var restarted atomic.Bool
	var restartAt atomic.Pointer[time.Time]
	var faultErr error
	var faultWG sync.WaitGroup
	if victim != nil {
		faultWG.Add(1)
		go func() {
			defer faultWG.Done()
			<-killed
			ph.killAt = time.Now()
			victim.kill()
			logf("fault: killed exec-server %s (SIGKILL)", victim.id)
			time.Sleep(*down) // the outage itself
			if err := victim.start(); err != nil {
				faultErr = err
				return
			}
			ph.startAt = time.Now()
			restartAt.Store(&ph.startAt)
			restarted.Store(true)
			logf("fault: exec-server %s started again on %s", victim.id, victim.url)
		}()
	}
	var once sync.Once
	var wg sync.WaitGroup
	errs := make(chan error, *nThreads)
	start := time.Now()
	for i, st := range ph.states {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cleanAfter := 0 // clean turns started after the restart
			for k := 0; ; k++ {
				// A thread of the victim goes on past its turns until it
				// ran 3 clean turns after the restart (at most 10 times
				// its turns): the run shows it goes on.
				if k >= *nTurns && (victim == nil || st.env != victim.id || cleanAfter >= 3 || k >= 10**nTurns) {
					break
				}
				t0 := time.Now()
				if _, err := c.call("turn/start", map[string]any{"threadId": st.id,
					"input": []any{map[string]any{"type": "text", "text": fmt.Sprintf("turn %d", k)}}}, 60*time.Second); err != nil {
					errs <- fmt.Errorf("turn/start: %w", err)
					return
				}
				var d turnDone
				select {
				case d = <-st.done:
				case <-time.After(120 * time.Second):
					errs <- fmt.Errorf("thread %s: no turn/completed in 120s", st.id)
					return
				}
				ph.turns[i] = append(ph.turns[i], turnRec{start: t0, end: d.at, ok: d.ok, bad: d.bad, status: d.status})
				if restarted.Load() && t0.After(*restartAt.Load()) && d.bad == 0 && d.status == "completed" {
					cleanAfter++
				}
				if victim != nil && st.env == victim.id && victimTurns.Add(1) >= int64(*killAt*float64(victimTotal)) {
					once.Do(func() { close(killed) })
				}
			}
		}()
	}
	wg.Wait()
	ph.wall = time.Since(start)
	once.Do(func() { close(killed) })
	faultWG.Wait()
	close(errs)
	for err := range errs {
		return nil, err
	}
	return ph, faultErr
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func report(locals, remotes []*phase, fault *phase, servers []*execServer) {
	fmt.Printf("fleetbench: %d threads × %d turns per phase, 3 commands a turn, sandbox %s; %d exec-server processes; %d interleaved rep(s)\n\n",
		*nThreads, *nTurns, *sandbox, len(servers), len(locals))
	if len(locals) > 0 {
		compare(locals, remotes)
	}
	if fault == nil {
		return
	}
	faultReport(fault, servers)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// compare prints the local and remote phases side by side.
func compare(locals, remotes []*phase) {
	fmt.Println("| rep | local turns/s | remote turns/s | local p50 ms | remote p50 ms | local p90 ms | remote p90 ms |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	var lt, rt, l50, r50, l90, r90 []float64
	for i := range locals {
		ll, rl := locals[i].latencies(), remotes[i].latencies()
		lt, rt = append(lt, locals[i].throughput()), append(rt, remotes[i].throughput())
		l50, r50 = append(l50, ms(pct(ll, .5))), append(r50, ms(pct(rl, .5)))
		l90, r90 = append(l90, ms(pct(ll, .9))), append(r90, ms(pct(rl, .9)))
		fmt.Printf("| %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", i+1, lt[i], rt[i], l50[i], r50[i], l90[i], r90[i])
	}
	fmt.Printf("\nmedians: throughput remote/local %.2f; p50 latency remote/local %.2f; p90 %.2f\n",
		median(rt)/median(lt), median(r50)/median(l50), median(r90)/median(l90))
}

// faultReport prints, per thread of the fault run, its turns with errors
// and when the victim's threads ran clean turns again.
func faultReport(fault *phase, servers []*execServer) {
	victim := servers[0].id
	fmt.Printf("\nfault run: %s SIGKILLed %.0f ms into the run, started again %.0f ms later; the run took %.1f s\n\n",
		victim, ms(fault.killAt.Sub(fault.turns[0][0].start)), ms(fault.startAt.Sub(fault.killAt)), fault.wall.Seconds())
	fmt.Println("| thread | environment | turns | turns with failed commands | failed commands | disconnected / connected notes | first clean turn ends, ms after restart |")
	fmt.Println("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
	var worst time.Duration
	for i, st := range fault.states {
		badTurns, bad := 0, 0
		first := "—"
		for _, t := range fault.turns[i] {
			if t.bad > 0 || t.status != "completed" {
				badTurns++
				bad += t.bad
			}
		}
		if st.env == victim {
			for _, t := range fault.turns[i] {
				if t.start.After(fault.startAt) && t.bad == 0 && t.status == "completed" {
					d := t.end.Sub(fault.startAt)
					worst = max(worst, d)
					first = fmt.Sprintf("%.0f", ms(d))
					break
				}
			}
		}
		st.mu.Lock()
		dis, con := 0, 0
		for _, n := range st.notes {
			if n.connected {
				con++
			} else {
				dis++
			}
		}
		st.mu.Unlock()
		fmt.Printf("| %d | %s | %d | %d | %d | %d / %d | %s |\n", i, st.env, len(fault.turns[i]), badTurns, bad, dis, con, first)
	}
	fmt.Printf("\nevery thread of %s ran a clean turn again by %.0f ms after the restart\n", victim, ms(worst))
	for _, st := range fault.states {
		if st.env == victim && len(st.badTexts) > 0 {
			fmt.Printf("\na failed command's output on %s: `%s`\n", victim, strings.ReplaceAll(st.badTexts[0], "\n", " "))
			break
		}
	}
}
