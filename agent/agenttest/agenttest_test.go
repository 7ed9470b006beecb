package agenttest

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/codexd/codexd/agent"
)

func TestMain(m *testing.M) {
	CloseGrace = 50 * time.Millisecond
	goleak.VerifyTestMain(m)
}

func next(t *testing.T, th agent.Thread) agent.Event {
	t.Helper()
	select {
	case ev := <-th.Events():
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
	return agent.Event{}
}

func until[T agent.EventMsg](t *testing.T, th agent.Thread) (T, agent.Event) {
	t.Helper()
	for {
		ev := next(t, th)
		if m, ok := ev.Msg.(T); ok {
			return m, ev
		}
	}
}

func text(s string) []agent.Input { return []agent.Input{{Type: "text", Text: s}} }

func TestDefaultTurnAndHistory(t *testing.T) {
	c := New(Options{})
	defer c.Close()
	ctx := context.Background()
	l, err := c.StartThread(ctx, agent.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	th := l.Thread
	id, err := th.Submit(ctx, agent.UserInput{Input: text("hi")})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var last agent.Event
	for {
		ev := next(t, th)
		if ev.TurnID != id {
			t.Fatalf("event of turn %q, want %q", ev.TurnID, id)
		}
		kinds = append(kinds, typeName(ev.Msg))
		if _, ok := ev.Msg.(agent.TurnCompleted); ok {
			last = ev
			break
		}
	}
	tc := last.Msg.(agent.TurnCompleted)
	if tc.Status != agent.TurnStatusCompleted || tc.LastAgentMessage != "Hello from the mock model." {
		t.Fatalf("completed: %+v (events %v)", tc, kinds)
	}
	info, turns, err := c.ReadThread(ctx, th.ID(), true)
	if err != nil || !info.Materialized || info.Preview != "hi" || len(turns) != 1 || len(turns[0].Items) != 2 {
		t.Fatalf("history: %+v %+v %v", info, turns, err)
	}
}

func typeName(m agent.EventMsg) string {
	switch m.(type) {
	case agent.TurnStarted:
		return "TurnStarted"
	case agent.ItemStarted:
		return "ItemStarted"
	case agent.ItemCompleted:
		return "ItemCompleted"
	case agent.AgentMessageDelta:
		return "Delta"
	case agent.TokenCount:
		return "TokenCount"
	case agent.TurnCompleted:
		return "TurnCompleted"
	}
	return "other"
}

func TestInterruptSteerAndDecisions(t *testing.T) {
	gate := NewGate()
	c := New(Options{Turn: func(tn *Turn) {
		if tn.Wait(gate) != nil {
			return
		}
		tn.AgentMessage("m", "x")
	}})
	defer c.Close()
	ctx := context.Background()
	l, _ := c.StartThread(ctx, agent.StartOptions{})
	th := l.Thread
	if _, err := th.Submit(ctx, agent.Interrupt{}); !errors.Is(err, agent.ErrNoActiveTurn) {
		t.Fatalf("interrupt idle: %v", err)
	}
	id, _ := th.Submit(ctx, agent.UserInput{Input: text("a")})
	if _, err := th.Submit(ctx, agent.Steer{ExpectedTurnID: "other", Input: text("b")}); !errors.As(err, new(*agent.TurnMismatchError)) {
		t.Fatalf("steer mismatch: %v", err)
	}
	if _, err := th.Submit(ctx, agent.Steer{ExpectedTurnID: id}); !errors.Is(err, agent.ErrEmptyInput) {
		t.Fatalf("steer empty: %v", err)
	}
	if got, err := th.Submit(ctx, agent.Steer{ExpectedTurnID: id, Input: text("b")}); err != nil || got != id {
		t.Fatalf("steer: %q %v", got, err)
	}
	if _, err := th.Submit(ctx, agent.Interrupt{TurnID: id}); err != nil {
		t.Fatal(err)
	}
	tc, _ := until[agent.TurnCompleted](t, th)
	if tc.Status != agent.TurnStatusInterrupted {
		t.Fatalf("status %s", tc.Status)
	}
	if _, err := th.Submit(ctx, agent.ExecDecision{CallID: "none", Decision: agent.Accept}); !errors.Is(err, agent.ErrUnknownCall) {
		t.Fatalf("unknown call: %v", err)
	}
}

func TestExecScriptCancel(t *testing.T) {
	c := New(Options{Turn: ExecScript("call_1", "echo hi")})
	defer c.Close()
	ctx := context.Background()
	l, _ := c.StartThread(ctx, agent.StartOptions{})
	th := l.Thread
	_, _ = th.Submit(ctx, agent.UserInput{Input: text("run")})
	req, _ := until[agent.ExecApprovalRequest](t, th)
	if _, err := th.Submit(ctx, agent.ExecDecision{CallID: req.CallID, Decision: agent.Cancel}); err != nil {
		t.Fatal(err)
	}
	done, _ := until[agent.ItemCompleted](t, th)
	if ce := done.Item.(*agent.CommandExecution); ce.Status != agent.ItemStatusDeclined {
		t.Fatalf("item %+v", ce)
	}
	tc, _ := until[agent.TurnCompleted](t, th)
	if tc.Status != agent.TurnStatusInterrupted || len(th.(*Thread).Decisions()) != 1 {
		t.Fatalf("turn %+v", tc)
	}
}

func TestInstant(t *testing.T) {
	c := New(Options{Instant: true})
	defer c.Close()
	ctx := context.Background()
	l, _ := c.StartThread(ctx, agent.StartOptions{})
	_, _ = l.Thread.Submit(ctx, agent.UserInput{Input: text("a")})
	tc, _ := until[agent.TurnCompleted](t, l.Thread)
	if tc.Status != agent.TurnStatusCompleted {
		t.Fatal(tc.Status)
	}
}
