package core

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/execserver"
	"github.com/codexd/codexd/jsonrpc"
)

// TestTurnOnARemoteExecServer runs a turn whose command and patch go
// through an exec-server reached over WebSocket, as on another machine.
func TestTurnOnARemoteExecServer(t *testing.T) {
	srv, err := execserver.New(execserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	l, err := srv.Listen(jsonrpc.Listen{Scheme: "ws", Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- l.Serve(nil, nil) }()
	defer func() { l.Close(); <-done }()

	m := newFakeModel(
		callResponse("call_1", "exec_command", map[string]any{"cmd": "echo remote:$CODEX_CI"}),
		callResponse("call_2", "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: r.txt\n+remote\n*** End Patch"}),
		textResponse("msg_3", "done"),
	)
	d, err := execclient.URLConnector(l.URL(), execclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, m, func(c *Config) { c.ExecDialer = d.Connect })
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("go")})
	evs := until(t, th, isTurnCompleted)
	items := itemsCompleted[*agent.CommandExecution](evs)
	if len(items) != 1 || !strings.Contains(*items[0].Output, "remote:1") {
		t.Fatalf("items %s", describe(evs))
	}
	if got := readFile(t, h.dir+"/r.txt"); got != "remote\n" {
		t.Fatalf("r.txt %q", got)
	}
}

func TestUnreachableExecServer(t *testing.T) {
	m := newFakeModel(
		callResponse("call_1", "exec_command", map[string]any{"cmd": "echo hi"}),
		textResponse("msg_2", "no luck"),
	)
	h := newHarness(t, m, func(c *Config) {
		d, _ := execclient.URLConnector("ws://127.0.0.1:1", execclient.Options{DialTimeout: time.Second})
		c.ExecDialer = d.Connect
	})
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("go")})
	evs := until(t, th, isTurnCompleted)
	if done := evs[len(evs)-1].Msg.(agent.TurnCompleted); done.Status != agent.TurnStatusCompleted {
		t.Fatalf("turn %s", describe(evs))
	}
	items := itemsCompleted[*agent.CommandExecution](evs)
	if len(items) != 1 || items[0].Status != agent.ItemStatusFailed {
		t.Fatalf("items %s", describe(evs))
	}
	m.request(t)
	if out := lastOutput(t, m.request(t), "call_1"); !strings.Contains(out, "exec_command failed") || !strings.Contains(out, "exec-server") {
		t.Fatalf("model got %q", out)
	}
}

// TestInterruptWhileAnotherThreadDials: while one thread's turn is dialling
// a slow exec-server, another thread's turn that needs it waits; an
// interrupt of that turn must end it at once. It used to wait on the
// core's dial lock until the other dial ended (up to the dial timeout).
func TestInterruptWhileAnotherThreadDials(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	m := newFakeModel()
	m.next = func(*prompt.Request) fakeResponse { return textResponse("msg", "ok") }
	h := newHarness(t, m, func(c *Config) {
		c.ExecDialer = func(ctx context.Context) (*execclient.Client, error) {
			once.Do(func() { close(entered) })
			<-release // a dial that does not watch ctx (a slow handshake)
			return nil, errors.New("no exec-server here")
		}
	})
	a := h.start(agent.Overrides{})
	h.submit(a, agent.UserInput{Input: text("a")})
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("no dial")
	}
	b := h.start(agent.Overrides{})
	id := h.submit(b, agent.UserInput{Input: text("b")})
	until(t, b, func(ev agent.Event) bool { _, ok := ev.Msg.(agent.ItemCompleted); return ok })
	h.submit(b, agent.Interrupt{TurnID: id})
	done := make(chan agent.TurnStatus, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for ev := range b.Events() {
			if tc, ok := ev.Msg.(agent.TurnCompleted); ok {
				done <- tc.Status
				return
			}
		}
	}()
	select {
	case st := <-done:
		if st != agent.TurnStatusInterrupted {
			t.Errorf("turn %s", st)
		}
	case <-time.After(5 * time.Second):
		t.Error("the interrupted turn waited for the other thread's dial")
	}
	close(release)
	until(t, a, isTurnCompleted)
	<-finished
}
