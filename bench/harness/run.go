package harness

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Workload is one throughput workload over a running session.
type Workload struct {
	Name string
	// Unit names what ops counts ("calls" or "notes").
	Unit string
	// Run drives the session for about d and returns how many operations
	// completed and in how long.
	Run func(ctx context.Context, s *Session, d time.Duration) (ops int64, elapsed time.Duration, err error)
}

// Workloads are the throughput workloads, in table order.
func Workloads() []Workload {
	big64 := BigParams(64 << 10)
	big1m := BigParams(1 << 20)
	return []Workload{
		{Name: "echo (small)", Unit: "calls", Run: sequential(Small)},
		{Name: "echo, 64 callers", Unit: "calls", Run: concurrent(64, Small)},
		{Name: "notifications", Unit: "notes", Run: notifications},
		{Name: "echo 64 KiB", Unit: "calls", Run: sequential(big64)},
		{Name: "echo 1 MiB", Unit: "calls", Run: sequential(big1m)},
	}
}

func sequential(p EchoParams) func(context.Context, *Session, time.Duration) (int64, time.Duration, error) {
	return func(ctx context.Context, s *Session, d time.Duration) (int64, time.Duration, error) {
		start := time.Now()
		deadline := start.Add(d)
		var n int64
		for {
			if _, err := s.Client.Echo(ctx, p); err != nil {
				return n, time.Since(start), err
			}
			n++
			if n&7 == 0 && time.Now().After(deadline) {
				break
			}
		}
		return n, time.Since(start), nil
	}
}

func concurrent(callers int, p EchoParams) func(context.Context, *Session, time.Duration) (int64, time.Duration, error) {
	return func(ctx context.Context, s *Session, d time.Duration) (int64, time.Duration, error) {
		var total atomic.Int64
		var stop atomic.Bool
		var wg sync.WaitGroup
		var errOnce sync.Once
		var firstErr error
		start := time.Now()
		for range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					if _, err := s.Client.Echo(ctx, p); err != nil {
						errOnce.Do(func() { firstErr = err })
						stop.Store(true)
						return
					}
					total.Add(1)
				}
			}()
		}
		time.Sleep(d)
		stop.Store(true)
		wg.Wait()
		return total.Load(), time.Since(start), firstErr
	}
}

// notifications sends as fast as the sender can for d, then waits until the
// server has handled every one; the rate is delivered notifications over the
// time to the last delivery.
func notifications(ctx context.Context, s *Session, d time.Duration) (int64, time.Duration, error) {
	base := s.Notes()
	start := time.Now()
	deadline := start.Add(d)
	var n int64
	for {
		if err := s.Client.Notify(ctx, Small); err != nil {
			return n, time.Since(start), err
		}
		n++
		if n&7 == 0 && time.Now().After(deadline) {
			break
		}
	}
	err := s.WaitNotes(base+n, 30*time.Second)
	return n, time.Since(start), err
}

// Measure is the outcome of one workload for one implementation and
// transport: medians over the runs.
type Measure struct {
	Impl, Transport, Workload string
	Rate                      float64 // operations per second
	Allocs                    float64 // heap allocations per operation, both sides
	Bytes                     float64 // bytes allocated per operation, both sides
	Runs                      int
	Err                       error
}

// RunWorkload measures w for one implementation; see RunCell.
func RunWorkload(impl Impl, t Transport, w Workload, d time.Duration, runs int) Measure {
	return RunCell([]Impl{impl}, t, w, d, runs)[0]
}

// RunCell measures w over t for every implementation in impls. It starts
// one session per implementation, warms each up, then interleaves the
// measured runs (run 1 of every implementation, then run 2, ...), so that
// a burst of load from elsewhere on the machine hits all of them alike
// rather than skewing one cell. Each figure is the median over the runs.
func RunCell(impls []Impl, t Transport, w Workload, d time.Duration, runs int) []Measure {
	ms := make([]Measure, len(impls))
	sessions := make([]*Session, len(impls))
	var rates, allocs, bytes = make([][]float64, len(impls)), make([][]float64, len(impls)), make([][]float64, len(impls))
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(runs+2)*time.Duration(len(impls))*d+120*time.Second)
	defer cancel()
	for i, impl := range impls {
		ms[i] = Measure{Impl: impl.Name, Transport: t.Name, Workload: w.Name}
		s, err := Start(impl, t)
		if err != nil {
			ms[i].Err = err
			continue
		}
		defer s.Close()
		if _, _, err := w.Run(ctx, s, d/4); err != nil {
			ms[i].Err = fmt.Errorf("warm-up: %w", err)
			continue
		}
		sessions[i] = s
	}
	for r := range runs {
		for k := range impls {
			i := (k + r) % len(impls) // rotate the order between runs
			s := sessions[i]
			if s == nil || ms[i].Err != nil {
				continue
			}
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			ops, el, err := w.Run(ctx, s, d)
			runtime.ReadMemStats(&after)
			if err != nil {
				ms[i].Err = err
				continue
			}
			if ops == 0 {
				continue
			}
			rates[i] = append(rates[i], float64(ops)/el.Seconds())
			allocs[i] = append(allocs[i], float64(after.Mallocs-before.Mallocs)/float64(ops))
			bytes[i] = append(bytes[i], float64(after.TotalAlloc-before.TotalAlloc)/float64(ops))
		}
	}
	for i := range ms {
		ms[i].Runs = len(rates[i])
		ms[i].Rate, ms[i].Allocs, ms[i].Bytes = median(rates[i]), median(allocs[i]), median(bytes[i])
	}
	return ms
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
