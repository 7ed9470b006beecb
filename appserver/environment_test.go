package appserver

import (
	"errors"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/environment"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/execproto"
	"github.com/codexd/codexd/execserver"
	"github.com/codexd/codexd/internal/cutproxy"
	"github.com/codexd/codexd/jsonrpc"
)

// envExecServer is a real exec-server on a loopback WebSocket, with its
// own root.
func envExecServer(t *testing.T) (*execserver.Server, string) {
	t.Helper()
	srv, err := execserver.New(execserver.Config{Roots: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := srv.Listen(jsonrpc.Listen{Scheme: "ws", Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- l.Serve(nil, nil) }()
	t.Cleanup(func() {
		l.Close()
		<-done
		srv.Close()
	})
	return srv, l.URL()
}

func envRegistry(t *testing.T) *environment.Registry {
	t.Helper()
	local, err := environment.InProcess(execserver.Config{}, execclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := environment.New(environment.Options{Local: local})
	t.Cleanup(func() { r.Close() })
	return r
}

// envClient is client A, with the experimental API, of an app-server
// over the fake core whose environments are local and "r1", an
// exec-server of the test's own.
func envClient(t *testing.T) *jclient {
	t.Helper()
	_, url := envExecServer(t)
	reg := envRegistry(t)
	if err := reg.Add(environment.AddParams{ID: "r1", URL: url}); err != nil {
		t.Fatal(err)
	}
	c := newEnv(t, agenttest.Options{}, Config{Environments: reg}).dial("A")
	c.initialize(map[string]any{"experimentalApi": true})
	return c
}

func envStatus(t *testing.T, c *jclient, id string) (status, detail string) {
	t.Helper()
	m := c.call("environment/status", map[string]any{"environmentId": id})
	var r struct {
		Status string  `json:"status"`
		Error  *string `json:"error"`
	}
	if err := pointer(m.Result, "", &r); err != nil {
		t.Fatal(err)
	}
	if r.Error != nil {
		detail = *r.Error
	}
	return r.Status, detail
}

func TestEnvironmentMethods(t *testing.T) {
	srv, url := envExecServer(t)
	reg := envRegistry(t)
	e := newEnv(t, agenttest.Options{}, Config{Environments: reg})

	plain := e.dial("plain")
	plain.initialize(nil)
	if err := plain.callErr("environment/add", map[string]any{"environmentId": "r1", "execServerUrl": url}); err.Code != -32600 || !strings.Contains(err.Message, "environment/add requires experimentalApi capability") {
		t.Fatalf("without experimentalApi: %d %s", err.Code, err.Message)
	}

	c := e.dial("A")
	c.initialize(map[string]any{"experimentalApi": true})
	if st, d := envStatus(t, c, "local"); st != "ready" || d != "" {
		t.Fatalf("local: %s %q", st, d)
	}
	if st, d := envStatus(t, c, "nope"); st != "unknown" || d != "unknown environment id `nope`" {
		t.Fatalf("unknown: %s %q", st, d)
	}
	if err := c.callErr("environment/info", map[string]any{"environmentId": "nope"}); err.Code != -32600 || err.Message != "unknown environment id `nope`" {
		t.Fatalf("info of unknown: %d %s", err.Code, err.Message)
	}
	wd, _ := os.Getwd()
	var info struct {
		Shell appproto.EnvironmentShellInfo `json:"shell"`
		Cwd   *string                       `json:"cwd"`
	}
	if err := pointer(c.call("environment/info", map[string]any{"environmentId": "local"}).Result, "", &info); err != nil {
		t.Fatal(err)
	}
	if info.Cwd == nil || *info.Cwd != execproto.PathURI(wd) || info.Shell.Path == "" || info.Shell.Name == "" {
		t.Fatalf("local info %+v", info)
	}

	// Added: connected at once (as Codex), then reported ready.
	c.call("environment/add", map[string]any{"environmentId": "r1", "execServerUrl": url, "authBearerToken": "tok", "connectTimeoutMs": 5000})
	if err := pointer(c.call("environment/info", map[string]any{"environmentId": "r1"}).Result, "", &info); err != nil {
		t.Fatal(err)
	}
	if info.Cwd == nil || !strings.HasPrefix(*info.Cwd, "file:///") || info.Shell.Path == "" {
		t.Fatalf("remote info %+v", info)
	}
	if st, _ := envStatus(t, c, "r1"); st != "ready" || srv.Sessions() != 1 {
		t.Fatalf("r1 %s with %d sessions", st, srv.Sessions())
	}
	// Upserted, as Codex does: the same id again is no error.
	c.call("environment/add", map[string]any{"environmentId": "r1", "execServerUrl": url})

	for _, tc := range []struct {
		params map[string]any
		code   int64
		msg    string
	}{
		{map[string]any{"environmentId": "", "execServerUrl": url}, -32600, "exec-server protocol error: environment id cannot be empty"},
		{map[string]any{"environmentId": "local", "execServerUrl": url}, -32600, "exec-server protocol error: environment id `local` is reserved for EnvironmentManager"},
		{map[string]any{"environmentId": "t", "execServerUrl": "ws://10.1.2.3:5/", "authBearerToken": "s3"}, -32600, "exec-server protocol error: exec-server WebSocket headers require wss:// or a loopback destination"},
		{map[string]any{"execServerUrl": url}, -32600, "Invalid request: missing field `environmentId`"},
		{map[string]any{"environmentId": "t", "execServerUrl": url, "connectTimeoutMs": -1}, -32600, "Invalid request: invalid value: integer `-1`, expected u64"},
	} {
		if err := c.callErr("environment/add", tc.params); err.Code != tc.code || err.Message != tc.msg {
			t.Errorf("add %v: %d %s, want %d %s", tc.params, err.Code, err.Message, tc.code, tc.msg)
		}
	}
	if st, _ := envStatus(t, c, "t"); st != "unknown" {
		t.Fatalf("a refused add registered t: %s", st)
	}

	// A URL that cannot be dialled is accepted; status and info say why.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "ws://" + ln.Addr().String()
	ln.Close()
	for id, u := range map[string]string{"bad": "http://x", "dead": dead} {
		c.call("environment/add", map[string]any{"environmentId": id, "execServerUrl": u, "connectTimeoutMs": 2000})
		err := c.callErr("environment/info", map[string]any{"environmentId": id})
		want := "failed to get info for environment `" + id + "`: exec-server connection attempt failed: failed to connect to exec-server websocket `" + u + "`: "
		if err.Code != -32603 || !strings.HasPrefix(err.Message, want) {
			t.Fatalf("info of %s: %d %s", id, err.Code, err.Message)
		}
		if st, d := envStatus(t, c, id); st != "disconnected" || !strings.HasPrefix(d, "exec-server connection attempt failed: ") {
			t.Fatalf("status of %s: %s %q", id, st, d)
		}
	}
}

// environment/status starts nothing: a declared environment nobody used
// stays pending, with no session on its exec-server.
func TestEnvironmentStatusStartsNothing(t *testing.T) {
	srv, url := envExecServer(t)
	reg := envRegistry(t)
	if err := reg.Add(environment.AddParams{ID: "lazy", URL: url}); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, agenttest.Options{}, Config{Environments: reg})
	c := e.dial("A")
	c.initialize(map[string]any{"experimentalApi": true})
	for range 3 {
		if st, d := envStatus(t, c, "lazy"); st != "pending" || d != "" {
			t.Fatalf("lazy: %s %q", st, d)
		}
	}
	if n := srv.Sessions(); n != 0 {
		t.Fatalf("status opened %d sessions", n)
	}
}

// Without a registry the server has no environment.
func TestEnvironmentNone(t *testing.T) {
	e := newEnv(t, agenttest.Options{}, Config{})
	c := e.dial("A")
	c.initialize(map[string]any{"experimentalApi": true})
	if st, _ := envStatus(t, c, "local"); st != "unknown" {
		t.Fatalf("local without a registry: %s", st)
	}
}

// thread/start and turn/start take environments: refused before anything
// is recorded when an id is unknown or repeated or a cwd is not absolute
// (Codex 0.169's messages), reported by thread/start, thread/read and
// thread/list otherwise.
func TestEnvironmentSelection(t *testing.T) {
	c := envClient(t)
	for _, tc := range []struct {
		envs any
		msg  string
	}{
		{[]map[string]any{{"environmentId": "nope", "cwd": "/w"}}, "unknown turn environment id `nope`"},
		{[]map[string]any{{"environmentId": "r1", "cwd": "/w"}, {"environmentId": "r1", "cwd": "/x"}}, "duplicate turn environment id `r1`"},
		{[]map[string]any{{"environmentId": "r1", "cwd": "rel"}}, "invalid cwd for environment `r1`: path `rel` does not use absolute POSIX or Windows path syntax"},
	} {
		if err := c.callErr("thread/start", map[string]any{"environments": tc.envs}); err.Code != -32600 || err.Message != tc.msg {
			t.Errorf("thread/start %v: %d %s, want %s", tc.envs, err.Code, err.Message, tc.msg)
		}
	}
	var loaded []string
	if err := pointer(c.call("thread/loaded/list", map[string]any{}).Result, "/data", &loaded); err != nil || len(loaded) != 0 {
		t.Fatalf("a refused thread/start loaded %v (%v)", loaded, err)
	}

	m := c.call("thread/start", map[string]any{"cwd": "/tmp", "environments": []map[string]any{
		{"environmentId": "r1", "cwd": "/srv/a", "runtimeWorkspaceRoots": []string{"/srv"}}, {"environmentId": "local", "cwd": "/tmp"}}})
	id := m.str(t, "/thread/id")
	got := envsOf(t, m, "/thread/environments")
	if len(got) != 2 || got[0].EnvironmentID != "r1" || got[0].Cwd != "/srv/a" || got[0].RuntimeWorkspaceRoots[0] != "/srv" ||
		got[1].EnvironmentID != "local" || got[1].RuntimeWorkspaceRoots[0] != "/tmp" {
		t.Fatalf("thread/start environments %+v", got)
	}
	var roots []string
	if err := pointer(m.Result, "/runtimeWorkspaceRoots", &roots); err != nil || len(roots) != 1 || roots[0] != "/srv" {
		t.Fatalf("runtimeWorkspaceRoots %v %v", roots, err)
	}
	if got := envsOf(t, c.call("thread/read", map[string]any{"threadId": id}), "/thread/environments"); len(got) != 2 || got[0].EnvironmentID != "r1" {
		t.Fatalf("thread/read environments %+v", got)
	}

	none := c.call("thread/start", map[string]any{"environments": []any{}})
	if got := envsOf(t, none, "/thread/environments"); len(got) != 0 {
		t.Fatalf("environments [] reported %+v", got)
	}
	// turn/start: the same checks, then the selection sticks.
	noneID := none.str(t, "/thread/id")
	if err := c.callErr("turn/start", map[string]any{"threadId": noneID, "input": text("hi"), "environments": []map[string]any{{"environmentId": "zz", "cwd": "/w"}}}); err.Code != -32600 || err.Message != "unknown turn environment id `zz`" {
		t.Fatalf("turn/start unknown: %d %s", err.Code, err.Message)
	}
	c.call("turn/start", map[string]any{"threadId": noneID, "input": text("hi"), "environments": []map[string]any{{"environmentId": "r1", "cwd": "/srv"}}})
	c.note("turn/completed")
	if got := envsOf(t, c.call("thread/read", map[string]any{"threadId": noneID}), "/thread/environments"); len(got) != 1 || got[0].EnvironmentID != "r1" || got[0].Cwd != "/srv" {
		t.Fatalf("after turn/start: %+v", got)
	}
}

// envsOf reads the environments a result reports at path.
func envsOf(t *testing.T, m *wmsg, path string) []appproto.ThreadEnvironment {
	t.Helper()
	var envs []appproto.ThreadEnvironment
	if err := pointer(m.Result, path, &envs); err != nil {
		t.Fatal(err)
	}
	return envs
}

// A dropped exec-server connection reaches the subscribers of the threads
// on that environment, and so does its session's resume; threads on other
// environments hear nothing.
func TestEnvironmentConnectionNotifications(t *testing.T) {
	_, url := envExecServer(t)
	px := cutproxy.New(t, strings.TrimPrefix(url, "ws://"))
	reg := envRegistry(t)
	if err := reg.Add(environment.AddParams{ID: "r1", URL: "ws://" + px.Addr()}); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, agenttest.Options{}, Config{Environments: reg})
	c := e.dial("A")
	c.initialize(map[string]any{"experimentalApi": true})
	on := c.startThread(map[string]any{"environments": []map[string]any{{"environmentId": "r1", "cwd": "/srv"}}})
	off := c.startThread(nil)
	c.call("environment/info", map[string]any{"environmentId": "r1"}) // connects
	px.Cut()
	for _, method := range []string{"thread/environment/disconnected", "thread/environment/connected"} {
		n := c.note(method)
		if got := n.str(t, "/threadId"); got != on {
			t.Fatalf("%s for %s, want %s", method, got, on)
		}
		if got := n.str(t, "/environmentId"); got != "r1" {
			t.Fatalf("%s names %s", method, got)
		}
	}
	c.barrier()
	if c.has(func(m *wmsg) bool {
		return strings.HasPrefix(m.Method, "thread/environment/") && strings.Contains(string(m.Params), off)
	}) {
		t.Fatal("the thread on local heard of r1")
	}
	if st, _ := envStatus(t, c, "r1"); st != "ready" {
		t.Fatalf("after the resume: %s", st)
	}
}

// FuzzEnvironmentsOverride feeds arbitrary environments members to the
// parsing of thread/start and turn/start: it refuses with a -32600 or
// yields environments that are known, distinct and absolute, each cwd
// within its roots, whose projection reports each.
func FuzzEnvironmentsOverride(f *testing.F) {
	reg := environment.New(environment.Options{})
	defer reg.Close()
	if err := reg.Add(environment.AddParams{ID: "r1", URL: "ws://127.0.0.1:1"}); err != nil {
		f.Fatal(err)
	}
	srv, err := New(Config{Core: agenttest.New(agenttest.Options{}), Environments: reg})
	if err != nil {
		f.Fatal(err)
	}
	defer srv.Close()
	for _, seed := range []string{`null`, `[]`, `{}`, `[{"environmentId":"r1","cwd":"/w"}]`,
		`[{"environmentId":"r1","cwd":"/w","runtimeWorkspaceRoots":["/a","/b"]}]`, `[{"environmentId":"r1","cwd":"C:\\w"}]`,
		`[{"environmentId":"x","cwd":"/w"}]`, `[{"environmentId":"r1","cwd":"rel"}]`, `[{"environmentId":"r1"}]`, `[1]`,
		`[{"environmentId":"r1","cwd":"/a/bc","runtimeWorkspaceRoots":["/a/b"]}]`, `[{"environmentId":"r1","cwd":"/a/b/..","runtimeWorkspaceRoots":["/a/b/"]}]`,
		`[{"environmentId":"r1","cwd":"C:\\w\\x","runtimeWorkspaceRoots":["c:/W"]}]`, `[{"environmentId":"r1","cwd":"/x","runtimeWorkspaceRoots":[]}]`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		envs, err := srv.environmentsOverride(jsontext.Value(raw))
		if err != nil {
			var we *jsonrpc.Error
			if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidRequest {
				t.Fatalf("error %v is not -32600", err)
			}
			return
		}
		if envs == nil {
			return
		}
		seen := map[string]bool{}
		for _, e := range *envs {
			if e.ID != "r1" || seen[e.ID] || e.Cwd == "" || len(e.RuntimeWorkspaceRoots) > 0 && !insideRoots(e.Cwd, e.RuntimeWorkspaceRoots) {
				t.Fatalf("accepted %+v", *envs)
			}
			seen[e.ID] = true
		}
		if got := environments(agent.Settings{Environments: *envs}); len(got) != len(*envs) {
			t.Fatalf("projected %d of %d", len(got), len(*envs))
		}
	})
}
