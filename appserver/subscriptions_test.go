package appserver

import (
	"fmt"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
)

// optOutNotificationMethods suppresses exactly those methods, for that
// connection only.
func TestOptOutNotifications(t *testing.T) {
	e := newEnv(t, agenttest.Options{}, Config{})
	quiet, loud := e.dial("quiet"), e.dial("loud")
	quiet.initialize(map[string]any{"optOutNotificationMethods": []string{"thread/started", "item/agentMessage/delta"}})
	loud.initialize(nil)
	thread := quiet.startThread(nil)
	loud.note("thread/started")
	join(quiet, loud, thread)
	quiet.startTurn(thread, "hi")
	quiet.note("turn/completed")
	loud.note("turn/completed")
	quiet.barrier()
	for _, m := range quiet.logged() {
		if m.Method == "thread/started" || m.Method == "item/agentMessage/delta" {
			t.Fatalf("opted-out notification delivered: %s", m)
		}
	}
	got := methodsOf(quiet.logged())
	for _, want := range []string{"turn/started", "item/started", "item/completed", "thread/status/changed", "turn/completed"} {
		if indexOf(got, want) < 0 {
			t.Fatalf("%s missing from %v", want, got)
		}
	}
	if indexOf(methodsOf(loud.logged()), "item/agentMessage/delta") < 0 {
		t.Fatal("the other connection lost its deltas")
	}
}

// An initialized client that is not subscribed gets thread/started and the
// status changes of every thread, and nothing of its turns; once it
// resumes it gets everything; after unsubscribe, statuses again.
func TestUnsubscribedRouting(t *testing.T) {
	e := newEnv(t, agenttest.Options{}, Config{})
	a, b := e.dial("a"), e.dial("b")
	a.initialize(nil)
	b.initialize(nil)
	thread := a.startThread(nil)
	b.note("thread/started")
	a.startTurn(thread, "one")
	a.note("turn/completed")
	b.next("idle", func(m *wmsg) bool {
		return m.Method == "thread/status/changed" && strings.Contains(string(m.Params), `"idle"`)
	})
	b.barrier()
	for _, m := range b.logged() {
		if strings.HasPrefix(m.Method, "turn/") || strings.HasPrefix(m.Method, "item/") || m.Method == "thread/tokenUsage/updated" {
			t.Fatalf("unsubscribed client got %s", m)
		}
	}
	b.call(appproto.MethodThreadResume, map[string]any{"threadId": thread})
	a.startTurn(thread, "two")
	b.note("turn/started")
	b.note("item/agentMessage/delta")
	b.note("turn/completed")
	a.note("turn/completed")
	if got := b.call(appproto.MethodThreadUnsubscribe, map[string]any{"threadId": thread}).str(t, "/status"); got != "unsubscribed" {
		t.Fatalf("unsubscribe: %s", got)
	}
	if got := b.call(appproto.MethodThreadUnsubscribe, map[string]any{"threadId": thread}).str(t, "/status"); got != "notSubscribed" {
		t.Fatalf("second unsubscribe: %s", got)
	}
	// The thread stays loaded.
	if list := b.call(appproto.MethodThreadLoadedList, map[string]any{}); !strings.Contains(string(list.Result), thread) {
		t.Fatalf("unloaded on unsubscribe: %s", list)
	}
	before := len(b.logged())
	a.startTurn(thread, "three")
	a.note("turn/completed")
	b.next("idle again", func(m *wmsg) bool {
		return m.Method == "thread/status/changed" && strings.Contains(string(m.Params), `"idle"`)
	})
	b.barrier()
	for _, m := range b.logged()[before:] {
		if strings.HasPrefix(m.Method, "turn/") || strings.HasPrefix(m.Method, "item/") {
			t.Fatalf("unsubscribed client got %s", m)
		}
	}
}

// A client that resumes in the middle of a turn gets a snapshot (the
// running turn with its items so far) and then every later event: its
// view of the message is the final text, with no gap and no duplicate,
// wherever the resume falls in a stream of deltas.
func TestMidTurnResumeNoGapNoDuplicate(t *testing.T) {
	const deltas = 3000
	started, resuming, finish := agenttest.NewGate(), agenttest.NewGate(), agenttest.NewGate()
	e := newEnv(t, agenttest.Options{Turn: func(tn *agenttest.Turn) {
		tn.Emit(agent.ItemStarted{Item: &agent.AgentMessage{ID: "msg_long"}})
		var full strings.Builder
		for i := 0; i < deltas; i++ {
			if i == 1 {
				started.Open()
			}
			if i == deltas/3 && tn.Wait(resuming) != nil {
				return
			}
			d := fmt.Sprintf("d%d;", i)
			full.WriteString(d)
			if !tn.Emit(agent.AgentMessageDelta{ItemID: "msg_long", Delta: d}) {
				return
			}
		}
		// The turn stays open until the resume was answered, so that the
		// snapshot always holds it running.
		if tn.Wait(finish) != nil {
			return
		}
		tn.Emit(agent.ItemCompleted{Item: &agent.AgentMessage{ID: "msg_long", Text: full.String()}})
	}}, Config{})
	a, b := e.dial("a"), e.dial("b")
	a.initialize(nil)
	b.initialize(nil)
	thread := a.startThread(nil)
	turn := a.startTurn(thread, "stream")
	<-started.Done()
	// Once A has seen a delta, the listener has applied the turn's start.
	// The rest of the stream is let go just as B resumes: the resume falls
	// somewhere in it (or after it), wherever the scheduler puts it.
	a.note("item/agentMessage/delta")
	resuming.Open()
	resumed := b.call(appproto.MethodThreadResume, map[string]any{"threadId": thread})
	finish.Open()
	var turns []appproto.Turn
	if err := pointer(resumed.Result, "/thread/turns", &turns); err != nil {
		t.Fatal(err)
	}
	if len(turns) != 1 || turns[0].ID != turn || turns[0].Status != "inProgress" {
		t.Fatalf("snapshot turns: %+v", turns)
	}
	text := ""
	for _, it := range turns[0].Items {
		if it.AgentMessage != nil && it.AgentMessage.ID == "msg_long" {
			text = it.AgentMessage.Text
		}
	}
	if !strings.HasPrefix(text, "d0;") {
		t.Fatalf("snapshot text %q", text)
	}
	final := b.next("the message's completion", func(m *wmsg) bool { return m.Method == "item/completed" })
	b.note("turn/completed")
	for _, m := range b.logged() {
		if m.Method == "item/agentMessage/delta" {
			text += m.str(t, "/delta")
		}
	}
	want := final.str(t, "/item/text")
	if text != want {
		t.Fatalf("snapshot + deltas (%d bytes) != final text (%d bytes): a gap or a duplicate", len(text), len(want))
	}
	a.note("turn/completed")
}

// thread/start, thread/resume and thread/fork subscribe the caller.
func TestStartResumeForkSubscribe(t *testing.T) {
	e := newEnv(t, agenttest.Options{}, Config{})
	a := e.dial("a")
	a.initialize(nil)
	thread := a.startThread(nil)
	a.startTurn(thread, "first")
	a.note("turn/completed")
	fork := a.call(appproto.MethodThreadFork, map[string]any{"threadId": thread})
	forkID := fork.str(t, "/thread/id")
	if fork.str(t, "/thread/forkedFromId") != thread || forkID == thread {
		t.Fatalf("fork: %s", fork)
	}
	var turns []appproto.Turn
	_ = pointer(fork.Result, "/thread/turns", &turns)
	if len(turns) != 1 || turns[0].ItemsView != "full" || len(turns[0].Items) != 2 {
		t.Fatalf("fork's history: %+v", turns)
	}
	a.startTurn(forkID, "on the fork")
	done := a.next("the fork's turn/completed", func(m *wmsg) bool {
		return m.Method == "turn/completed" && strings.Contains(string(m.Params), forkID)
	})
	_ = done
}
