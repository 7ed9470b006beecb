//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/codexd/codexd/mockmodel"
)

// turnCost is what one turn of a long session cost.
type turnCost struct {
	// wall is turn/start sent to turn/completed read: the figure the goal
	// names.
	wall time.Duration
	// cpu is the CPU time the server (all its threads and its children)
	// spent over the turn. Unlike wall it hardly moves with the machine's
	// load, so it shows what grows with the session and what is noise.
	cpu time.Duration
	// reqBytes is the size of the model requests the turn sent
	// (a compaction's summarisation request included).
	reqBytes int
	// rssKiB is the server's RSS (its children's included) after the turn:
	// what the session keeps as it grows (every turn stays readable).
	rssKiB int64
}

// session runs turns turns of about pad bytes each on one thread and
// returns each turn's cost and the number of compactions.
func session(s subject, mock *mockmodel.Server, url string, window, turns, pad int) ([]turnCost, int, error) {
	srv, thread, err := startThread(s, url, window)
	if err != nil {
		return nil, 0, err
	}
	defer os.RemoveAll(srv.home)
	defer srv.stop()
	filler := strings.Repeat("context filler words ", pad/21+1)[:pad]
	out := make([]turnCost, 0, turns)
	seen := len(mock.Requests())
	compactions := 0
	pid := srv.cmd.Process.Pid
	for i := 1; i <= turns; i++ {
		// The CPU reading is outside the timed interval: it reads /proc
		// for each of the server's threads.
		cpu0 := groupCPU(pid)
		t0 := time.Now()
		if err := srv.turn(thread, fmt.Sprintf("MOCK:hello turn %d\n%s", i, filler)); err != nil {
			return out, compactions, fmt.Errorf("turn %d: %w", i, err)
		}
		c := turnCost{wall: time.Since(t0)}
		c.cpu = groupCPU(pid) - cpu0
		c.rssKiB = groupRSSKiB(pid)
		reqs := mock.Requests()
		for _, ex := range reqs[seen:] {
			c.reqBytes += len(ex.Body)
			if ex.Answer == "compaction" {
				compactions++
			}
		}
		seen = len(reqs)
		out = append(out, c)
	}
	return out, compactions, nil
}

// groupCPU is the CPU time of a process's threads and its descendants'
// (/proc/PID/task/TID/schedstat, in nanoseconds: finer than the clock
// ticks of /proc/PID/stat, which a 5 ms turn would round to nothing).
// Threads that exited are not counted; Go's and tokio's threads live as
// long as their process.
func groupCPU(pid int) time.Duration {
	var total time.Duration
	stats, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			total += time.Duration(n)
		}
	}
	kids, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, k := range kids {
		b, _ := os.ReadFile(k)
		for _, c := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(c); err == nil {
				total += groupCPU(n)
			}
		}
	}
	return total
}

// sessionBench runs runs sessions on s, reports each, then the median of
// their ratios and the pooled ratio: the p50 of every run's turns 250–300
// over that of every run's turns 1–50. A run takes seconds, so a burst of
// load on the machine can cover one of its windows whole; pooled, that run
// is a fifth of each window's turns (with 5 runs) and hardly moves its p50.
func sessionBench(s subject, mock *mockmodel.Server, url string, window, turns, pad, runs int) error {
	var wallRatios, cpuRatios []float64
	var firsts, lasts []turnCost
	for r := 1; r <= runs; r++ {
		load0 := loadavg()
		cs, compactions, err := session(s, mock, url, window, turns, pad)
		if err != nil {
			return err
		}
		w, c := reportSession(s.name, cs, compactions, load0, loadavg())
		wallRatios, cpuRatios = append(wallRatios, w), append(cpuRatios, c)
		first, last := windows(len(cs))
		firsts, lasts = append(firsts, cs[first[0]:first[1]]...), append(lasts, cs[last[0]:last[1]]...)
	}
	if runs > 1 {
		wall := func(c turnCost) time.Duration { return c.wall }
		cpu := func(c turnCost) time.Duration { return c.cpu }
		pooled := func(f func(turnCost) time.Duration) float64 {
			return float64(p50(pick(lasts, f))) / float64(p50(pick(firsts, f)))
		}
		fmt.Printf("%s: %d runs; wall ratios %s, median %.2f, pooled %.2f (%s -> %s ms); CPU ratios %s, median %.2f, pooled %.2f\n",
			s.name, runs, ratios(wallRatios), median(wallRatios), pooled(wall), ms(p50(pick(firsts, wall))), ms(p50(pick(lasts, wall))),
			ratios(cpuRatios), median(cpuRatios), pooled(cpu))
	}
	return nil
}

// loadavg is /proc/loadavg's three load averages.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// window is the turns the goal compares: 1–50 and the last 51 (250–300).
func windows(n int) (first, last [2]int) {
	return [2]int{0, min(50, n)}, [2]int{max(n-51, 0), n}
}

func reportSession(name string, cs []turnCost, compactions int, load0, load1 string) (wallRatio, cpuRatio float64) {
	n := len(cs)
	first, last := windows(n)
	wall := func(c turnCost) time.Duration { return c.wall }
	cpu := func(c turnCost) time.Duration { return c.cpu }
	p := func(f func(turnCost) time.Duration, w [2]int) time.Duration { return p50(pick(cs[w[0]:w[1]], f)) }
	wallRatio = float64(p(wall, last)) / float64(p(wall, first))
	cpuRatio = float64(p(cpu, last)) / float64(p(cpu, first))
	fmt.Printf("%s: %d turns, %d compactions, load %s -> %s; p50 turns 1-50 %s ms, turns %d-%d %s ms: ratio %.2f; server CPU p50 %s -> %s ms: ratio %.2f\n",
		name, n, compactions, load0, load1, ms(p(wall, first)), last[0]+1, n, ms(p(wall, last)), wallRatio,
		ms(p(cpu, first)), ms(p(cpu, last)), cpuRatio)
	fmt.Printf("%s RSS after turns 50 and %d: %.1f, %.1f MiB\n", name, n, float64(cs[first[1]-1].rssKiB)/1024, float64(cs[n-1].rssKiB)/1024)
	fmt.Printf("%s curve (p50 per 25 turns, ms):", name)
	for i := 0; i < n; i += 25 {
		fmt.Printf(" %s", ms(p50(pick(cs[i:min(i+25, n)], wall))))
	}
	fmt.Printf("\n%s server CPU (p50 per 25 turns, ms):", name)
	for i := 0; i < n; i += 25 {
		fmt.Printf(" %s", ms(p50(pick(cs[i:min(i+25, n)], cpu))))
	}
	fmt.Printf("\n%s request KiB (mean per 25 turns):", name)
	for i := 0; i < n; i += 25 {
		sum := 0
		for _, c := range cs[i:min(i+25, n)] {
			sum += c.reqBytes
		}
		fmt.Printf(" %.0f", float64(sum)/float64(min(i+25, n)-i)/1024)
	}
	fmt.Println()
	return wallRatio, cpuRatio
}

func pick(cs []turnCost, f func(turnCost) time.Duration) []time.Duration {
	out := make([]time.Duration, len(cs))
	for i, c := range cs {
		out[i] = f(c)
	}
	return out
}

func median(xs []float64) float64 {
	c := append([]float64(nil), xs...)
	sort.Float64s(c)
	if len(c)%2 == 1 {
		return c[len(c)/2]
	}
	return (c[len(c)/2-1] + c[len(c)/2]) / 2
}

func ratios(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(s, " ")
}
