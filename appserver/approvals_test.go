package appserver

import (
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
)

const approvalMethod = "item/commandExecution/requestApproval"

// Each decision maps onto the core's: accept runs the command, decline
// denies and the turn goes on, cancel denies and interrupts, an error
// answer fails the item. The request's order matches Codex's.
func TestApprovalDecisions(t *testing.T) {
	cases := []struct {
		answer     string
		decision   agent.Decision
		itemStatus string
		turnStatus string
	}{
		{`{"decision":"accept"}`, agent.Accept, "completed", "completed"},
		{`{"decision":"acceptForSession"}`, agent.AcceptForSession, "completed", "completed"},
		{`{"decision":{"acceptWithExecpolicyAmendment":{"execpolicy_amendment":["echo"]}}}`, agent.Accept, "completed", "completed"},
		{`{"decision":"decline"}`, agent.Decline, "declined", "completed"},
		{`{"decision":"cancel"}`, agent.Cancel, "declined", "interrupted"},
		{`error`, agent.RequestFailed, "failed", "completed"},
		{`{"decision":"nonsense"}`, agent.RequestFailed, "failed", "completed"},
	}
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.answer, "/", "_"), func(t *testing.T) {
			e := newEnv(t, agenttest.Options{Turn: agenttest.ExecScript("call_1", "echo created")}, Config{})
			c := e.dial("approver")
			c.initialize(nil)
			thread := c.startThread(map[string]any{"approvalPolicy": "untrusted"})
			c.startTurn(thread, "run it")
			req := c.serverRequest(approvalMethod)
			if string(req.ID) != "0" || req.str(t, "/itemId") != "call_1" || req.str(t, "/command") != "echo created" {
				t.Fatalf("request: %s", req)
			}
			if tc.answer == "error" {
				c.send(`{"id":0,"error":{"code":-32000,"message":"client refuses"}}`)
			} else {
				c.send(`{"id":0,"result":` + tc.answer + `}`)
			}
			resolved := c.note("serverRequest/resolved")
			if string(mustParam(t, resolved.Params, "/requestId")) != "0" {
				t.Fatalf("resolved: %s", resolved)
			}
			item := c.next("the command's item/completed", func(m *wmsg) bool {
				return m.Method == "item/completed" && strings.Contains(string(m.Params), `"type":"commandExecution"`)
			})
			if got := item.str(t, "/item/status"); got != tc.itemStatus {
				t.Fatalf("item status %s, want %s", got, tc.itemStatus)
			}
			done := c.note("turn/completed")
			if got := done.str(t, "/turn/status"); got != tc.turnStatus {
				t.Fatalf("turn status %s, want %s", got, tc.turnStatus)
			}
			ds := e.core.Thread(thread).Decisions()
			if len(ds) != 1 || ds[0].(agent.ExecDecision).Decision != tc.decision {
				t.Fatalf("decisions %+v, want one %s", ds, tc.decision)
			}
			log := methodsOf(c.logged())
			if i, j, k := indexOf(log, "request:"+approvalMethod), indexOf(log, "serverRequest/resolved"), len(log)-1; !(i < j && j < k) {
				t.Fatalf("order %v", log)
			}
		})
	}
}

// A turn boundary withdraws the pending approval: serverRequest/resolved
// follows turn/completed (Codex's order), and a late answer reaches no one.
func TestTurnBoundaryCancelsPendingApproval(t *testing.T) {
	e := newEnv(t, agenttest.Options{Turn: agenttest.ExecScript("call_1", "echo x")}, Config{})
	c := e.dial("boundary")
	c.initialize(nil)
	thread := c.startThread(nil)
	turn := c.startTurn(thread, "run")
	c.serverRequest(approvalMethod)
	status := c.next("waitingOnApproval", func(m *wmsg) bool {
		return m.Method == "thread/status/changed" && strings.Contains(string(m.Params), "waitingOnApproval")
	})
	_ = status
	c.call(appproto.MethodTurnInterrupt, map[string]any{"threadId": thread, "turnId": turn})
	c.note("turn/completed")
	resolved := c.note("serverRequest/resolved")
	if string(mustParam(t, resolved.Params, "/requestId")) != "0" {
		t.Fatalf("resolved: %s", resolved)
	}
	c.send(`{"id":0,"result":{"decision":"accept"}}`) // too late
	c.barrier()
	if ds := e.core.Thread(thread).Decisions(); len(ds) != 0 {
		t.Fatalf("a decision reached the core after the turn ended: %+v", ds)
	}
	log := methodsOf(c.logged())
	if indexOf(log, "turn/completed") > indexOf(log, "serverRequest/resolved") {
		t.Fatalf("order %v", log)
	}

	// A turn that ends on its own while a request is pending withdraws it
	// the same way.
	e.core.SetTurn(func(tn *agenttest.Turn) {
		tn.Emit(agent.ExecApprovalRequest{CallID: "call_2", Command: "rm -rf /tmp/x", Decisions: []agent.Decision{agent.Accept}})
		tn.AgentMessage("m", "never mind")
	})
	c.startTurn(thread, "again")
	req := c.serverRequest(approvalMethod)
	if string(req.ID) != "1" {
		t.Fatalf("second request id %s, want 1", req.ID)
	}
	c.note("turn/completed")
	c.note("serverRequest/resolved")
	c.send(`{"id":1,"result":{"decision":"accept"}}`)
	c.barrier()
	if ds := e.core.Thread(thread).Decisions(); len(ds) != 0 {
		t.Fatalf("a decision reached the core after its turn: %+v", ds)
	}
}

// Two subscribers get the request under their own id 0; the first answer
// wins, both learn it was resolved, the later answer is ignored.
func TestTwoClientsRaceApproval(t *testing.T) {
	e := newEnv(t, agenttest.Options{Turn: plainFirst(agenttest.ExecScript("call_1", "echo x"))}, Config{})
	a, b := e.dial("a"), e.dial("b")
	a.initialize(nil)
	b.initialize(nil)
	thread := a.startThread(nil)
	join(a, b, thread)
	a.startTurn(thread, "run")
	ra, rb := a.serverRequest(approvalMethod), b.serverRequest(approvalMethod)
	if string(ra.ID) != "0" || string(rb.ID) != "0" {
		t.Fatalf("ids %s and %s, want 0 on each connection", ra.ID, rb.ID)
	}
	// Both answer at once.
	a.send(`{"id":0,"result":{"decision":"accept"}}`)
	b.send(`{"id":0,"result":{"decision":"decline"}}`)
	a.note("serverRequest/resolved")
	b.note("serverRequest/resolved")
	a.note("turn/completed")
	b.note("turn/completed")
	ds := e.core.Thread(thread).Decisions()
	if len(ds) != 1 {
		t.Fatalf("decisions %+v, want exactly one", ds)
	}
	// Whichever won, the item agrees with it.
	a.barrier()
	b.barrier()
	for _, c := range []*jclient{a, b} {
		n := 0
		for _, m := range c.logged() {
			if m.Method == "serverRequest/resolved" {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%s got %d serverRequest/resolved", c.name, n)
		}
	}
}

// A connection that drops does not strand the core's waiter: with no
// subscriber left, the request is cancelled and the core told.
func TestDroppedConnectionCancelsApproval(t *testing.T) {
	e := newEnv(t, agenttest.Options{Turn: agenttest.ExecScript("call_1", "echo x")}, Config{})
	watcher := e.dial("watcher")
	watcher.initialize(nil)
	c := e.dial("leaver")
	c.initialize(nil)
	thread := c.startThread(nil)
	c.startTurn(thread, "run")
	c.serverRequest(approvalMethod)
	c.conn.Close()
	// The watcher (not subscribed) sees the turn end through the status.
	watcher.next("idle", func(m *wmsg) bool {
		return m.Method == "thread/status/changed" && strings.Contains(string(m.Params), `"idle"`)
	})
	ds := e.core.Thread(thread).Decisions()
	if len(ds) != 1 || ds[0].(agent.ExecDecision).Decision != agent.Cancel {
		t.Fatalf("decisions %+v, want one cancel", ds)
	}
	// With another subscriber left, the request stays for it to answer.
	e.core.SetTurn(agenttest.ExecScript("call_2", "echo y"))
	d := e.dial("d")
	d.initialize(nil)
	f := e.dial("f")
	f.initialize(nil)
	d.call(appproto.MethodThreadResume, map[string]any{"threadId": thread})
	f.call(appproto.MethodThreadResume, map[string]any{"threadId": thread})
	d.startTurn(thread, "run again")
	d.serverRequest(approvalMethod)
	f.serverRequest(approvalMethod)
	d.conn.Close()
	f.send(`{"id":0,"result":{"decision":"accept"}}`)
	f.note("serverRequest/resolved")
	f.note("turn/completed")
	ds = e.core.Thread(thread).Decisions()
	if len(ds) != 2 || ds[1].(agent.ExecDecision).Decision != agent.Accept {
		t.Fatalf("decisions %+v", ds)
	}
}

// File changes and questions are server requests too.
func TestPatchAndUserInputRequests(t *testing.T) {
	e := newEnv(t, agenttest.Options{Turn: func(tn *agenttest.Turn) {
		fc := &agent.FileChange{ID: "patch_1", Status: agent.ItemStatusInProgress,
			Changes: []agent.FileUpdate{{Path: "/w/a.go", Kind: "update", Diff: "@@ -1 +1 @@\n-a\n+b\n"}}}
		tn.Emit(agent.ItemStarted{Item: fc})
		d, err := tn.PatchApproval(agent.PatchApprovalRequest{CallID: "patch_1", Changes: fc.Changes, Reason: "fix"})
		if err != nil {
			return
		}
		done := *fc
		done.Status = agent.ItemStatusCompleted
		if d.Decision != agent.Accept {
			done.Status = agent.ItemStatusDeclined
		}
		tn.Emit(agent.ItemCompleted{Item: &done})
		ans, err := tn.AskUser(agent.UserInputRequest{CallID: "ask_1", Questions: []agent.Question{{ID: "q1", Header: "H", Question: "Which?",
			Options: []agent.QuestionOption{{Label: "A", Description: "first"}}}}})
		if err != nil {
			return
		}
		tn.AgentMessage("m", "you said "+strings.Join(ans.Answers["q1"], ","))
	}}, Config{})
	c := e.dial("patch")
	c.initialize(nil)
	thread := c.startThread(nil)
	c.startTurn(thread, "edit")
	req := c.serverRequest("item/fileChange/requestApproval")
	c.send(`{"id":` + string(req.ID) + `,"result":{"decision":"accept"}}`)
	c.note("serverRequest/resolved")
	q := c.serverRequest("item/tool/requestUserInput")
	c.next("waitingOnUserInput", func(m *wmsg) bool {
		return m.Method == "thread/status/changed" && strings.Contains(string(m.Params), "waitingOnUserInput")
	})
	c.send(`{"id":` + string(q.ID) + `,"result":{"answers":{"q1":{"answers":["A"]}}}}`)
	msg := c.next("the answer", func(m *wmsg) bool {
		return m.Method == "item/completed" && strings.Contains(string(m.Params), "you said A")
	})
	_ = msg
	c.note("turn/completed")
}

// A client that resumes a thread with a pending approval gets it too,
// under its own id, and may answer it.
func TestResumeReplaysPendingApproval(t *testing.T) {
	e := newEnv(t, agenttest.Options{Turn: agenttest.ExecScript("call_1", "echo x")}, Config{})
	a, b := e.dial("a"), e.dial("b")
	a.initialize(nil)
	b.initialize(nil)
	thread := a.startThread(nil)
	a.startTurn(thread, "run")
	a.serverRequest(approvalMethod)
	b.call(appproto.MethodThreadResume, map[string]any{"threadId": thread})
	req := b.serverRequest(approvalMethod)
	if string(req.ID) != "0" || req.str(t, "/itemId") != "call_1" {
		t.Fatalf("replayed: %s", req)
	}
	b.send(`{"id":0,"result":{"decision":"accept"}}`)
	a.note("serverRequest/resolved")
	b.note("serverRequest/resolved")
	b.note("turn/completed")
	if ds := e.core.Thread(thread).Decisions(); len(ds) != 1 || ds[0].(agent.ExecDecision).Decision != agent.Accept {
		t.Fatalf("decisions %+v", ds)
	}
}
