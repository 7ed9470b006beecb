package core

import (
	"context"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/execserver"
)

// BenchmarkTurnThreeToolCalls runs turns of three exec_command calls and an
// answer against a scripted in-process model and the in-process
// exec-server: the core's own cost per turn, without HTTP.
func BenchmarkTurnThreeToolCalls(b *testing.B) {
	srv, err := execserver.New(execserver.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	step := 0
	m := newFakeModel()
	m.reqs = make(chan *prompt.Request, 1)
	m.next = func(*prompt.Request) fakeResponse {
		step++
		if step%4 == 0 {
			return textResponse("msg", "done")
		}
		return callResponse("call", "exec_command", map[string]any{"cmd": "echo hi"})
	}
	c, err := New(Config{
		Settings: agent.Settings{Model: "mock-model", ModelProvider: "mock", Cwd: b.TempDir(),
			Approval: agent.ApprovalNever, Sandbox: agent.SandboxPolicy{Mode: agent.SandboxDangerFullAccess}},
		Providers: map[string]*Provider{"mock": {Client: m}},
		ExecDialer: func(ctx context.Context) (*execclient.Client, error) {
			return execclient.NewInProcess(ctx, srv, execclient.Options{})
		},
		NoLoginShell: true,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	l, err := c.StartThread(context.Background(), agent.StartOptions{Ephemeral: true})
	if err != nil {
		b.Fatal(err)
	}
	th := l.Thread
	go func() {
		for range m.reqs {
		}
	}()
	defer close(m.reqs)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := th.Submit(context.Background(), agent.UserInput{Input: text("go")}); err != nil {
			b.Fatal(err)
		}
		for ev := range th.Events() {
			if _, ok := ev.Msg.(agent.TurnCompleted); ok {
				break
			}
		}
	}
}
