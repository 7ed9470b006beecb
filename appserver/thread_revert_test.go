package appserver

import (
	"strings"
	"testing"

	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
)

func init() {
	responseSchema[appproto.MethodThreadRevert] = "v2/ThreadRevertResponse"
}

func TestThreadRevert(t *testing.T) {
	e := newEnv(t, agenttest.Options{}, Config{})
	c := e.dial("a")
	c.initialize(nil)
	thread := c.startThread(nil)
	var turns []string
	for _, text := range []string{"one", "two", "three"} {
		turns = append(turns, c.startTurn(thread, text))
		c.note("turn/completed")
	}
	if e := c.callErr(appproto.MethodThreadRevert, map[string]any{"threadId": thread, "beforeTurnId": "nope"}); e.Code != -32600 || e.Message != "turn not found: nope" {
		t.Fatalf("unknown turn: %d %s", e.Code, e.Message)
	}
	unknown := "01a236f8-33cc-7bd1-ac0c-22322c765906"
	if e := c.callErr(appproto.MethodThreadRevert, map[string]any{"threadId": unknown, "beforeTurnId": "x"}); e.Message != "thread not found: "+unknown {
		t.Fatalf("unknown thread: %s", e.Message)
	}
	r := c.call(appproto.MethodThreadRevert, map[string]any{"threadId": thread, "beforeTurnId": turns[1]})
	if got := r.str(t, "/thread/id"); got != thread {
		t.Fatalf("reverted %s", got)
	}
	if got := c.note("thread/reverted").str(t, "/threadId"); got != thread {
		t.Fatalf("thread/reverted for %s", got)
	}
	read := c.call(appproto.MethodThreadRead, map[string]any{"threadId": thread, "includeTurns": true})
	if s := string(read.Result); !strings.Contains(s, turns[0]) || strings.Contains(s, turns[1]) || strings.Contains(s, turns[2]) {
		t.Fatalf("history after revert: %s", s)
	}
	// Still loaded and subscribed: a new turn streams to the caller.
	next := c.startTurn(thread, "four")
	done := c.next("turn/completed", func(m *wmsg) bool { return m.Method == "turn/completed" && m.str(t, "/turn/id") == next })
	if done.str(t, "/turn/status") != "completed" {
		t.Fatalf("turn after revert: %s", done)
	}
}
