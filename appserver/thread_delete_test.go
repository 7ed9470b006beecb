package appserver

import (
	"strings"
	"testing"

	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
)

func init() {
	responseSchema[appproto.MethodThreadDelete] = "v2/ThreadDeleteResponse"
}

func TestThreadDelete(t *testing.T) {
	e := newEnv(t, agenttest.Options{}, Config{})
	c := e.dial("a")
	c.initialize(nil)
	other := e.dial("b")
	other.initialize(nil)
	thread := c.startThread(nil)
	c.startTurn(thread, "hello")
	c.note("turn/completed")

	c.call(appproto.MethodThreadDelete, map[string]any{"threadId": thread})
	// Unloaded first, then deleted, on every connection.
	for _, cl := range []*jclient{c, other} {
		cl.next("notLoaded", func(m *wmsg) bool {
			return m.Method == "thread/status/changed" && m.str(t, "/threadId") == thread && m.str(t, "/status/type") == "notLoaded"
		})
		if got := cl.note("thread/deleted").str(t, "/threadId"); got != thread {
			t.Fatalf("thread/deleted for %s", got)
		}
	}
	if e.srv.thread(thread) != nil {
		t.Fatal("still loaded")
	}
	if e := c.callErr(appproto.MethodThreadDelete, map[string]any{"threadId": thread}); e.Code != -32600 || e.Message != "no rollout found for thread id "+thread {
		t.Fatalf("second delete: %d %s", e.Code, e.Message)
	}
	list := c.call(appproto.MethodThreadList, map[string]any{})
	if got := string(list.Result); got == "" || strings.Contains(got, thread) {
		t.Fatalf("thread/list still has it: %s", got)
	}
	unknown := "01a236f8-33cc-7bd1-ac0c-22322c765906"
	if e := c.callErr(appproto.MethodThreadDelete, map[string]any{"threadId": unknown}); e.Message != "no rollout found for thread id "+unknown {
		t.Fatalf("unknown: %s", e.Message)
	}
	if e := c.callErr(appproto.MethodThreadDelete, map[string]any{"threadId": "bogus"}); e.Code != -32600 || e.Message[:18] != "invalid thread id:" {
		t.Fatalf("bogus: %s", e.Message)
	}
	eph := c.startThread(map[string]any{"ephemeral": true})
	if e := c.callErr(appproto.MethodThreadDelete, map[string]any{"threadId": eph}); e.Message != "thread is not persisted and cannot be deleted: "+eph {
		t.Fatalf("ephemeral: %s", e.Message)
	}
	// A loaded thread with nothing stored yet is unloaded and reported
	// deleted, as in Codex.
	fresh := c.startThread(nil)
	c.call(appproto.MethodThreadDelete, map[string]any{"threadId": fresh})
	if got := c.note("thread/deleted").str(t, "/threadId"); got != fresh {
		t.Fatalf("thread/deleted for %s", got)
	}
}
