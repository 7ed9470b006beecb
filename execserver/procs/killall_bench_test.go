//go:build linux

package procs

import (
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
			p, err := m.Start(StartOptions{ID: "p" + strconv.Itoa(j), Argv: []string{"true"}, Env: testPath})
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
		b.StartTimer()
		m.KillAll()
		b.StopTimer()
		m.Close()
	}
	b.ReportMetric(float64(n), "retained")
}
