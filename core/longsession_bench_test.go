//go:build linux

package core

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/config"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/execserver"
	"github.com/codexd/codexd/mockmodel"
	"github.com/codexd/codexd/modelclient"
	"github.com/codexd/codexd/store"
)

// longSession is a stored thread on the mock model over HTTP at a
// 32k-token window, the setup of bench/longbench's session mode without
// the app-server: what a turn costs the core, the store and the model
// client as the session grows.
type longSession struct {
	core *Core
	mock *mockmodel.Server
}

func newLongSession(tb testing.TB) *longSession {
	tb.Helper()
	mock := mockmodel.New(mockmodel.Options{})
	url, err := mock.Start("127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { mock.Close() })
	srv, err := execserver.New(execserver.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { srv.Close() })
	home := tb.TempDir()
	st, err := store.Open(context.Background(), home, store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	p := config.Provider{ID: "mock", Name: "Mock", BaseURL: url, WireAPI: config.WireResponses, StreamIdleTimeout: time.Minute}
	cfg := Config{
		Settings: agent.Settings{Model: "mock-model", ModelProvider: "mock", Cwd: tb.TempDir(),
			Approval: agent.ApprovalNever, Sandbox: agent.SandboxPolicy{Mode: agent.SandboxWorkspaceWrite}},
		CodexHome: home,
		Store:     st,
		Providers: map[string]*Provider{"mock": ProviderFromConfig(p, modelclient.Options{})},
		ExecDialer: func(ctx context.Context) (*execclient.Client, error) {
			return execclient.NewInProcess(ctx, srv, execclient.Options{})
		},
		Sandbox:      passSandbox{},
		NoLoginShell: true,
	}
	cfg.Compaction.ContextWindow = 32000
	c, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return &longSession{core: c, mock: mock}
}

// turnCost is a turn's latency (submit to TurnCompleted) and the CPU time
// the process spent over it (the mock model's included), which moves much
// less than the latency with the machine's load.
type turnCost struct{ wall, cpu time.Duration }

// processCPU is the CPU time of the process, all its threads.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// run runs a session of turns turns of about 2,000 bytes each, as
// longbench does, and returns each turn's cost and the compactions.
func (s *longSession) run(tb testing.TB, turns int) ([]turnCost, int) {
	tb.Helper()
	l, err := s.core.StartThread(context.Background(), agent.StartOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	th := l.Thread
	defer func() {
		if _, err := th.Submit(context.Background(), agent.Shutdown{}); err == nil {
			for range th.Events() {
			}
		}
	}()
	filler := strings.Repeat("context filler words ", 2000/21+1)[:2000]
	ds := make([]turnCost, 0, turns)
	compactions := 0
	for i := 1; i <= turns; i++ {
		t0, cpu0 := time.Now(), processCPU()
		if _, err := th.Submit(context.Background(), agent.UserInput{Input: text(fmt.Sprintf("MOCK:hello turn %d\n%s", i, filler))}); err != nil {
			tb.Fatal(err)
		}
		for ev := range th.Events() {
			if it, ok := ev.Msg.(agent.ItemCompleted); ok {
				if _, ok := it.Item.(*agent.ContextCompaction); ok {
					compactions++
				}
			}
			if done, ok := ev.Msg.(agent.TurnCompleted); ok {
				if done.Status != agent.TurnStatusCompleted {
					tb.Fatalf("turn %d: %s %+v", i, done.Status, done.Error)
				}
				break
			}
		}
		ds = append(ds, turnCost{time.Since(t0), processCPU() - cpu0})
	}
	return ds, compactions
}

// median is the median of f over cs.
func median(cs []turnCost, f func(turnCost) time.Duration) time.Duration {
	c := make([]time.Duration, len(cs))
	for i, x := range cs {
		c[i] = f(x)
	}
	slices.Sort(c)
	return c[len(c)/2]
}

// BenchmarkLongSession runs sessions of 50 and of 300 turns and reports
// the median latency of each one's last 50 turns (ns/turn) and their
// median CPU time (cpu-ns/turn, the steadier figure): a turn costs
// the same after 300 turns as in the first 50 when nothing on its path
// grows with the session (the history sent is bounded by compaction; the
// rollout, the index and the thread's turns grow, and must not be walked).
func BenchmarkLongSession(b *testing.B) {
	for _, n := range []int{50, 300} {
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			s := newLongSession(b)
			var first, last []turnCost
			compactions := 0
			for b.Loop() {
				ds, c := s.run(b, n)
				first, last = append(first, ds[:50]...), append(last, ds[len(ds)-50:]...)
				compactions += c
			}
			wall := func(c turnCost) time.Duration { return c.wall }
			cpu := func(c turnCost) time.Duration { return c.cpu }
			b.ReportMetric(float64(median(last, wall)), "ns/turn")
			b.ReportMetric(float64(median(last, cpu)), "cpu-ns/turn")
			if n > 50 {
				// The goal's figure, within the sessions: the last 50
				// turns over the first 50.
				b.ReportMetric(float64(median(last, wall))/float64(median(first, wall)), "wall-ratio")
				b.ReportMetric(float64(median(last, cpu))/float64(median(first, cpu)), "cpu-ratio")
			}
			b.ReportMetric(float64(compactions)/float64(b.N), "compactions/op")
		})
	}
}
