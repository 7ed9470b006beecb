package appserver

import (
	"testing"

	"github.com/codexd/codexd/appproto"
)

// A relative runtime workspace root fails to deserialize in Codex 0.169
// (-32600 "Invalid request: AbsolutePathBuf deserialized without a base
// path") on thread/start, turn/start, thread/fork and thread/resume,
// before anything else is checked or recorded. Before, codexd took it
// against the cwd.
func TestRelativeRuntimeWorkspaceRootRefused(t *testing.T) {
	home, serverCwd := t.TempDir(), t.TempDir()
	r := newRealEnv(t, home, serverCwd)
	c := r.dial("roots")
	c.initialize(map[string]any{"experimentalApi": true})
	id := c.startThread(nil)
	const msg = "Invalid request: AbsolutePathBuf deserialized without a base path"
	for _, call := range []struct {
		method string
		params map[string]any
	}{
		{appproto.MethodThreadStart, map[string]any{"runtimeWorkspaceRoots": []string{"/ok", "rel"}}},
		{appproto.MethodTurnStart, map[string]any{"threadId": id, "input": text("hi"), "runtimeWorkspaceRoots": []string{"rel"}}},
		{appproto.MethodTurnStart, map[string]any{"threadId": "not-a-thread", "input": text("hi"), "runtimeWorkspaceRoots": []string{""}}},
		{appproto.MethodThreadFork, map[string]any{"threadId": id, "runtimeWorkspaceRoots": []string{"./x"}}},
		{appproto.MethodThreadResume, map[string]any{"threadId": id, "runtimeWorkspaceRoots": []string{"x"}}},
	} {
		if err := c.callErr(call.method, call.params); err.Code != -32600 || err.Message != msg {
			t.Fatalf("%s %v: %+v, want -32600 %q", call.method, call.params, err, msg)
		}
	}
	if got := c.call(appproto.MethodThreadLoadedList, map[string]any{}).str(t, "/data/0"); got != id {
		t.Fatalf("loaded threads: %q, want only %s", got, id)
	}
	if st := r.srv.thread(id).th.Settings(); st.RuntimeWorkspaceRoots != nil {
		t.Fatalf("a refused turn changed the roots: %q", st.RuntimeWorkspaceRoots)
	}
}
