package appserver

import (
	"strings"
	"testing"

	"github.com/codexd/codexd/appproto"
)

// thread/shellCommand as Codex 0.169 answers it: validation errors first,
// then {} and a turn of its own whose one item is the userShell command
// (here failing to start: the test's core has no exec-server), kept in the
// thread's history.
func TestThreadShellCommand(t *testing.T) {
	r := newCompactEnv(t, &gatedModel{})
	c := r.dial("shell")
	c.initialize(nil)
	id := c.startThread(nil)
	if e := c.callErr(appproto.MethodThreadShellCommand, map[string]any{"threadId": id, "command": " \t"}); e.Code != -32600 || e.Message != "command must not be empty" {
		t.Fatalf("blank command %+v", e)
	}
	if e := c.callErr(appproto.MethodThreadShellCommand, map[string]any{"threadId": id, "command": "ls", "timeoutMs": -1}); e.Code != -32602 || e.Message != "thread/shellCommand timeoutMs must be non-negative, got -1" {
		t.Fatalf("negative timeout %+v", e)
	}
	if e := c.callErr(appproto.MethodThreadShellCommand, map[string]any{"threadId": "0195f5d8-6a2c-7a51-9bd8-5f1d3c4f2e10", "command": "ls"}); e.Code != -32600 || e.Message != "thread not found: 0195f5d8-6a2c-7a51-9bd8-5f1d3c4f2e10" {
		t.Fatalf("unknown thread %+v", e)
	}
	if e := c.callErr(appproto.MethodThreadShellCommand, map[string]any{"threadId": id}); e.Code != -32600 || !strings.Contains(e.Message, "missing field `command`") {
		t.Fatalf("no command %+v", e)
	}
	if res := c.call(appproto.MethodThreadShellCommand, map[string]any{"threadId": id, "command": "echo hi"}); string(res.Result) != "{}" {
		t.Fatalf("answer %s", res.Result)
	}
	turnID := c.note("turn/started").str(t, "/turn/id")
	st := c.note("item/started")
	if st.str(t, "/item/source") != "userShell" || st.str(t, "/item/type") != "commandExecution" || st.str(t, "/turnId") != turnID ||
		!strings.HasSuffix(st.str(t, "/item/command"), " -lc 'echo hi'") {
		t.Fatalf("item/started %s", st)
	}
	done := c.note("item/completed")
	if done.str(t, "/item/status") != "failed" || !strings.HasPrefix(done.str(t, "/item/aggregatedOutput"), "execution error: ") {
		t.Fatalf("item/completed %s", done)
	}
	if tc := c.note("turn/completed"); tc.str(t, "/turn/status") != "completed" || tc.str(t, "/turn/id") != turnID {
		t.Fatalf("turn/completed %s", tc)
	}
}
