package appserver

import (
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/codexd/codexd/appproto"
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
	c := envClient(t)
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

// thread/start reports an environment's paths as Codex 0.169 does: the
// cwd and roots cleaned (a trailing separator kept, Windows paths with
// backslashes and an upper-case drive), omitted roots the cwd, repeated
// roots once; the answer's runtimeWorkspaceRoots and writableRoots fully
// cleaned and POSIX only. Its refusals come in Codex's order: the path
// syntax of every cwd and root first, then each environment's size,
// duplicate and unknown id; the roots check of codexd's last.
func TestEnvironmentPathsAsCodex(t *testing.T) {
	c := envClient(t)
	env := func(id, cwd string, roots ...string) map[string]any {
		m := map[string]any{"environmentId": id, "cwd": cwd}
		if roots != nil {
			m["runtimeWorkspaceRoots"] = roots
		}
		return m
	}
	long := "/" + strings.Repeat("a", 8191)
	for _, tc := range []struct {
		env        map[string]any
		cwd        string
		roots, top []string
	}{
		{env("r1", "/a/b/../c"), "/a/c", []string{"/a/c"}, []string{"/a/c"}},
		{env("r1", "/a//b/./"), "/a/b/", []string{"/a/b/"}, []string{"/a/b"}},
		{env("r1", "/../.."), "/", []string{"/"}, []string{"/"}},
		{env("r1", "/a/x", "/a/b/.", "/a//s/", "/a/t/..", "/a/u/../v/"), "/a/x", []string{"/a/b", "/a/s/", "/a", "/a/v/"}, []string{"/a/b", "/a/s", "/a", "/a/v"}},
		{env("r1", "/a/x", "/a", "/a/", "/a/."), "/a/x", []string{"/a", "/a/"}, []string{"/a", "/a"}},
		{env("r1", "/a/x", []string{}...), "/a/x", []string{}, []string{}},
		{env("r1", `c:/w/./x`), `C:\w\x`, []string{`C:\w\x`}, []string{}},
		{env("r1", `C:\w\..\x\`), `C:\x\`, []string{`C:\x\`}, []string{}},
		{env("r1", `c:\`), `C:\`, []string{`C:\`}, []string{}},
		{env("r1", "//a/b"), `\\a\b`, []string{`\\a\b`}, []string{}},
		{env("r1", `\\srv\share\x`), `\\srv\share\x`, []string{`\\srv\share\x`}, []string{}},
		{env("r1", long), long, []string{long}, []string{long}},
	} {
		m := c.call("thread/start", map[string]any{"cwd": "/w", "environments": []map[string]any{tc.env}})
		got := envsOf(t, m, "/thread/environments")
		if len(got) != 1 || got[0].Cwd != tc.cwd || !slices.Equal(got[0].RuntimeWorkspaceRoots, tc.roots) {
			t.Errorf("%v: reported %+v, want cwd %s roots %q", tc.env, got, tc.cwd, tc.roots)
		}
		var top, writable []string
		if err := pointer(m.Result, "/runtimeWorkspaceRoots", &top); err != nil || !slices.Equal(top, tc.top) {
			t.Errorf("%v: runtimeWorkspaceRoots %q (%v), want %q", tc.env, top, err, tc.top)
		}
		first := slices.Compact(slices.Clone(tc.top))
		if err := pointer(m.Result, "/sandbox/writableRoots", &writable); err != nil || len(writable) < len(first) || !slices.Equal(writable[:len(first)], first) {
			t.Errorf("%v: writableRoots %q (%v), want %q first", tc.env, writable, err, tc.top)
		}
	}
	syntax := func(what, id, p string) string {
		return "invalid " + what + " for environment `" + id + "`: path `" + p + "` does not use absolute POSIX or Windows path syntax"
	}
	for _, tc := range []struct {
		envs []map[string]any
		msg  string
	}{
		{[]map[string]any{env("nope", "rel")}, syntax("cwd", "nope", "rel")},
		{[]map[string]any{env("r1", "/", "rel"), env("nope", "/")}, syntax("runtime workspace root", "r1", "rel")},
		{[]map[string]any{env("r1", "/"), env("r1", "rel")}, syntax("cwd", "r1", "rel")},
		{[]map[string]any{env("r1", "//a")}, syntax("cwd", "r1", "//a")},
		{[]map[string]any{env("r1", "///a")}, syntax("cwd", "r1", "///a")},
		{[]map[string]any{env("r1", "//")}, syntax("cwd", "r1", "//")},
		{[]map[string]any{env("r1", "/", "//a/")}, syntax("runtime workspace root", "r1", "//a/")},
		{[]map[string]any{env("nope", long+"a")}, "turn environment working directory exceeds the maximum size"},
		{[]map[string]any{env("r1", "/x", "/y"), env("nope", "/")}, "unknown turn environment id `nope`"},
		{[]map[string]any{env("r1", "/x", "/y"), env("r1", "/")}, "duplicate turn environment id `r1`"},
	} {
		if err := c.callErr("thread/start", map[string]any{"environments": tc.envs}); err.Code != -32600 || err.Message != tc.msg {
			t.Errorf("thread/start %v: %d %s, want -32600 %s", tc.envs, err.Code, err.Message, tc.msg)
		}
	}
}

// FuzzCleanEnvPath: a path of valid syntax cleans to one of valid syntax
// that cleans to itself, and each is inside the other.
func FuzzCleanEnvPath(f *testing.F) {
	for _, s := range []string{"/", "/a/../b/", "//a/b", `\\s\sh\..\x\`, `c:/w/./x`, `C:\`, "/../..", "//a/b/../../c", `c:\..\..`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if !envPathSyntax(p) {
			return
		}
		c := cleanEnvPath(p)
		if !envPathSyntax(c) || cleanEnvPath(c) != c {
			t.Fatalf("%q cleans to %q, which cleans to %q (syntax %v)", p, c, cleanEnvPath(c), envPathSyntax(c))
		}
		if !insideRoots(p, []string{c}) || !insideRoots(c, []string{p}) {
			t.Fatalf("%q and %q are not inside each other", p, c)
		}
	})
}

// thread/settings/update takes environments as turn/start does (Codex
// 0.169 applies them and announces thread/settings/updated), with the
// same refusals before anything changes.
func TestEnvironmentSettingsUpdate(t *testing.T) {
	c := envClient(t)
	id := c.startThread(map[string]any{"cwd": "/w"})
	update := func(envs any) *wmsg {
		return c.response(c.request("thread/settings/update", map[string]any{"threadId": id, "environments": envs}))
	}
	for _, tc := range []struct {
		envs []map[string]any
		msg  string
	}{
		{[]map[string]any{{"environmentId": "nope", "cwd": "/"}}, "unknown turn environment id `nope`"},
		{[]map[string]any{{"environmentId": "r1", "cwd": "rel"}}, "invalid cwd for environment `r1`: path `rel` does not use absolute POSIX or Windows path syntax"},
		{[]map[string]any{{"environmentId": "r1", "cwd": "/x", "runtimeWorkspaceRoots": []string{"/y"}}}, "invalid cwd for environment `r1`: path `/x` is outside the environment's runtime workspace roots"},
	} {
		if m := update(tc.envs); m.Error == nil || m.Error.Code != -32600 || m.Error.Message != tc.msg {
			t.Errorf("thread/settings/update %v: %s, want -32600 %s", tc.envs, m.raw, tc.msg)
		}
	}
	if got := envsOf(t, c.call("thread/read", map[string]any{"threadId": id}), "/thread/environments"); len(got) != 1 || got[0].EnvironmentID != "local" {
		t.Fatalf("refused updates changed the environments: %+v", got)
	}
	if c.has(func(m *wmsg) bool { return m.Method == "thread/settings/updated" }) {
		t.Fatal("a refused update announced settings")
	}

	if m := update([]map[string]any{{"environmentId": "r1", "cwd": "/srv/a/../b", "runtimeWorkspaceRoots": []string{"/srv"}}}); m.Error != nil {
		t.Fatalf("thread/settings/update: %s", m.raw)
	}
	n := c.note("thread/settings/updated")
	var envs []appproto.ThreadEnvironment
	if err := pointer(n.Params, "/threadSettings/environments", &envs); err != nil || len(envs) != 1 || envs[0].EnvironmentID != "r1" || envs[0].Cwd != "/srv/b" {
		t.Fatalf("thread/settings/updated environments %+v (%v): %s", envs, err, n.raw)
	}
	if got := envsOf(t, c.call("thread/read", map[string]any{"threadId": id}), "/thread/environments"); len(got) != 1 || got[0].EnvironmentID != "r1" || got[0].Cwd != "/srv/b" {
		t.Fatalf("thread/read after the update: %+v", got)
	}
	if m := update([]any{}); m.Error != nil {
		t.Fatalf("thread/settings/update []: %s", m.raw)
	}
	c.note("thread/settings/updated")
	if got := envsOf(t, c.call("thread/read", map[string]any{"threadId": id}), "/thread/environments"); len(got) != 0 {
		t.Fatalf("thread/read after []: %+v", got)
	}
}

// A thread that names its environments reports under workspace-write the
// writable roots Codex 0.169 lists: its current environment's roots,
// /tmp and $TMPDIR; but when the thread's cwd is one of those roots, the
// roots other than the cwd, /tmp and $TMPDIR (the cwd's own workspace
// then stands for them).
func TestEnvironmentWritableRootsAsCodex(t *testing.T) {
	c := envClient(t)
	tmp := []string{"/tmp"}
	if d := os.Getenv("TMPDIR"); d != "" {
		tmp = append(tmp, d)
	}
	for _, tc := range []struct {
		env  map[string]any
		want []string
	}{
		{map[string]any{"environmentId": "local", "cwd": "/w"}, []string{}},
		{map[string]any{"environmentId": "r1", "cwd": "/w/"}, []string{}},
		{map[string]any{"environmentId": "local", "cwd": "/w", "runtimeWorkspaceRoots": []string{"/w", "/r"}}, []string{"/r"}},
		{map[string]any{"environmentId": "local", "cwd": "/"}, append([]string{"/"}, tmp...)},
		{map[string]any{"environmentId": "r1", "cwd": "/srv/a", "runtimeWorkspaceRoots": []string{"/srv"}}, append([]string{"/srv"}, tmp...)},
		{map[string]any{"environmentId": "r1", "cwd": "/w/x", "runtimeWorkspaceRoots": []string{}}, tmp},
	} {
		m := c.call("thread/start", map[string]any{"cwd": "/w", "sandbox": "workspace-write", "environments": []map[string]any{tc.env}})
		var got []string
		if err := pointer(m.Result, "/sandbox/writableRoots", &got); err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%v: writableRoots %q (%v), want %q", tc.env, got, err, tc.want)
		}
	}
}

// The writable roots of a thread's configuration (config.toml's or the
// request's sandbox_workspace_write.writable_roots) join the workspace
// roots of a thread that names no environment, as in Codex 0.169:
// cleaned, after the cwd, each once. Under
// workspace-write the answer lists them (not the cwd) as writable; a
// thread that names its environments keeps their roots, and lists its
// environment's roots, /tmp and $TMPDIR before the configured ones.
func TestWritableRootsJoinWorkspaceRoots(t *testing.T) {
	c := envClient(t)
	tmp := []string{"/tmp"}
	if d := os.Getenv("TMPDIR"); d != "" {
		tmp = append(tmp, d)
	}
	wr := func(roots ...string) map[string]any {
		return map[string]any{"sandbox_workspace_write": map[string]any{"writable_roots": roots}}
	}
	for _, tc := range []struct {
		name            string
		params          map[string]any
		roots, writable []string
		envRoots        []string
	}{
		{"plain", map[string]any{"sandbox": "workspace-write", "config": wr("/wr7", "/w", "/wr7/", "/a/../b")},
			[]string{"/w", "/wr7", "/b"}, []string{"/wr7", "/b"}, []string{"/w", "/wr7", "/b"}},
		// Not under another sandbox, where codexd keeps no writable roots
		// (README rule [writable-roots-other-sandbox]).
		{"read-only", map[string]any{"sandbox": "read-only", "config": wr("/wr8")},
			[]string{"/w"}, nil, []string{"/w"}},
		{"named", map[string]any{"sandbox": "workspace-write", "config": wr("/wr6"), "environments": []map[string]any{{"environmentId": "r1", "cwd": "/x", "runtimeWorkspaceRoots": []string{"/x", "/r2"}}}},
			[]string{"/x", "/r2"}, append(append([]string{"/x", "/r2"}, tmp...), "/wr6"), []string{"/x", "/r2"}},
		{"named-cwd-root", map[string]any{"sandbox": "workspace-write", "config": wr("/wr6"), "environments": []map[string]any{{"environmentId": "r1", "cwd": "/w", "runtimeWorkspaceRoots": []string{"/w", "/r2"}}}},
			[]string{"/w", "/r2"}, []string{"/r2", "/wr6"}, []string{"/w", "/r2"}},
	} {
		p := map[string]any{"cwd": "/w"}
		maps.Copy(p, tc.params)
		m := c.call("thread/start", p)
		var roots, writable, envRoots []string
		if err := pointer(m.Result, "/runtimeWorkspaceRoots", &roots); err != nil || !slices.Equal(roots, tc.roots) {
			t.Errorf("%s: runtimeWorkspaceRoots %q (%v), want %q", tc.name, roots, err, tc.roots)
		}
		if tc.writable != nil {
			if err := pointer(m.Result, "/sandbox/writableRoots", &writable); err != nil || !slices.Equal(writable, tc.writable) {
				t.Errorf("%s: writableRoots %q (%v), want %q", tc.name, writable, err, tc.writable)
			}
		}
		if err := pointer(m.Result, "/thread/environments/0/runtimeWorkspaceRoots", &envRoots); err != nil || !slices.Equal(envRoots, tc.envRoots) {
			t.Errorf("%s: environment's runtimeWorkspaceRoots %q (%v), want %q", tc.name, envRoots, err, tc.envRoots)
		}
	}
}
