package core

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/environment"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/execserver"
)

// threeCommands answers each turn with three exec_command calls, one after
// the other, then a message.
func threeCommands() *fakeModel {
	m := newFakeModel()
	m.reqs = make(chan *prompt.Request, 1<<16)
	var mu sync.Mutex
	n := 0
	m.next = func(req *prompt.Request) fakeResponse {
		mu.Lock()
		n++
		id := fmt.Sprintf("call_%d", n)
		mu.Unlock()
		outs := 0
		for i := len(req.Input) - 1; i >= 0 && !(req.Input[i].Type == prompt.TypeMessage && req.Input[i].Role == "user"); i-- {
			if req.Input[i].Type == prompt.TypeFunctionCallOutput {
				outs++
			}
		}
		if outs >= 3 {
			return textResponse("msg_"+id, "done")
		}
		return callResponse(id, "exec_command", map[string]any{"cmd": fmt.Sprintf("echo %d", outs), "yield_time_ms": 10000})
	}
	return m
}

// BenchmarkEnvironmentsFleet: 20 threads run one turn each at once, every
// turn three commands; spread over 4 exec-servers on loopback WebSockets
// (remote4) or all on the in-process exec-server (local). One op is one
// such round of 20 turns; turn-ms is the median turn's latency.
func BenchmarkEnvironmentsFleet(b *testing.B) {
	for _, remote := range []bool{false, true} {
		name := "local"
		if remote {
			name = "remote4"
		}
		b.Run(name, func(b *testing.B) {
			srv, err := execserver.New(execserver.Config{})
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			reg := environment.New(environment.Options{})
			defer reg.Close()
			var roots []string
			if remote {
				for i := range 4 {
					url, root := envServer(b)
					if err := reg.Add(environment.AddParams{ID: fmt.Sprintf("e%d", i), URL: url}); err != nil {
						b.Fatal(err)
					}
					roots = append(roots, root)
				}
			}
			c, err := New(Config{
				Settings: agent.Settings{Model: "mock-model", ModelProvider: "mock", Cwd: b.TempDir(),
					Approval: agent.ApprovalNever, Sandbox: agent.SandboxPolicy{Mode: agent.SandboxDangerFullAccess}},
				CodexHome: b.TempDir(),
				Providers: map[string]*Provider{"mock": {Name: "mock", Client: threeCommands()}},
				ExecDialer: func(ctx context.Context) (*execclient.Client, error) {
					return execclient.NewInProcess(ctx, srv, execclient.Options{})
				},
				Environments: reg, Sandbox: passSandbox{}, NoLoginShell: true,
			})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			threads := make([]agent.Thread, 20)
			for i := range threads {
				var o agent.Overrides
				if remote {
					o.Environments = &[]agent.Environment{{ID: fmt.Sprintf("e%d", i%4), Cwd: roots[i%4]}}
				}
				l, err := c.StartThread(context.Background(), agent.StartOptions{Overrides: o, Ephemeral: true})
				if err != nil {
					b.Fatal(err)
				}
				threads[i] = l.Thread
			}
			var lat []time.Duration
			var mu sync.Mutex
			b.ResetTimer()
			for range b.N {
				var wg sync.WaitGroup
				for _, th := range threads {
					wg.Add(1)
					go func() {
						defer wg.Done()
						start := time.Now()
						if _, err := th.Submit(context.Background(), agent.UserInput{Input: text("go")}); err != nil {
							b.Error(err)
							return
						}
						for ev := range th.Events() {
							if tc, ok := ev.Msg.(agent.TurnCompleted); ok {
								if tc.Status != agent.TurnStatusCompleted {
									b.Errorf("turn %s", tc.Status)
								}
								break
							}
						}
						mu.Lock()
						lat = append(lat, time.Since(start))
						mu.Unlock()
					}()
				}
				wg.Wait()
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "turn-ms")
			b.ReportMetric(float64(20*b.N)/b.Elapsed().Seconds(), "turns/s")
		})
	}
}
