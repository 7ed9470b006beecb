package appserver

import (
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
)

// blockedTurn is a script that starts an agent message and waits on gate.
func blockedTurn(gate *agenttest.Gate) agenttest.TurnFunc {
	return func(t *agenttest.Turn) {
		t.Emit(agent.ItemStarted{Item: &agent.AgentMessage{ID: "msg_1"}})
		t.Emit(agent.AgentMessageDelta{ItemID: "msg_1", Delta: "partial"})
		if t.Wait(gate) != nil {
			return
		}
		t.AgentMessage("msg_2", "done")
	}
}

// The answer to turn/interrupt waits until the core reports the turn
// ended, and goes out before turn/completed {status:"interrupted"}.
func TestInterruptAnswerWaitsForAbort(t *testing.T) {
	core := newGatedCore(agenttest.Options{Turn: blockedTurn(agenttest.NewGate())})
	e := newEnvWith(t, core, Config{})
	c := e.dial("interrupt")
	c.initialize(nil)
	thread := c.startThread(nil)
	turn := c.startTurn(thread, "slow")
	c.note("item/agentMessage/delta")
	// The core has ended the turn once Interrupt is submitted, but the
	// app-server has not seen its TurnCompleted yet.
	core.hold(func(ev agent.Event) bool { _, ok := ev.Msg.(agent.TurnCompleted); return ok })
	id := c.request(appproto.MethodTurnInterrupt, map[string]any{"threadId": thread, "turnId": turn})
	c.barrier()
	if c.has(func(m *wmsg) bool { return string(m.ID) == id && m.Method == "" }) {
		t.Fatal("turn/interrupt was answered before the core reported the abort")
	}
	core.release()
	resp := c.response(id)
	if resp.Error != nil || string(resp.Result) != "{}" {
		t.Fatalf("interrupt: %s", resp)
	}
	done := c.note("turn/completed")
	if done.str(t, "/turn/status") != "interrupted" || done.str(t, "/turn/itemsView") != "notLoaded" {
		t.Fatalf("turn/completed: %s", done)
	}
	log := methodsOf(c.logged())
	ri, si, ci := indexOf(log, "response:"+id), -1, indexOf(log, "turn/completed")
	for i, m := range log {
		if m == "thread/status/changed" && i > ri {
			si = i
			break
		}
	}
	if !(ri < si && si < ci) {
		t.Fatalf("want response, status idle, turn/completed; got %v", log)
	}
	// The partial message never completes; interrupting again fails.
	if err := c.callErr(appproto.MethodTurnInterrupt, map[string]any{"threadId": thread, "turnId": turn}); err.Message != "no active turn to interrupt" {
		t.Fatalf("second interrupt: %+v", err)
	}
}

func TestInterruptErrors(t *testing.T) {
	gate := agenttest.NewGate()
	e := newEnv(t, agenttest.Options{Turn: blockedTurn(gate)}, Config{})
	c := e.dial("interrupt-errors")
	c.initialize(nil)
	thread := c.startThread(nil)
	if err := c.callErr(appproto.MethodTurnInterrupt, map[string]any{"threadId": thread, "turnId": "any"}); err.Code != -32600 || err.Message != "no active turn to interrupt" {
		t.Fatalf("idle: %+v", err)
	}
	if err := c.callErr(appproto.MethodTurnInterrupt, map[string]any{"threadId": "00000000-0000-0000-0000-000000000000", "turnId": "x"}); err.Message != "thread not found: 00000000-0000-0000-0000-000000000000" {
		t.Fatalf("unknown thread: %+v", err)
	}
	turn := c.startTurn(thread, "x")
	if err := c.callErr(appproto.MethodTurnInterrupt, map[string]any{"threadId": thread, "turnId": "wrong"}); err.Message != "expected active turn id wrong but found "+turn {
		t.Fatalf("mismatch: %+v", err)
	}
	gate.Open()
	c.note("turn/completed")
}

// Every turn/steer error, with Codex's messages.
func TestTurnSteerErrors(t *testing.T) {
	gate := agenttest.NewGate()
	e := newEnv(t, agenttest.Options{Turn: blockedTurn(gate)}, Config{})
	c := e.dial("steer")
	c.initialize(nil)
	thread := c.startThread(nil)
	steer := func(expected string, input any) *wireErr {
		return c.callErr(appproto.MethodTurnSteer, map[string]any{"threadId": thread, "expectedTurnId": expected, "input": input})
	}
	if err := steer("x", text("a")); err.Message != "no active turn to steer" {
		t.Fatalf("no active turn: %+v", err)
	}
	if err := c.callErr(appproto.MethodTurnSteer, map[string]any{"threadId": "00000000-0000-0000-0000-000000000000", "expectedTurnId": "x", "input": text("a")}); err.Message != "thread not found: 00000000-0000-0000-0000-000000000000" {
		t.Fatalf("unknown thread: %+v", err)
	}
	if err := c.callErr(appproto.MethodTurnSteer, map[string]any{"threadId": thread, "input": text("a")}); err.Message != "Invalid request: missing field `expectedTurnId`" {
		t.Fatalf("missing expectedTurnId: %+v", err)
	}
	if err := steer("", text("a")); err.Message != "expectedTurnId must not be empty" {
		t.Fatalf("empty expectedTurnId: %+v", err)
	}
	turn := c.startTurn(thread, "x")
	if err := steer("wrong", text("a")); err.Code != -32600 || err.Message != "expected active turn id `wrong` but found `"+turn+"`" {
		t.Fatalf("mismatch: %+v", err)
	}
	if err := steer(turn, []any{}); err.Message != "input must not be empty" {
		t.Fatalf("empty input: %+v", err)
	}
	big := strings.Repeat("é", appproto.MaxInputChars+1)
	err := steer(turn, text(big))
	if err.Code != -32602 || err.Message != "Input exceeds the maximum length of 1048576 characters." ||
		string(err.Data) != `{"input_error_code":"input_too_large","max_chars":1048576,"actual_chars":1048577}` {
		t.Fatalf("too large: %+v %s", err, err.Data)
	}
	if err := steer(turn, []any{map[string]any{"type": "image", "url": "https://example.com/a.png"}}); err.Code != -32600 || err.Message != "remote image URLs are not supported; use an inline data URL instead" {
		t.Fatalf("a remote image URL: %+v", err)
	}
	// A correct steer returns the active turn's id and the input becomes
	// a user message of that turn, with the client's id.
	ok := c.call(appproto.MethodTurnSteer, map[string]any{"threadId": thread, "expectedTurnId": turn, "input": text("more"), "clientUserMessageId": "c1"})
	if ok.str(t, "/turnId") != turn {
		t.Fatalf("steer: %s", ok)
	}
	um := c.next("the steered user message", func(m *wmsg) bool {
		return m.Method == "item/completed" && strings.Contains(string(m.Params), `"clientId":"c1"`)
	})
	if um.str(t, "/turnId") != turn {
		t.Fatalf("steered message in turn %s", um.str(t, "/turnId"))
	}
	gate.Open()
	c.note("turn/completed")

	// Review turns cannot be steered: the error's data is a TurnError.
	e.core.SetTurnKind("review")
	gate2 := agenttest.NewGate()
	e.core.SetTurn(blockedTurn(gate2))
	review := c.startTurn(thread, "review this")
	err = steer(review, text("a"))
	if err.Code != -32600 || err.Message != "cannot steer a review turn" ||
		string(err.Data) != `{"message":"cannot steer a review turn","codexErrorInfo":{"activeTurnNotSteerable":{"turnKind":"review"}},"additionalDetails":null,"misalignment":null}` {
		t.Fatalf("review: %+v %s", err, err.Data)
	}
	gate2.Open()
	c.note("turn/completed")
}

// turn/start validates before it touches anything: each refusal leaves the
// core without a submission.
func TestTurnStartValidation(t *testing.T) {
	e := newEnv(t, agenttest.Options{}, Config{Requirements: &Requirements{AllowedApprovalPolicies: []string{"never", "on-request"}}})
	c := e.dial("validation")
	c.initialize(map[string]any{"experimentalApi": true})
	thread := c.startThread(nil)
	start := func(extra map[string]any) *wireErr {
		p := map[string]any{"threadId": thread, "input": text("hi")}
		for k, v := range extra {
			p[k] = v
		}
		return c.callErr(appproto.MethodTurnStart, p)
	}
	if err := c.callErr(appproto.MethodTurnStart, map[string]any{"threadId": "00000000-0000-0000-0000-000000000000", "input": text("x")}); err.Message != "thread not found: 00000000-0000-0000-0000-000000000000" {
		t.Fatalf("not loaded: %+v", err)
	}
	big := strings.Repeat("x", appproto.MaxInputChars/2+1)
	err := start(map[string]any{"input": []any{text(big)[0], text(big)[0]}})
	if err.Code != -32602 || string(err.Data) != `{"input_error_code":"input_too_large","max_chars":1048576,"actual_chars":1048578}` {
		t.Fatalf("too large: %+v %s", err, err.Data)
	}
	for _, url := range []string{"https://example.com/a.png", "HTTP://example.com/a.png"} {
		if err := start(map[string]any{"input": []any{map[string]any{"type": "image", "url": url}}}); err.Code != -32600 || err.Message != "remote image URLs are not supported; use an inline data URL instead" {
			t.Fatalf("a remote image URL: %+v", err)
		}
	}
	if err := start(map[string]any{"permissions": ":workspace", "sandboxPolicy": map[string]any{"type": "readOnly"}}); err.Message != "`permissions` cannot be combined with `sandboxPolicy`" {
		t.Fatalf("permissions and sandboxPolicy: %+v", err)
	}
	if err := start(map[string]any{"approvalPolicy": "untrusted"}); err.Message != "approval policy `untrusted` is not allowed by the managed requirements" {
		t.Fatalf("requirements: %+v", err)
	}
	if err := start(map[string]any{"permissions": ":nope"}); err.Message != "unknown permission profile `:nope`" {
		t.Fatalf("unknown profile: %+v", err)
	}
	if err := start(map[string]any{"input": []any{}}); err.Code != -32603 || err.Message != "failed to submit turn input: EmptyInput" {
		t.Fatalf("empty input: %+v", err)
	}
	th := e.core.Thread(thread)
	if th.ActiveTurn() != nil {
		t.Fatal("a refused turn/start reached the core")
	}
	if _, turns, _ := e.core.ReadThread(bg, thread, true); len(turns) != 0 {
		t.Fatalf("a refused turn/start left turns: %+v", turns)
	}
	// At the limit it is accepted; the answer is "accepted", in progress.
	ok := c.call(appproto.MethodTurnStart, map[string]any{"threadId": thread, "input": text(strings.Repeat("x", appproto.MaxInputChars))})
	if ok.str(t, "/turn/status") != "inProgress" || string(mustParam(t, ok.Result, "/turn/items")) != "[]" {
		t.Fatalf("accepted: %s", ok)
	}
	c.note("turn/completed")
}

func mustParam(t *testing.T, doc []byte, path string) []byte {
	t.Helper()
	var v any
	if err := pointer(doc, path, &v); err != nil {
		t.Fatal(err)
	}
	b, _ := jsonMarshal(v)
	return b
}
