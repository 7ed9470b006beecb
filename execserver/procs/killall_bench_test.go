//go:build linux

package procs

import (
	"runtime"
	"strconv"
	"testing"
)

// BenchmarkKillAllRetained measures a session's teardown after it ran many
// short commands: every one of them is closed and kept for the
// closed-process TTL, so KillAll looks for members their groups left
// behind. (codexd app-server tears its exec-server session down at exit,
// after every command of every turn.)
func BenchmarkKillAllRetained(b *testing.B) {
	const n = 300
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		m := NewManager(Config{})
		for j := 0; j < n; j++ {
			runClosed(b, m, "p"+strconv.Itoa(j))
		}
		b.StartTimer()
		m.KillAll()
		b.StopTimer()
		m.Close()
	}
	b.ReportMetric(float64(n), "retained")
}

// BenchmarkRetainedHeap measures the heap a closed command keeps for the
// closed-process TTL (80 s): codexd app-server runs three a turn in
// turnbench, so a few hundred are retained at any time.
func BenchmarkRetainedHeap(b *testing.B) {
	const n = 100
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	var managers []*Manager
	for i := 0; i < b.N; i++ {
		m := NewManager(Config{})
		managers = append(managers, m)
		for j := 0; j < n; j++ {
			runClosed(b, m, "p"+strconv.Itoa(j))
		}
		if len(m.Processes()) != n {
			b.Fatalf("%d processes retained, want %d", len(m.Processes()), n)
		}
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric((float64(ms.HeapAlloc)-float64(before))/float64(n*b.N), "heap-B/retained")
	for _, m := range managers {
		m.Close()
	}
}

// runClosed runs `true` as id and returns once it is closed.
func runClosed(b *testing.B, m *Manager, id string) {
	p, err := m.Start(StartOptions{ID: id, Argv: []string{"true"}, Env: testPath})
	if err != nil {
		b.Fatal(err)
	}
	for ev := uint64(0); ; {
		batch := p.Events(ev, 100)
		if len(batch.Events) > 0 {
			ev = batch.Events[len(batch.Events)-1].Seq
			if batch.Events[len(batch.Events)-1].Kind == EventClosed {
				break
			}
		}
		if err := p.Wait(b.Context(), ev); err != nil {
			b.Fatal(err)
		}
	}
	<-p.Done()
}
