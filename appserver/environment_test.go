package appserver

import (
	"net"
	"os"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/environment"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/execproto"
	"github.com/codexd/codexd/execserver"
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
