package appserver

import (
	"strings"
	"testing"

	"github.com/codexd/codexd/appproto"
)

// The background-terminal methods are experimental, take a loaded thread,
// and on a thread with no running session list nothing and terminate
// nothing.
func TestBackgroundTerminalMethods(t *testing.T) {
	r := newCompactEnv(t, &gatedModel{})
	plain := r.dial("plain")
	plain.initialize(nil)
	if e := plain.callErr(appproto.MethodThreadBackgroundTerminalsList, map[string]any{"threadId": "x"}); e.Code != -32600 || !strings.Contains(e.Message, "requires experimentalApi capability") {
		t.Fatalf("without experimentalApi %+v", e)
	}
	c := r.dial("tui")
	c.initialize(map[string]any{"experimentalApi": true})
	id := c.startThread(nil)
	unknown := "0195f5d8-6a2c-7a51-9bd8-5f1d3c4f2e10"
	for _, m := range []string{appproto.MethodThreadBackgroundTerminalsList, appproto.MethodThreadBackgroundTerminalsClean} {
		if e := c.callErr(m, map[string]any{"threadId": unknown}); e.Code != -32600 || e.Message != "thread not found: "+unknown {
			t.Fatalf("%s of an unknown thread %+v", m, e)
		}
	}
	if res := c.call(appproto.MethodThreadBackgroundTerminalsList, map[string]any{"threadId": id}); string(res.Result) != `{"data":[],"nextCursor":null}` {
		t.Fatalf("list %s", res.Result)
	}
	if e := c.callErr(appproto.MethodThreadBackgroundTerminalsList, map[string]any{"threadId": id, "cursor": "x"}); e.Code != -32600 || e.Message != "invalid cursor: x" {
		t.Fatalf("bad cursor %+v", e)
	}
	if res := c.call(appproto.MethodThreadBackgroundTerminalsTerminate, map[string]any{"threadId": id, "processId": "1234"}); string(res.Result) != `{"terminated":false}` {
		t.Fatalf("terminate %s", res.Result)
	}
	if e := c.callErr(appproto.MethodThreadBackgroundTerminalsTerminate, map[string]any{"threadId": id, "processId": "nope"}); e.Code != -32600 || e.Message != "invalid background terminal process id: invalid digit found in string" {
		t.Fatalf("terminate nope %+v", e)
	}
	if res := c.call(appproto.MethodThreadBackgroundTerminalsClean, map[string]any{"threadId": id}); string(res.Result) != `{}` {
		t.Fatalf("clean %s", res.Result)
	}
}
