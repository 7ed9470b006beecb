package appserver

import (
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
)

// FuzzApplyEvents plays an arbitrary sequence of the events a model
// stream turns into (items, deltas of every kind with any index and size,
// turn boundaries, strays of other turns, deltas after completion) into a
// thread's state, projecting it as thread/read would between them. Nothing
// panics, every projection encodes, and what the views keep stays within
// their bounds; a completed item, or any item of an ended turn, keeps no
// delta.
//
// A script is read 3 bytes an event: the kind, an item (or turn) pick, an
// argument (a size or an index).
func FuzzApplyEvents(f *testing.F) {
	srv, err := New(Config{Core: agenttest.New(agenttest.Options{}), Logger: discardLogger()})
	if err != nil {
		f.Fatal(err)
	}
	defer srv.Close()
	f.Add([]byte{0, 0, 0, 1, 0, 0, 3, 0, 20, 2, 0, 0, 8, 0, 0})
	f.Fuzz(func(t *testing.T, script []byte) {
		th := &thread{srv: srv, id: "th_fuzz", st: threadState{status: appproto.ThreadStatus{Type: appproto.StatusIdle}}}
		var out outbox
		at := time.Unix(1_700_000_000, 0)
		// Bounds per script, so that a run stays quick: delta bytes (past
		// what a view keeps), and projections.
		budget, snapshots := 8<<20, 16
		ids := []string{"msg_a", "rs_b", "cmd_c", "msg_d"}
		for i := 0; i+3 <= len(script) && i < 3*4096; i += 3 {
			kind, pick, arg := script[i], script[i+1], script[i+2]
			id := ids[int(pick)%len(ids)]
			turn := []string{"turn_1", "turn_2", ""}[int(pick>>4)%3]
			at = at.Add(time.Millisecond)
			var msg agent.EventMsg
			switch kind % 11 {
			case 0:
				msg = agent.TurnStarted{}
			case 1:
				msg = agent.ItemStarted{Item: fuzzItem(id, false)}
			case 2:
				msg = agent.ItemCompleted{Item: fuzzItem(id, true)}
			case 3, 4:
				n := min(1<<(arg%22), budget)
				budget -= n
				delta := fuzzText(pick, n)
				if kind%11 == 3 {
					msg = agent.AgentMessageDelta{ItemID: id, Delta: delta}
				} else {
					msg = agent.CommandOutputDelta{ItemID: id, Stream: "stdout", Data: []byte(delta)}
				}
			case 5:
				msg = agent.ReasoningSummaryDelta{ItemID: id, SummaryIndex: fuzzIndex(arg), Delta: fuzzText(pick, int(arg))}
			case 6:
				msg = agent.ReasoningSummaryPartAdded{ItemID: id, SummaryIndex: fuzzIndex(arg)}
			case 7:
				msg = agent.ReasoningTextDelta{ItemID: id, ContentIndex: fuzzIndex(arg), Delta: fuzzText(pick, int(arg))}
			case 8:
				msg = agent.TurnCompleted{Status: agent.TurnStatusCompleted, LastAgentMessageID: id}
			case 9:
				msg = agent.Error{Err: agent.TurnError{Message: fuzzText(pick, int(arg))}, WillRetry: arg%2 == 0}
			case 10:
				if snapshots--; snapshots < 0 {
					continue
				}
				if _, err := json.Marshal(th.wireLocked(true)); err != nil {
					t.Fatalf("thread/read of the state does not encode: %v", err)
				}
				continue
			}
			if turn == "" {
				turn = "turn_1"
			}
			th.apply(agent.Event{Seq: uint64(i), TurnID: turn, Time: at, Msg: msg}, &out)
			out.items = out.items[:0] // no subscriber: nothing to send
		}
		if _, err := json.Marshal(th.wireLocked(true)); err != nil {
			t.Fatalf("thread/read of the state does not encode: %v", err)
		}
		check := func(v *itemView, ended bool) {
			if (v.done || ended) && (v.text.len() != 0 || v.output.len() != 0 || v.summary.parts != nil || v.content.parts != nil) {
				t.Fatalf("item %s (done %v, turn ended %v) keeps deltas", v.item.ItemID(), v.done, ended)
			}
			for _, b := range []*deltaBuf{&v.text, &v.output} {
				if len(b.head) > maxViewBytes/2 || len(b.tail) > maxViewBytes || len(b.String()) > maxViewBytes+64 {
					t.Fatalf("item %s keeps %d+%d bytes", v.item.ItemID(), len(b.head), len(b.tail))
				}
			}
			for _, p := range []*partsBuf{&v.summary, &v.content} {
				if len(p.parts) > maxViewParts || p.n > maxViewBytes {
					t.Fatalf("item %s keeps %d parts, %d bytes", v.item.ItemID(), len(p.parts), p.n)
				}
			}
		}
		if a := th.st.active; a != nil {
			for _, v := range a.items {
				check(v, false)
			}
		}
		for _, h := range th.st.history {
			for _, v := range h.views {
				check(v, true)
			}
		}
	})
}

func fuzzItem(id string, done bool) agent.Item {
	switch id[0] {
	case 'r':
		r := &agent.Reasoning{ID: id}
		if done {
			r.Summary = []string{"summary"}
		}
		return r
	case 'c':
		c := &agent.CommandExecution{ID: id, Command: "true", Cwd: "/", Status: agent.ItemStatusInProgress}
		if done {
			out, code := "out", 0
			c.Status, c.Output, c.ExitCode = agent.ItemStatusCompleted, &out, &code
		}
		return c
	}
	m := &agent.AgentMessage{ID: id}
	if done {
		m.Text = "answer"
	}
	return m
}

// fuzzIndex spreads a byte over the indices that matter: small ones,
// negative ones, the bound and far past it.
func fuzzIndex(arg byte) int {
	i := int(int8(arg))
	switch arg >> 6 {
	case 1:
		return i * maxViewParts
	case 2:
		return i * 30_000_000
	}
	return i
}

// fuzzText is n bytes of a pattern pick chooses: ASCII, multi-byte UTF-8,
// or bytes that are not UTF-8.
func fuzzText(pick byte, n int) string {
	pat := []string{"a", "é", "\xff", "日本", "\xe6\x97"}[int(pick)%5]
	s := strings.Repeat(pat, n/len(pat)+1)
	return s[:n]
}
