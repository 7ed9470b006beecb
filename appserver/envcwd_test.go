package appserver

import (
	"strings"
	"testing"

	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/environment"
)

// insideRoots compares paths by their components once cleaned, in the
// path syntax of each.
func TestInsideRoots(t *testing.T) {
	for _, tc := range []struct {
		cwd   string
		roots []string
		want  bool
	}{
		{"/a/b", []string{"/a/b"}, true},        // the root itself
		{"/a/b/c/d", []string{"/a/b"}, true},    // nested
		{"/a/bc", []string{"/a/b"}, false},      // a prefix, not a component
		{"/a/b/", []string{"/a/b"}, true},       // trailing slash on the cwd
		{"/a/b", []string{"/a/b/"}, true},       // and on the root
		{"/a/b/c", []string{"/a/b//"}, true},    // doubled
		{"/a/b/../c", []string{"/a/b"}, false},  // .. escapes
		{"/a/b/..", []string{"/a/b"}, false},    // .. to the parent
		{"/a/b/c/..", []string{"/a/b"}, true},   // .. stays inside
		{"/a/b/./c", []string{"/a/b"}, true},    // .
		{"/a/x/../b/c", []string{"/a/b"}, true}, // .. into the root
		{"/a/b/c", []string{"/a/x/../b"}, true}, // .. in the root
		{"/../../a/b", []string{"/a/b"}, true},  // .. above / stays at /
		{"/a", []string{"/a/b"}, false},         // the parent
		{"/anything", []string{"/"}, true},      // everything is under /
		{"/", []string{"/a"}, false},            // / is under nothing else
		{"/q/r", []string{"/p", "/q"}, true},    // the second root
		{"/z", []string{"/p", "/q"}, false},     // none of them
		{`C:\w\x`, []string{`C:\w`}, true},      // Windows
		{`C:\wx`, []string{`C:\w`}, false},      // Windows prefix
		{`c:/w/x`, []string{`C:\W`}, true},      // Windows is case-insensitive, either separator
		{`C:\w\..\v`, []string{`C:\w`}, false},  // Windows ..
		{`D:\w`, []string{`C:\w`}, false},       // another drive
		{`/w`, []string{`C:\w`}, false},         // another syntax
		{`\\srv\share\d`, []string{`\\srv\share`}, true},
	} {
		if got := insideRoots(tc.cwd, tc.roots); got != tc.want {
			t.Errorf("insideRoots(%q, %q) = %v, want %v", tc.cwd, tc.roots, got, tc.want)
		}
	}
}

// A cwd outside the environment's non-empty runtime workspace roots is
// refused by thread/start and turn/start (-32600) before anything is
// recorded: no thread, no turn, no change of the thread's environments.
// Empty or omitted roots refuse nothing (omitted means the cwd itself).
func TestEnvironmentCwdOutsideRoots(t *testing.T) {
	_, url := envExecServer(t)
	reg := envRegistry(t)
	if err := reg.Add(environment.AddParams{ID: "r1", URL: url}); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, agenttest.Options{}, Config{Environments: reg})
	c := e.dial("A")
	c.initialize(map[string]any{"experimentalApi": true})
	env := func(cwd string, roots ...string) map[string]any {
		m := map[string]any{"environmentId": "r1", "cwd": cwd}
		if roots != nil {
			m["runtimeWorkspaceRoots"] = roots
		}
		return m
	}
	outside := func(cwd string) string {
		return "invalid cwd for environment `r1`: path `" + cwd + "` is outside the environment's runtime workspace roots"
	}
	refused := []struct {
		envs []map[string]any
		msg  string
	}{
		{[]map[string]any{env("/srv/ab", "/srv/a")}, outside("/srv/ab")},
		{[]map[string]any{env("/srv/a/../b", "/srv/a")}, outside("/srv/a/../b")},
		{[]map[string]any{env("/srv/a/..", "/srv/a/")}, outside("/srv/a/..")},
		{[]map[string]any{env("/srv", "/srv/a", "/srv/b")}, outside("/srv")},
		{[]map[string]any{{"environmentId": "local", "cwd": "/w"}, env("/x", "/y")}, outside("/x")},
		{[]map[string]any{{"environmentId": "nope", "cwd": "/w", "runtimeWorkspaceRoots": []string{"/w"}}}, "unknown turn environment id `nope`"},
	}
	for _, tc := range refused {
		if err := c.callErr("thread/start", map[string]any{"environments": tc.envs}); err.Code != -32600 || err.Message != tc.msg {
			t.Errorf("thread/start %v: %d %s, want -32600 %s", tc.envs, err.Code, err.Message, tc.msg)
		}
	}
	list := func() []string {
		t.Helper()
		var data []struct {
			ID string `json:"id"`
		}
		if err := pointer(c.call("thread/list", map[string]any{}).Result, "/data", &data); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, d := range data {
			ids = append(ids, d.ID)
		}
		return ids
	}
	var loaded []string
	if err := pointer(c.call("thread/loaded/list", map[string]any{}).Result, "/data", &loaded); err != nil || len(loaded) != 0 {
		t.Fatalf("a refused thread/start loaded %v (%v)", loaded, err)
	}
	if c.has(func(m *wmsg) bool { return m.Method == "thread/started" }) {
		t.Fatal("a refused thread/start announced a thread")
	}

	// Accepted: inside, the root itself, trailing slashes, .. that stays
	// inside, a later root, empty and omitted roots.
	for _, envs := range [][]map[string]any{
		{env("/srv/a/b", "/srv/a")},
		{env("/srv/a", "/srv/a")},
		{env("/srv/a/", "/srv/a")},
		{env("/srv/a", "/srv/a/")},
		{env("/srv/a/x/../y", "/srv/a")},
		{env("/srv/b/c", "/srv/a", "/srv/b")},
		{env("/anywhere", []string{}...)},
		{env("/anywhere")},
	} {
		c.startThread(map[string]any{"environments": envs})
	}
	started := list()
	if len(started) != 8 {
		t.Fatalf("thread/list after 8 accepted thread/starts: %v", started)
	}

	// turn/start: the same refusals, with no turn and the thread's
	// environments as they were.
	id := c.startThread(map[string]any{"environments": []map[string]any{env("/srv/a", "/srv/a")}})
	for _, tc := range refused {
		if err := c.callErr("turn/start", map[string]any{"threadId": id, "input": text("hi"), "environments": tc.envs}); err.Code != -32600 || err.Message != tc.msg {
			t.Errorf("turn/start %v: %d %s, want -32600 %s", tc.envs, err.Code, err.Message, tc.msg)
		}
	}
	// Codex's answer for a thread with no user message yet.
	if err := c.callErr("thread/read", map[string]any{"threadId": id, "includeTurns": true}); err.Code != -32601 || err.Message != "list_turns is not supported yet" {
		t.Fatalf("after refused turn/starts, thread/read includeTurns: %d %s", err.Code, err.Message)
	}
	m := c.call("thread/read", map[string]any{"threadId": id})
	if got := envsOf(t, m, "/thread/environments"); len(got) != 1 || got[0].Cwd != "/srv/a" {
		t.Fatalf("refused turn/starts changed the environments: %+v", got)
	}
	if c.has(func(m *wmsg) bool { return strings.HasPrefix(m.Method, "turn/") }) {
		t.Fatal("a refused turn/start started a turn")
	}
	if got := list(); len(got) != 9 {
		t.Fatalf("thread/list: %v", got)
	}
}
