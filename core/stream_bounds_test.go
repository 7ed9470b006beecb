package core

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/modelclient"
)

// What a model stream carries is untrusted: these tests send what no real
// model sends and check that the core neither passes it on nor keeps it
// without bound.

// A reasoning index outside [0, maxReasoningParts) is not passed on (the
// app-server would grow a slice to it); the valid deltas around it are.
func TestStreamBadReasoningIndexIgnored(t *testing.T) {
	r := prompt.Item{Type: prompt.TypeReasoning, ID: "rs_1"}
	done := prompt.Item{Type: prompt.TypeReasoning, ID: "rs_1", Summary: []prompt.Summary{{Type: "summary_text", Text: "ok"}}}
	evs := []prompt.Event{{Kind: prompt.Created}, {Kind: prompt.ItemAdded, Item: &r}}
	for _, i := range []int{-1, maxReasoningParts, 30_000_000, -1 << 62} {
		evs = append(evs,
			prompt.Event{Kind: prompt.ReasoningSummaryPartAdded, ItemID: "rs_1", SummaryIndex: i},
			prompt.Event{Kind: prompt.ReasoningSummaryDelta, ItemID: "rs_1", SummaryIndex: i, Delta: "bad"},
			prompt.Event{Kind: prompt.ReasoningTextDelta, ItemID: "rs_1", ContentIndex: i, Delta: "bad"})
	}
	evs = append(evs,
		prompt.Event{Kind: prompt.ReasoningSummaryPartAdded, ItemID: "rs_1", SummaryIndex: 0},
		prompt.Event{Kind: prompt.ReasoningSummaryDelta, ItemID: "rs_1", SummaryIndex: 0, Delta: "ok"},
		prompt.Event{Kind: prompt.ItemDone, Item: &done})
	evs = append(evs, textEvents("msg_1", "fine")...)
	m := newFakeModel(fakeResponse{events: append(evs, completed(1, 1))})
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("think")})
	got := until(t, th, isTurnCompleted)
	if tc := got[len(got)-1].Msg.(agent.TurnCompleted); tc.Status != agent.TurnStatusCompleted {
		t.Fatalf("turn %s: %s", tc.Status, describe(got))
	}
	var passed []string
	for _, ev := range got {
		switch e := ev.Msg.(type) {
		case agent.ReasoningSummaryPartAdded:
			passed = append(passed, fmt.Sprintf("part %d", e.SummaryIndex))
		case agent.ReasoningSummaryDelta:
			passed = append(passed, fmt.Sprintf("summary %d %s", e.SummaryIndex, e.Delta))
		case agent.ReasoningTextDelta:
			passed = append(passed, fmt.Sprintf("content %d %s", e.ContentIndex, e.Delta))
		}
	}
	if fmt.Sprint(passed) != "[part 0 summary 0 ok]" {
		t.Fatalf("reasoning events passed on: %v", passed)
	}
}

// A response whose text and items outgrow maxResponseBytes fails the turn
// with an error naming the bound, and is not retried.
func TestStreamResponseTooLargeFailsTurn(t *testing.T) {
	msg := prompt.Item{Type: prompt.TypeMessage, ID: "msg_big", Role: "assistant"}
	evs := []prompt.Event{{Kind: prompt.Created}, {Kind: prompt.ItemAdded, Item: &msg}}
	chunk := strings.Repeat("x", 1<<20) // one string, shared by every delta
	for range maxResponseBytes/len(chunk) + 2 {
		evs = append(evs, prompt.Event{Kind: prompt.TextDelta, ItemID: "msg_big", Delta: chunk})
	}
	m := newFakeModel(fakeResponse{events: append(evs, completed(1, 1))})
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("talk")})
	got := until(t, th, isTurnCompleted)
	tc := got[len(got)-1].Msg.(agent.TurnCompleted)
	if tc.Status != agent.TurnStatusFailed || tc.Error == nil || !strings.Contains(tc.Error.Message, "64 MiB") {
		t.Fatalf("turn %s %+v, want failed naming the bound", tc.Status, tc.Error)
	}
	for _, e := range msgs[agent.Error](got) {
		if e.WillRetry {
			t.Fatalf("retried: %+v", e)
		}
	}
	if n := len(msgs[agent.AgentMessageDelta](got)); n > maxResponseBytes/len(chunk) {
		t.Fatalf("%d deltas passed on, over the bound", n)
	}
	if len(m.requests) != 1 {
		t.Fatalf("%d requests", len(m.requests))
	}
}

// A response of more than maxResponseItems items fails the turn.
func TestStreamTooManyItemsFailsTurn(t *testing.T) {
	evs := []prompt.Event{{Kind: prompt.Created}}
	for i := range maxResponseItems + 1 {
		it := prompt.Item{Type: prompt.TypeMessage, ID: fmt.Sprintf("msg_%d", i), Role: "assistant"}
		evs = append(evs, prompt.Event{Kind: prompt.ItemAdded, Item: &it})
	}
	m := newFakeModel(fakeResponse{events: append(evs, completed(1, 1))})
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("talk")})
	got := until(t, th, isTurnCompleted)
	tc := got[len(got)-1].Msg.(agent.TurnCompleted)
	if tc.Status != agent.TurnStatusFailed || tc.Error == nil || !strings.Contains(tc.Error.Message, fmt.Sprint(maxResponseItems)) {
		t.Fatalf("turn %s %+v, want failed naming the bound", tc.Status, tc.Error)
	}
	if n := len(msgs[agent.ItemStarted](got)); n > maxResponseItems+1 { // +1: the user message
		t.Fatalf("%d items started", n)
	}
}

// longMessage is a response of one message streamed in n deltas of 5
// bytes; its done item carries the whole text, as a real one does.
func longMessage(n int) fakeResponse {
	msg := prompt.Item{Type: prompt.TypeMessage, ID: "msg_long", Role: "assistant"}
	evs := make([]prompt.Event, 0, n+4)
	evs = append(evs, prompt.Event{Kind: prompt.Created}, prompt.Event{Kind: prompt.ItemAdded, Item: &msg})
	for range n {
		evs = append(evs, prompt.Event{Kind: prompt.TextDelta, ItemID: "msg_long", Delta: "abcde"})
	}
	done := prompt.Message("assistant", strings.Repeat("abcde", n))
	done.ID = "msg_long"
	return fakeResponse{events: append(evs, prompt.Event{Kind: prompt.ItemDone, Item: &done}, completed(1, 1))}
}

// allocatedBy returns the bytes allocated while f ran.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// The cost of a long message is linear in its length: doubling the number
// of deltas at most a little more than doubles the bytes allocated, where
// accumulating the text with string += quadruples them. It counts bytes,
// not time, so a loaded machine does not change the verdict.
func TestLongMessageCostIsLinear(t *testing.T) {
	m := newFakeModel()
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	turn := func(n int) uint64 {
		m.add(longMessage(n))
		return allocatedBy(func() {
			h.submit(th, agent.UserInput{Input: text("talk")})
			evs := until(t, th, isTurnCompleted)
			if got := itemsCompleted[*agent.AgentMessage](evs); len(got) != 1 || len(got[0].Text) != 5*n {
				t.Fatalf("answer %d bytes", len(got[0].Text))
			}
		})
	}
	turn(1000) // warm up: the first turn allocates once-only state
	small, large := turn(10_000), turn(20_000)
	t.Logf("10,000 deltas: %d bytes allocated; 20,000: %d", small, large)
	if float64(large) > 2.6*float64(small) {
		t.Fatalf("doubling the deltas multiplied the bytes allocated by %.1f (%d → %d): not linear",
			float64(large)/float64(small), small, large)
	}
}

// BenchmarkLongMessage streams a 400 KB message in 5-byte deltas through
// a turn (the case of issue 12: 12.9 s of CPU with string +=).
func BenchmarkLongMessage(b *testing.B) {
	m := newFakeModel()
	m.next = func(*prompt.Request) fakeResponse { return longMessage(80_000) }
	m.reqs = make(chan *prompt.Request, 1)
	go func() {
		for range m.reqs {
		}
	}()
	defer close(m.reqs)
	c, err := New(Config{
		Settings: agent.Settings{Model: "mock-model", ModelProvider: "mock", Cwd: b.TempDir(),
			Approval: agent.ApprovalNever, Sandbox: agent.SandboxPolicy{Mode: agent.SandboxReadOnly}},
		Providers: map[string]*Provider{"mock": {Client: m}},
		ExecDialer: func(ctx context.Context) (*execclient.Client, error) {
			return nil, errors.New("no exec-server in this benchmark")
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	l, err := c.StartThread(b.Context(), agent.StartOptions{Ephemeral: true})
	if err != nil {
		b.Fatal(err)
	}
	th := l.Thread
	b.SetBytes(400_000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := th.Submit(b.Context(), agent.UserInput{Input: text("talk")}); err != nil {
			b.Fatal(err)
		}
		for ev := range th.Events() {
			if _, ok := ev.Msg.(agent.TurnCompleted); ok {
				break
			}
		}
	}
}

// An oversized event is not a cut stream: the turn fails without retries.
func TestModelErrorEventTooLarge(t *testing.T) {
	pe := prompt.AsError(modelError(fmt.Errorf("%w: an event is over 16 bytes", modelclient.ErrEventTooLarge)))
	if pe.Stream || pe.Info != "other" || !strings.Contains(pe.Message, "over 16 bytes") {
		t.Fatalf("%+v", pe)
	}
}
