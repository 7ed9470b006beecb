package appserver

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
)

// What a model stream carries reaches the app-server as the core's events;
// these tests send it what no sane model sends and check that the server
// neither dies nor keeps it without bound.

// leanClient is an in-process client that keeps nothing it receives but
// the turns that ended: what a test that measures memory needs. Its reader
// only counts what goes wrong (it may outlive a fuzz iteration's t).
type leanClient struct {
	t     testing.TB
	c     *Client
	ended chan appproto.TurnNotification
	marks chan string  // the messages of warnings: marks a test's turn sets
	seen  atomic.Int64 // messages received
	// encode makes the reader encode every message as a JSON client's
	// connection would; encodeErrs counts those that did not encode.
	encode         atomic.Bool
	encodeErrs     atomic.Int64
	firstEncodeErr atomic.Value // string
	done           chan struct{}
}

func newLeanClient(t testing.TB, srv *Server) *leanClient {
	t.Helper()
	c, err := srv.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	l := &leanClient{t: t, c: c, ended: make(chan appproto.TurnNotification, 256), marks: make(chan string, 256), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for {
			select {
			case m := <-c.Messages():
				l.seen.Add(1)
				if l.encode.Load() {
					if _, err := json.Marshal(m.Params); err != nil {
						if l.encodeErrs.Add(1) == 1 {
							l.firstEncodeErr.Store(m.Method + ": " + err.Error())
						}
					}
				}
				if n, ok := m.Params.(appproto.TurnNotification); ok && m.Method == appproto.TurnCompletedN.Name() {
					select {
					case l.ended <- n:
					default: // nobody waits for it
					}
				}
				if n, ok := m.Params.(appproto.WarningNotification); ok {
					select {
					case l.marks <- n.Message:
					default:
					}
				}
				if m.ID != nil {
					// Nothing asks in these tests; answer so no turn waits.
					c.RespondError(*m.ID, nil)
				}
			case <-c.Done():
				return
			}
		}
	}()
	t.Cleanup(func() {
		c.Close()
		<-l.done
	})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := Call(ctx, c, appproto.Initialize, appproto.InitializeParams{ClientInfo: appproto.ClientInfo{Name: "lean", Version: "1"}}); err != nil {
		t.Fatal(err)
	}
	return l
}

func (l *leanClient) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	l.t.Cleanup(cancel)
	return ctx
}

func (l *leanClient) startThread() string {
	l.t.Helper()
	res, err := Call(l.ctx(), l.c, appproto.ThreadStart, appproto.ThreadStartParams{})
	if err != nil {
		l.t.Fatal(err)
	}
	return res.Thread.ID
}

func (l *leanClient) startTurn(thread string) string {
	l.t.Helper()
	res, err := Call(l.ctx(), l.c, appproto.TurnStart, appproto.TurnStartParams{ThreadID: thread,
		Input: []appproto.UserInput{{Type: "text", Text: "go", TextElements: []appproto.TextElement{}}}})
	if err != nil {
		l.t.Fatal(err)
	}
	return res.Turn.ID
}

// mark waits for the warning msg, which a test's turn emits: everything the
// turn emitted before it has then been applied and sent.
func (l *leanClient) mark(msg string) {
	l.t.Helper()
	select {
	case got := <-l.marks:
		if got != msg {
			l.t.Fatalf("mark %q, want %q", got, msg)
		}
	case <-time.After(wait):
		l.t.Fatalf("no mark %q", msg)
	}
}

// turnEnded waits for turn/completed of turn.
func (l *leanClient) turnEnded(turn string) appproto.Turn {
	l.t.Helper()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		select {
		case n := <-l.ended:
			if n.Turn.ID == turn {
				return n.Turn
			}
		case <-deadline.C:
			l.t.Fatalf("turn %s did not end", turn)
		}
	}
}

func (l *leanClient) read(thread string) appproto.Thread {
	l.t.Helper()
	res, err := Call(l.ctx(), l.c, appproto.ThreadRead, appproto.ThreadReadParams{ThreadID: thread, IncludeTurns: true})
	if err != nil {
		l.t.Fatal(err)
	}
	return res.Thread
}

// heapAfterGC is the live heap.
func heapAfterGC() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A reasoning delta whose index is negative or huge is ignored: the view
// keeps the valid parts, the server lives on (a -1 used to panic and end
// the process; 30,000,000 allocated 1.5 GiB).
func TestReasoningIndexOutOfRange(t *testing.T) {
	e := newEnv(t, agenttest.Options{}, Config{})
	gate := agenttest.NewGate()
	e.core.SetTurn(func(tt *agenttest.Turn) {
		tt.Emit(agent.ItemStarted{Item: &agent.Reasoning{ID: "rs_1"}})
		for _, i := range []int{-1, -1 << 40, maxViewParts, 30_000_000} {
			tt.Emit(agent.ReasoningSummaryPartAdded{ItemID: "rs_1", SummaryIndex: i})
			tt.Emit(agent.ReasoningSummaryDelta{ItemID: "rs_1", SummaryIndex: i, Delta: "bad"})
			tt.Emit(agent.ReasoningTextDelta{ItemID: "rs_1", ContentIndex: i, Delta: "bad"})
		}
		tt.Emit(agent.ReasoningSummaryPartAdded{ItemID: "rs_1", SummaryIndex: 0})
		tt.Emit(agent.ReasoningSummaryDelta{ItemID: "rs_1", SummaryIndex: 0, Delta: "ok"})
		tt.Emit(agent.ReasoningTextDelta{ItemID: "rs_1", ContentIndex: 1, Delta: "raw"})
		_ = tt.Wait(gate)
		tt.Emit(agent.ItemCompleted{Item: &agent.Reasoning{ID: "rs_1", Summary: []string{"ok"}}})
	})
	c := e.dial("c")
	c.initialize(nil)
	th := c.startThread(nil)
	turn := c.startTurn(th, "think")
	c.note(appproto.ReasoningTextDelta.Name())
	read := c.call(appproto.MethodThreadRead, map[string]any{"threadId": th, "includeTurns": true})
	var items []appproto.ThreadItem
	if err := pointer(read.Result, "/thread/turns/0/items", &items); err != nil {
		t.Fatal(err)
	}
	var r *appproto.ReasoningItem
	for _, it := range items {
		if it.Reasoning != nil {
			r = it.Reasoning
		}
	}
	if r == nil || strings.Join(r.Summary, "|") != "ok" || strings.Join(r.Content, "|") != "|raw" {
		t.Fatalf("reasoning in view: %+v", r)
	}
	gate.Open()
	c.next("turn/completed", func(m *wmsg) bool {
		return m.Method == appproto.TurnCompletedN.Name() && m.str(t, "/turn/id") == turn
	})
	for _, m := range c.logged() {
		if bytes.Contains(m.raw, []byte(`"bad"`)) {
			t.Errorf("an out-of-range delta was sent on: %s", m.raw)
		}
	}
	c.call(appproto.MethodModelList, map[string]any{})
}

// While an item runs, its view keeps at most maxViewBytes of what its
// deltas brought (the first half and the latest half); once it completes,
// the view keeps nothing of them: the completed item carries the output.
// Three turns each streaming 16 MiB of command output and 16 MiB of
// message text used to leave all of it on the heap.
func TestDeltaViewsBounded(t *testing.T) {
	const chunkSize, chunks = 64 << 10, 256
	first, mid, last := bytes.Repeat([]byte("A"), chunkSize), bytes.Repeat([]byte("b"), chunkSize), bytes.Repeat([]byte("Z"), chunkSize)
	sFirst, sMid, sLast := string(first), string(mid), string(last)
	e := newEnv(t, agenttest.Options{}, Config{})
	var gate atomic.Pointer[agenttest.Gate]
	e.core.SetTurn(func(tt *agenttest.Turn) {
		tt.Emit(agent.ItemStarted{Item: &agent.CommandExecution{ID: "cmd", Command: "yes", Cwd: "/", Status: agent.ItemStatusInProgress}})
		tt.Emit(agent.ItemStarted{Item: &agent.AgentMessage{ID: "msg"}})
		for i := range chunks {
			data, text := mid, sMid
			switch i {
			case 0:
				data, text = first, sFirst
			case chunks - 1:
				data, text = last, sLast
			}
			tt.Emit(agent.CommandOutputDelta{ItemID: "cmd", Stream: "stdout", Data: data})
			tt.Emit(agent.AgentMessageDelta{ItemID: "msg", Delta: text})
		}
		tt.Emit(agent.Warning{Message: "deltas sent"})
		_ = tt.Wait(gate.Load())
		out, code := "capped output", 0
		tt.Emit(agent.ItemCompleted{Item: &agent.CommandExecution{ID: "cmd", Command: "yes", Cwd: "/",
			Status: agent.ItemStatusCompleted, Output: &out, ExitCode: &code}})
		tt.Emit(agent.ItemCompleted{Item: &agent.AgentMessage{ID: "msg", Text: "short answer"}})
	})
	l := newLeanClient(t, e.srv)
	th := l.startThread()
	// Warm up: the first turn allocates once-only state.
	warm := agenttest.NewGate()
	warm.Open()
	gate.Store(warm)
	l.turnEnded(l.startTurn(th))
	l.mark("deltas sent")
	before := heapAfterGC()
	for round := range 3 {
		g := agenttest.NewGate()
		gate.Store(g)
		turn := l.startTurn(th)
		// Mid-item: the view is bounded, and keeps both ends.
		l.mark("deltas sent")
		var cmd *appproto.CommandExecutionItem
		var msg *appproto.AgentMessageItem
		got := l.read(th)
		active := got.Turns[len(got.Turns)-1]
		for _, it := range active.Items {
			if it.CommandExecution != nil {
				cmd = it.CommandExecution
			}
			if it.AgentMessage != nil {
				msg = it.AgentMessage
			}
		}
		if active.ID != turn || msg == nil || cmd == nil || cmd.AggregatedOutput == nil {
			t.Fatalf("round %d: the running turn %+v", round, active)
		}
		for name, s := range map[string]string{"aggregatedOutput": *cmd.AggregatedOutput, "text": msg.Text} {
			if len(s) > maxViewBytes+64 || !strings.HasPrefix(s, sFirst) || !strings.HasSuffix(s, sLast) || !strings.Contains(s, "bytes dropped") {
				t.Fatalf("round %d: %s in view: %d bytes, head %q, tail %q", round, name, len(s), s[:min(len(s), 8)], s[max(len(s)-8, 0):])
			}
		}
		g.Open()
		l.turnEnded(turn)
	}
	got := l.read(th)
	if n := len(got.Turns); n != 4 {
		t.Fatalf("%d turns", n)
	}
	for _, it := range got.Turns[3].Items {
		if it.CommandExecution != nil && (it.CommandExecution.AggregatedOutput == nil || *it.CommandExecution.AggregatedOutput != "capped output") {
			t.Fatalf("completed command: %+v", it.CommandExecution)
		}
		if it.AgentMessage != nil && it.AgentMessage.Text != "short answer" {
			t.Fatalf("completed message: %q", it.AgentMessage.Text[:min(len(it.AgentMessage.Text), 40)])
		}
	}
	after := heapAfterGC()
	grown := int64(after) - int64(before)
	t.Logf("heap grew by %d bytes over 3 turns of 2×%d MiB of deltas", grown, chunkSize*chunks>>20)
	if grown > 8<<20 {
		t.Fatalf("the heap grew by %d MiB over 3 completed turns: delta buffers are kept", grown>>20)
	}
}

// A turn that ends with items still running (interrupted, failed, a cut
// stream) keeps none of their delta buffers: a command shows no output
// (the core completes the commands it ran), and the partial text of an
// agent message stays, within maxViewBytes for the turn
// ([history-keeps-partial-items]).
func TestUnfinishedItemDeltasDroppedAtTurnEnd(t *testing.T) {
	chunk := bytes.Repeat([]byte("q"), 64<<10)
	e := newEnv(t, agenttest.Options{}, Config{})
	e.core.SetTurn(func(tt *agenttest.Turn) {
		tt.Emit(agent.ItemStarted{Item: &agent.CommandExecution{ID: "cmd", Command: "yes", Cwd: "/", Status: agent.ItemStatusInProgress}})
		tt.Emit(agent.ItemStarted{Item: &agent.AgentMessage{ID: "msg"}})
		tt.Emit(agent.ItemStarted{Item: &agent.AgentMessage{ID: "msg2"}})
		tt.Emit(agent.ItemStarted{Item: &agent.Reasoning{ID: "rs"}})
		for range 64 {
			tt.Emit(agent.CommandOutputDelta{ItemID: "cmd", Stream: "stdout", Data: chunk})
			tt.Emit(agent.AgentMessageDelta{ItemID: "msg", Delta: string(chunk)})
			tt.Emit(agent.AgentMessageDelta{ItemID: "msg2", Delta: string(chunk)})
			tt.Emit(agent.ReasoningSummaryDelta{ItemID: "rs", Delta: string(chunk)})
		}
		tt.Fail(agent.TurnError{Message: "stream cut"})
	})
	l := newLeanClient(t, e.srv)
	th := l.startThread()
	l.turnEnded(l.startTurn(th)) // warm up
	before := heapAfterGC()
	const turns = 8
	for range turns {
		l.turnEnded(l.startTurn(th))
	}
	got := l.read(th)
	kept := 0
	for _, it := range got.Turns[len(got.Turns)-1].Items {
		if it.CommandExecution != nil && it.CommandExecution.AggregatedOutput != nil {
			t.Fatalf("an ended turn's unfinished command shows %d bytes of deltas", len(*it.CommandExecution.AggregatedOutput))
		}
		if it.Reasoning != nil && len(it.Reasoning.Summary) != 0 {
			t.Fatalf("an ended turn's unfinished reasoning shows %d parts", len(it.Reasoning.Summary))
		}
		if m := it.AgentMessage; m != nil {
			if m.ID == "msg" && (!strings.HasPrefix(m.Text, "qqqq") || !strings.Contains(m.Text, "bytes dropped")) {
				t.Fatalf("the partial message shows %d bytes", len(m.Text))
			}
			kept += len(m.Text)
		}
	}
	if kept > maxViewBytes+64 {
		t.Fatalf("the ended turn keeps %d bytes of partial messages", kept)
	}
	grown := int64(heapAfterGC()) - int64(before)
	t.Logf("heap grew by %d bytes over %d ended turns", grown, turns)
	if grown > turns*(maxViewBytes+maxViewBytes/4) {
		t.Fatalf("the heap grew by %d MiB over %d ended turns: their unfinished items keep their deltas", grown>>20, turns)
	}
}

// A turn error quotes what the model's server said (an HTTP error body),
// which need not be UTF-8: its error and turn/completed notifications must
// still encode, or a JSON client never learns why its turn failed. The
// hostile soak found this.
func TestTurnErrorNotUTF8Encodes(t *testing.T) {
	e := wireTurnError(&agent.TurnError{Message: "unexpected status 500: \xff\xfe", AdditionalDetails: "\xe6\x97"})
	if _, err := json.Marshal(appproto.ErrorNotification{Error: *e, ThreadID: "t", TurnID: "u"}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(e.Message, "\uFFFD") || strings.Contains(e.Message, "\xff") {
		t.Fatalf("message %q", e.Message)
	}
}
