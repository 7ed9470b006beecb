package bench_test

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codexd/codexd/bench/harness"
)

// Each benchmark runs one workload for every implementation over every
// transport: go test -bench . -benchmem
//
// Client and server run in this process, so allocs/op and B/op count both
// sides of a round trip.

func forEach(b *testing.B, fn func(b *testing.B, s *harness.Session)) {
	for _, t := range harness.Transports() {
		for _, impl := range harness.All() {
			b.Run(name(impl.Name)+"/"+t.Name, func(b *testing.B) {
				s, err := harness.Start(impl, t)
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				b.ReportAllocs()
				fn(b, s)
			})
		}
	}
}

func name(s string) string {
	s = strings.NewReplacer(" ", "_", "(", "", ")", "", "/", "-").Replace(s)
	return s
}

func benchEcho(b *testing.B, p harness.EchoParams) {
	forEach(b, func(b *testing.B, s *harness.Session) {
		ctx := context.Background()
		if len(p.Text) > 1024 {
			b.SetBytes(int64(len(p.Text)))
		}
		for b.Loop() {
			if _, err := s.Client.Echo(ctx, p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkEcho is a sequential round trip with small params.
func BenchmarkEcho(b *testing.B) { benchEcho(b, harness.Small) }

// BenchmarkEcho64KiB echoes 64 KiB of text.
func BenchmarkEcho64KiB(b *testing.B) { benchEcho(b, harness.BigParams(64<<10)) }

// BenchmarkEcho1MiB echoes 1 MiB of text.
func BenchmarkEcho1MiB(b *testing.B) { benchEcho(b, harness.BigParams(1<<20)) }

// BenchmarkEcho64Callers runs 64 concurrent callers on one connection.
func BenchmarkEcho64Callers(b *testing.B) {
	forEach(b, func(b *testing.B, s *harness.Session) {
		ctx := context.Background()
		b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := s.Client.Echo(ctx, harness.Small); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkNotify sends b.N notifications and stops the clock when the
// server has handled the last one.
func BenchmarkNotify(b *testing.B) {
	forEach(b, func(b *testing.B, s *harness.Session) {
		ctx := context.Background()
		base := s.Notes()
		b.ResetTimer()
		for range b.N {
			if err := s.Client.Notify(ctx, harness.Small); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.WaitNotes(base+int64(b.N), time.Minute); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkHostile sends each hostile message once per iteration to a fresh
// server and reports the heap it cost relative to the message size, and
// whether it was rejected (1) or accepted (0).
func BenchmarkHostile(b *testing.B) {
	for _, p := range harness.Payloads() {
		for _, t := range harness.Transports() {
			for _, impl := range harness.All() {
				b.Run(name(p.Name)+"/"+name(impl.Name)+"/"+t.Name, func(b *testing.B) {
					var peak, alloc, rejected atomic.Int64
					for range b.N {
						r := harness.RunHostile(impl, t, p)
						if r.Err != nil {
							b.Fatal(r.Err)
						}
						peak.Add(int64(r.PeakHeap))
						alloc.Add(int64(r.Alloc))
						if r.Rejected {
							rejected.Add(1)
						}
						b.SetBytes(int64(r.MsgSize))
					}
					size := float64(len(impl.HostileMessage(p.Data)))
					b.ReportMetric(float64(peak.Load())/float64(b.N)/size, "peak-heap/msg")
					b.ReportMetric(float64(alloc.Load())/float64(b.N)/size, "alloc/msg")
					b.ReportMetric(float64(rejected.Load())/float64(b.N), "rejected")
				})
			}
		}
	}
}
