package harness

import (
	"fmt"
	"io"
	"strings"
)

// Reference names used in ratios.
const (
	OursName  = "codexd"
	FloorName = "floor (json v2)"
)

func isPeer(name string) bool { return name != OursName && name != FloorName }

// WriteTable prints one markdown table of every measure, with each
// implementation's rate relative to the fastest peer and to the floor of the
// same workload and transport.
func WriteTable(w io.Writer, ms []Measure) {
	fmt.Fprintln(w, "| workload | transport | implementation | ops/s | × fastest peer | × floor | allocs/op | B/op |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|")
	for _, m := range ms {
		if m.Err != nil {
			fmt.Fprintf(w, "| %s | %s | %s | error: %s | | | | |\n", m.Workload, m.Transport, m.Impl, oneLine(m.Err.Error()))
			continue
		}
		peer, floor := refs(ms, m)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %.1f | %s |\n", m.Workload, m.Transport, bold(m.Impl),
			fmtRate(m.Rate), ratio(m.Rate, peer), ratio(m.Rate, floor), m.Allocs, fmtBytes(m.Bytes))
	}
}

func refs(ms []Measure, m Measure) (peer, floor float64) {
	for _, o := range ms {
		if o.Workload != m.Workload || o.Transport != m.Transport || o.Err != nil {
			continue
		}
		if isPeer(o.Impl) && o.Rate > peer {
			peer = o.Rate
		}
		if o.Impl == FloorName {
			floor = o.Rate
		}
	}
	return peer, floor
}

func bold(name string) string {
	if name == OursName {
		return "**" + name + "**"
	}
	return name
}

func ratio(x, ref float64) string {
	if ref == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", x/ref)
}

func fmtRate(r float64) string {
	switch {
	case r >= 100:
		return fmt.Sprintf("%.0f", r)
	default:
		return fmt.Sprintf("%.1f", r)
	}
}

func fmtBytes(b float64) string {
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%.2f MiB", b/(1<<20))
	case b >= 10<<10:
		return fmt.Sprintf("%.1f KiB", b/(1<<10))
	}
	return fmt.Sprintf("%.0f", b)
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", "/")
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

// WriteHostile prints the hostile-input table.
func WriteHostile(w io.Writer, rs []HostileResult) {
	fmt.Fprintln(w, "| input | transport | implementation | message | peak heap growth | × msg | allocated | × msg | outcome |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|---|")
	for _, r := range rs {
		if r.Err != nil {
			fmt.Fprintf(w, "| %s | %s | %s | | | | | | setup error: %s |\n", r.Input, r.Transport, bold(r.Impl), oneLine(r.Err.Error()))
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %.2f | %s | %.2f | %s |\n", r.Input, r.Transport, bold(r.Impl),
			fmtBytes(float64(r.MsgSize)), fmtBytes(float64(r.PeakHeap)), float64(r.PeakHeap)/float64(r.MsgSize),
			fmtBytes(float64(r.Alloc)), float64(r.Alloc)/float64(r.MsgSize), oneLine(r.Outcome))
	}
}

// WriteGoals checks our engine against the goals.
func WriteGoals(w io.Writer, ms []Measure, hs []HostileResult) {
	fmt.Fprintln(w, "| goal | workload | transport | measured | met |")
	fmt.Fprintln(w, "|---|---|---|---:|---|")
	for _, m := range ms {
		if m.Impl != OursName || m.Err != nil {
			continue
		}
		peer, floor := refs(ms, m)
		if peer > 0 {
			fmt.Fprintf(w, "| ≥ 2× fastest peer | %s | %s | %.2f× | %s |\n", m.Workload, m.Transport, m.Rate/peer, yes(m.Rate >= 2*peer))
		}
		if floor > 0 {
			fmt.Fprintf(w, "| ≥ 60%% of floor | %s | %s | %.0f%% | %s |\n", m.Workload, m.Transport, 100*m.Rate/floor, yes(m.Rate >= 0.6*floor))
		}
		if strings.HasPrefix(m.Workload, "echo") {
			fmt.Fprintf(w, "| ≤ 30 allocs per round trip | %s | %s | %.1f | %s |\n", m.Workload, m.Transport, m.Allocs, yes(m.Allocs <= 30))
		}
	}
	for _, h := range hs {
		if h.Impl != OursName || h.Err != nil {
			continue
		}
		x := float64(h.PeakHeap) / float64(h.MsgSize)
		fmt.Fprintf(w, "| rejected, peak heap ≤ 2× msg | %s | %s | %s, %.2f× (allocated %.2f×) | %s |\n", h.Input, h.Transport,
			map[bool]string{true: "rejected", false: "accepted"}[h.Rejected], x, float64(h.Alloc)/float64(h.MsgSize), yes(h.Rejected && x <= 2))
	}
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}
