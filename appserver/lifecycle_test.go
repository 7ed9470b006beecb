package appserver

import (
	"testing"

	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
)

// An empty turnId is Codex's start-up interrupt: it is answered {} as soon
// as it is submitted, on an idle thread as on a running turn (which it
// interrupts), so that it never holds one of the connection's request
// slots. Before, it was recorded as waiting for a turn "" that never ends:
// after MaxInbound of them every request of the connection got -32001.
func TestStartupInterruptIsAnsweredAtOnce(t *testing.T) {
	gate := agenttest.NewGate()
	e := newEnv(t, agenttest.Options{Turn: blockedTurn(gate)}, Config{MaxInbound: 4})
	c := e.dial("startup-interrupt")
	c.initialize(nil)
	thread := c.startThread(nil)
	// More than the connection's request slots, each answered.
	for range 6 {
		if res := c.call(appproto.MethodTurnInterrupt, map[string]any{"threadId": thread, "turnId": ""}); string(res.Result) != "{}" {
			t.Fatalf("idle start-up interrupt: %s", res)
		}
	}
	turn := c.startTurn(thread, "slow")
	c.note("item/agentMessage/delta")
	if res := c.call(appproto.MethodTurnInterrupt, map[string]any{"threadId": thread, "turnId": ""}); string(res.Result) != "{}" {
		t.Fatalf("start-up interrupt of a running turn: %s", res)
	}
	done := c.note("turn/completed")
	if done.str(t, "/turn/id") != turn || done.str(t, "/turn/status") != "interrupted" {
		t.Fatalf("turn/completed: %s", done)
	}
	// The connection still has its slots.
	c.call(appproto.MethodModelList, map[string]any{})
	gate.Open()
}
