package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// percentile is the nearest-rank p-th percentile of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p/100*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func mib(kb int64) float64 { return float64(kb) / 1024 }

// pairRatios divides b[i] by a[i] (the same block or repetition of the
// two servers) and returns the lowest and highest.
func pairRatios(a, b []time.Duration) (lo, hi float64) {
	lo, hi = -1, -1
	for i := range min(len(a), len(b)) {
		if a[i] <= 0 {
			continue
		}
		r := float64(b[i]) / float64(a[i])
		if lo < 0 || r < lo {
			lo = r
		}
		if r > hi {
			hi = r
		}
	}
	return lo, hi
}

func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return ""
	}
	return fmt.Sprintf("%.1f–%.1f", ms(slices.Min(ds)), ms(slices.Max(ds)))
}

// report prints the results as markdown: the run's conditions, then one
// table with both servers, the ratio codexd / Codex and the goal.
func report(w io.Writer, o options, sides []*side, started time.Time, load0, load1 string, mockRequests int64) {
	home := "an empty HOME"
	if o.userHome {
		home = "the user's HOME"
	}
	fmt.Fprintf(w, "turnbench: %s UTC, %s, GOMAXPROCS=%d, NumCPU=%d; sandbox %s, approval never, %s; %d warm-up + %d measured turns per server in blocks of %d; %d threads × %d reps concurrent; load average %s at start, %s at end\n\n",
		started.Format("2006-01-02 15:04"), runtime.Version(), runtime.GOMAXPROCS(0), runtime.NumCPU(),
		o.sandbox, home, o.warmup, o.turns, o.block, o.threads, o.reps, load0, load1)
	for _, s := range sides {
		fmt.Fprintf(w, "- %s: `%s` (%s)\n", s.label, strings.Join(s.argv, " "), s.version)
	}
	var total int
	for _, s := range sides {
		total += s.turnsRun
	}
	fmt.Fprintf(w, "- every turn checked: status completed, %d commands with exit code 0; %d turns, %d model requests (%.2f per turn)\n\n",
		len(commands), total, mockRequests, float64(mockRequests)/float64(max(total, 1)))

	codex, codexd := find(sides, "codex"), find(sides, "codexd")
	type row struct {
		metric     string
		a, b       float64 // Codex, codexd
		format     string
		lo, hi     float64 // spread of paired ratios, or -1
		goal       float64 // ratio goal (≤), 0 for none
		sa, sb     string  // spreads of the values
		noRatioSet bool
	}
	val := func(s *side, f func(*side) float64) float64 {
		if s == nil {
			return math.NaN()
		}
		return f(s)
	}
	pair := func(f func(*side) []time.Duration) (float64, float64) {
		if codex == nil || codexd == nil {
			return -1, -1
		}
		return pairRatios(f(codex), f(codexd))
	}
	spr := func(s *side, f func(*side) []time.Duration) string {
		if s == nil {
			return ""
		}
		return spread(f(s))
	}
	var rows []row
	{
		lo, hi := pair(func(s *side) []time.Duration { return s.blockP50 })
		rows = append(rows, row{metric: fmt.Sprintf("turn latency p50, turn/start → turn/completed (ms, n=%d)", o.turns),
			a: val(codex, func(s *side) float64 { return ms(percentile(s.lat, 50)) }), b: val(codexd, func(s *side) float64 { return ms(percentile(s.lat, 50)) }),
			format: "%.1f", lo: lo, hi: hi, goal: 0.5,
			sa: spr(codex, func(s *side) []time.Duration { return s.blockP50 }), sb: spr(codexd, func(s *side) []time.Duration { return s.blockP50 })})
		rows = append(rows, row{metric: "turn latency p90 (ms)",
			a: val(codex, func(s *side) float64 { return ms(percentile(s.lat, 90)) }), b: val(codexd, func(s *side) float64 { return ms(percentile(s.lat, 90)) }),
			format: "%.1f", lo: -1, hi: -1, goal: 0.5})
	}
	{
		lo, hi := pair(func(s *side) []time.Duration { return s.blockCPU })
		perTurn := func(f func(cpuUse) time.Duration) func(*side) float64 {
			return func(s *side) float64 { return ms(f(s.cpu)) / float64(len(s.lat)) }
		}
		rows = append(rows, row{metric: "server CPU per turn, with its children (ms)",
			a: val(codex, perTurn(cpuUse.total)), b: val(codexd, perTurn(cpuUse.total)),
			format: "%.1f", lo: lo, hi: hi, goal: 0.5,
			sa: spr(codex, func(s *side) []time.Duration { return s.blockCPU }), sb: spr(codexd, func(s *side) []time.Duration { return s.blockCPU })})
		self := func(c cpuUse) time.Duration { return c.self }
		kids := func(c cpuUse) time.Duration { return c.children }
		rows = append(rows,
			row{metric: "… of which the server process itself (ms)", a: val(codex, perTurn(self)), b: val(codexd, perTurn(self)), format: "%.1f", lo: -1, hi: -1},
			row{metric: "… of which its child processes: shells, sandbox helpers (ms)", a: val(codex, perTurn(kids)), b: val(codexd, perTurn(kids)), format: "%.1f", lo: -1, hi: -1})
	}
	rows = append(rows, row{metric: fmt.Sprintf("RSS after %d turns on one thread (MiB)", o.warmup+o.turns),
		a: val(codex, func(s *side) float64 { return mib(s.rssAfter) }), b: val(codexd, func(s *side) float64 { return mib(s.rssAfter) }),
		format: "%.1f", lo: -1, hi: -1, goal: 0.3})
	rows = append(rows,
		row{metric: "… of which anonymous: heap, stacks (RssAnon, MiB)",
			a: val(codex, func(s *side) float64 { return mib(s.anonAfter) }), b: val(codexd, func(s *side) float64 { return mib(s.anonAfter) }),
			format: "%.1f", lo: -1, hi: -1},
		row{metric: "… of which file-backed: the binary's pages (RssFile, MiB)",
			a: val(codex, func(s *side) float64 { return mib(s.fileAfter) }), b: val(codexd, func(s *side) float64 { return mib(s.fileAfter) }),
			format: "%.1f", lo: -1, hi: -1})
	{
		lo, hi := pair(func(s *side) []time.Duration { return s.concWall })
		rows = append(rows, row{metric: fmt.Sprintf("%d threads, one turn each at once: wall until the last turn/completed (ms, median of %d)", o.threads, o.reps),
			a: val(codex, func(s *side) float64 { return ms(percentile(s.concWall, 50)) }), b: val(codexd, func(s *side) float64 { return ms(percentile(s.concWall, 50)) }),
			format: "%.0f", lo: lo, hi: hi,
			sa: spr(codex, func(s *side) []time.Duration { return s.concWall }), sb: spr(codexd, func(s *side) []time.Duration { return s.concWall })})
	}
	{
		lo, hi := pair(func(s *side) []time.Duration { return s.concCPU })
		rows = append(rows, row{metric: "server CPU per turn in the concurrent test (ms, median)",
			a: val(codex, func(s *side) float64 { return ms(percentile(s.concCPU, 50)) }), b: val(codexd, func(s *side) float64 { return ms(percentile(s.concCPU, 50)) }),
			format: "%.1f", lo: lo, hi: hi})
	}
	rows = append(rows,
		row{metric: fmt.Sprintf("RSS after the concurrent test, %d threads loaded (MiB)", 1+o.threads*o.reps),
			a: val(codex, func(s *side) float64 { return mib(s.rssAfterConc) }), b: val(codexd, func(s *side) float64 { return mib(s.rssAfterConc) }),
			format: "%.1f", lo: -1, hi: -1},
		row{metric: "idle RSS after initialize and thread/start (MiB)",
			a: val(codex, func(s *side) float64 { return mib(s.idleRSS) }), b: val(codexd, func(s *side) float64 { return mib(s.idleRSS) }),
			format: "%.1f", lo: -1, hi: -1},
		row{metric: "initialize response (ms)",
			a: val(codex, func(s *side) float64 { return ms(s.initialize) }), b: val(codexd, func(s *side) float64 { return ms(s.initialize) }),
			format: "%.1f", lo: -1, hi: -1},
		row{metric: "shutdown after all turns: stdin closed → exit (ms)",
			a: val(codex, func(s *side) float64 { return ms(s.stopWall) }), b: val(codexd, func(s *side) float64 { return ms(s.stopWall) }),
			format: "%.0f", lo: -1, hi: -1},
		row{metric: "CPU used by that shutdown (ms)",
			a: val(codex, func(s *side) float64 { return ms(s.stopCPU) }), b: val(codexd, func(s *side) float64 { return ms(s.stopCPU) }),
			format: "%.0f", lo: -1, hi: -1},
		row{metric: "first thread/start response (ms)",
			a: val(codex, func(s *side) float64 { return ms(s.threadStart) }), b: val(codexd, func(s *side) float64 { return ms(s.threadStart) }),
			format: "%.1f", lo: -1, hi: -1},
	)

	fmt.Fprintln(w, "| metric | Codex 0.169 | codexd | codexd / Codex | paired ratios (min–max) | goal | met |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | --- | --- |")
	for _, r := range rows {
		cell := func(v float64, sp string) string {
			if math.IsNaN(v) {
				return "–"
			}
			if v < 0 {
				return "killed"
			}
			s := fmt.Sprintf(r.format, v)
			if sp != "" {
				s += " (" + sp + ")"
			}
			return s
		}
		ratio, pr, goal, met := "", "", "", ""
		if r.a > 0 && r.b > 0 {
			ratio = fmt.Sprintf("%.2f", r.b/r.a)
			if r.goal > 0 {
				goal = fmt.Sprintf("≤ %.1f×", r.goal)
				met = "no"
				if r.b/r.a <= r.goal {
					met = "yes"
				}
			}
		}
		if r.lo >= 0 {
			pr = fmt.Sprintf("%.2f–%.2f", r.lo, r.hi)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.metric, cell(r.a, r.sa), cell(r.b, r.sb), ratio, pr, goal, met)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Values in brackets: lowest–highest per-block p50 (latency), per-block CPU per turn, or per-repetition wall time. Paired ratios divide each codexd block or repetition by the Codex one next to it.")
	fmt.Fprintln(w)
	for _, s := range sides {
		var ds []string
		for _, d := range s.descAfter {
			ds = append(ds, fmt.Sprintf("%s (pid %d, %.1f MiB)", d.comm, d.pid, mib(d.rssKB)))
		}
		desc := "none"
		if len(ds) > 0 {
			desc = strings.Join(ds, ", ")
		}
		fmt.Fprintf(w, "- %s after the measured turns: %d OS threads; live child processes: %s; server requests received: %d\n", s.label, s.threadsAfter, desc, s.serverReqs)
	}
	for _, s := range sides {
		var b strings.Builder
		for i, d := range s.blockP50 {
			if i > 0 {
				b.WriteString(" ")
			}
			fmt.Fprintf(&b, "%.1f", ms(d))
		}
		fmt.Fprintf(w, "- %s per-block p50 (ms): %s\n", s.label, b.String())
	}
}

func find(sides []*side, name string) *side {
	for _, s := range sides {
		if s.name == name {
			return s
		}
	}
	return nil
}
