package environment

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/execserver"
	"github.com/codexd/codexd/internal/cutproxy"
	"github.com/codexd/codexd/jsonrpc"
)

// wsServer is a real exec-server on a loopback WebSocket, confined to its
// own root under t.TempDir().
func wsServer(t *testing.T) (*execserver.Server, string) {
	t.Helper()
	root := t.TempDir()
	srv, err := execserver.New(execserver.Config{Roots: []string{root}})
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
	roots[l.URL()] = root
	return srv, l.URL()
}

// roots are the roots of the servers wsServer started, by URL.
var roots = map[string]string{}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newReg(t *testing.T, local bool) *Registry {
	t.Helper()
	var o Options
	if local {
		l, err := InProcess(execserver.Config{}, execclient.Options{})
		if err != nil {
			t.Fatal(err)
		}
		o.Local = l
	}
	r := New(o)
	t.Cleanup(func() { r.Close() })
	return r
}

func echo(t *testing.T, c *execclient.Client, cwd, word string) string {
	t.Helper()
	p, err := c.Start(ctxT(t), execclient.StartOptions{Argv: []string{"/bin/echo", word}, Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, p.Stderr())
	out, _ := io.ReadAll(p.Stdout())
	if _, err := p.Wait(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func wantStatus(t *testing.T, r *Registry, id string, want Status, detail string) {
	t.Helper()
	st, d := r.StatusOf(id)
	if st != want || !strings.Contains(d, detail) || (detail == "" && d != "") {
		t.Fatalf("status of %s = %s %q, want %s %q", id, st, d, want, detail)
	}
}

func TestRegistryLocalAndAdded(t *testing.T) {
	srv, url := wsServer(t)
	r := newReg(t, true)
	if err := r.Add(AddParams{ID: "r1", URL: url}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.IDs(), ","); got != "local,r1" {
		t.Fatalf("ids %s", got)
	}
	if r.DefaultID() != LocalID || r.Remote(LocalID) || !r.Remote("r1") || !r.Has("r1") || r.Has("r2") {
		t.Fatal("default, Remote or Has wrong")
	}
	wantStatus(t, r, LocalID, StatusReady, "")
	wantStatus(t, r, "r1", StatusPending, "")
	wantStatus(t, r, "r2", StatusUnknown, "unknown environment id `r2`")
	if srv.Sessions() != 0 {
		t.Fatal("Add or StatusOf connected")
	}
	for _, id := range []string{LocalID, "r1"} {
		c, err := r.Client(ctxT(t), id)
		if err != nil {
			t.Fatal(err)
		}
		cwd := ""
		if id != LocalID {
			cwd = roots[url]
		}
		if got := echo(t, c, cwd, id); got != id+"\n" {
			t.Fatalf("%s ran %q", id, got)
		}
	}
	wantStatus(t, r, "r1", StatusReady, "")
	if srv.Sessions() != 1 {
		t.Fatalf("remote sessions %d", srv.Sessions())
	}
	info, err := r.Info(ctxT(t), "r1")
	if err != nil || info.Shell.Path == "" || !strings.HasPrefix(info.Cwd, "file:///") {
		t.Fatalf("info %+v %v", info, err)
	}
	if _, err := r.Client(ctxT(t), "r2"); !errors.Is(err, ErrUnknown) || err.Error() != "unknown environment id `r2`" {
		t.Fatalf("unknown client: %v", err)
	}
}

func TestRegistryAddRefusals(t *testing.T) {
	r := newReg(t, false)
	for _, c := range []struct {
		p    AddParams
		want string
	}{
		{AddParams{ID: "", URL: "ws://127.0.0.1:1"}, "environment id cannot be empty"},
		{AddParams{ID: "local", URL: "ws://127.0.0.1:1"}, "environment id `local` is reserved for EnvironmentManager"},
		{AddParams{ID: "t", URL: "ws://10.1.2.3:5/", BearerToken: "s"}, ErrInsecureToken.Error()},
		{AddParams{ID: "t", URL: "ws://example.com:5/", BearerToken: "s"}, ErrInsecureToken.Error()},
	} {
		if err := r.Add(c.p); err == nil || err.Error() != c.want {
			t.Errorf("Add(%+v) = %v, want %q", c.p, err, c.want)
		}
	}
	// Accepted as Codex accepts them: a token to loopback or over wss://,
	// and ids Codex does not check further.
	for _, p := range []AddParams{
		{ID: "a", URL: "ws://127.0.0.1:1", BearerToken: "s"},
		{ID: "b", URL: "ws://localhost:1", BearerToken: "s"},
		{ID: "c", URL: "wss://10.1.2.3:5", BearerToken: "s"},
		{ID: "d", URL: "unix:///nonexistent.sock", BearerToken: "s"},
		{ID: "a b", URL: "ws://127.0.0.1:1"},
	} {
		if err := r.Add(p); err != nil {
			t.Errorf("Add(%+v): %v", p, err)
		}
	}
	if r.Has("t") {
		t.Fatal("a refused environment was registered")
	}
}

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestRegistryUnreachable(t *testing.T) {
	r := newReg(t, false)
	dead := "ws://" + closedPort(t)
	for id, url := range map[string]string{"bad": "http://x", "dead": dead} {
		if err := r.Add(AddParams{ID: id, URL: url, ConnectTimeout: 2 * time.Second}); err != nil {
			t.Fatal(err)
		}
		wantStatus(t, r, id, StatusPending, "")
		_, err := r.Client(ctxT(t), id)
		want := "exec-server connection attempt failed: failed to connect to exec-server websocket `" + url + "`: "
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("%s: %v", id, err)
		}
		wantStatus(t, r, id, StatusDisconnected, want)
		if _, err := r.Info(ctxT(t), id); err == nil {
			t.Fatal("info of an unreachable environment")
		}
	}
}

func TestRegistryStartAndUpsert(t *testing.T) {
	srvA, urlA := wsServer(t)
	srvB, urlB := wsServer(t)
	r := newReg(t, false)
	if err := r.Add(AddParams{ID: "e", URL: urlA}); err != nil {
		t.Fatal(err)
	}
	r.Start("e")
	r.Start("e")
	r.Start("nope")
	// Client waits for the connection Start began and shares it.
	c, err := r.Client(ctxT(t), "e")
	if err != nil {
		t.Fatal(err)
	}
	if srvA.Sessions() != 1 {
		t.Fatalf("sessions on A: %d", srvA.Sessions())
	}
	wantStatus(t, r, "e", StatusReady, "")
	// Upsert, as Codex: the id now names B; A's client stays usable by
	// whoever holds it until Close.
	if err := r.Add(AddParams{ID: "e", URL: urlB}); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, r, "e", StatusPending, "")
	c2, err := r.Client(ctxT(t), "e")
	if err != nil {
		t.Fatal(err)
	}
	if c2 == c || srvB.Sessions() != 1 {
		t.Fatalf("after the upsert: same client %v, sessions on B %d", c2 == c, srvB.Sessions())
	}
	if got := echo(t, c, roots[urlA], "old"); got != "old\n" {
		t.Fatalf("the replaced client ran %q", got)
	}
}

func TestRegistryConcurrentClients(t *testing.T) {
	srv, url := wsServer(t)
	r := newReg(t, true)
	if err := r.Add(AddParams{ID: "r", URL: url}); err != nil {
		t.Fatal(err)
	}
	const n = 8
	var wg sync.WaitGroup
	got := make([]*execclient.Client, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = r.Client(ctxT(t), "r")
			r.StatusOf("r")
			r.IDs()
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || got[i] != got[0] {
			t.Fatalf("client %d: %v (shared: %v)", i, errs[i], got[i] == got[0])
		}
	}
	if srv.Sessions() != 1 {
		t.Fatalf("sessions %d", srv.Sessions())
	}
}

func TestRegistryDropAndResume(t *testing.T) {
	_, url := wsServer(t)
	px := cutproxy.New(t, strings.TrimPrefix(url, "ws://"))
	r := newReg(t, false)
	if err := r.Add(AddParams{ID: "r", URL: "ws://" + px.Addr()}); err != nil {
		t.Fatal(err)
	}
	events := make(chan Event, 16)
	stop := r.Watch(func(e Event) { events <- e })
	defer stop()
	c, err := r.Client(ctxT(t), "r")
	if err != nil {
		t.Fatal(err)
	}
	// A process that outlives the drop: it prints what it reads.
	p, err := c.Start(ctxT(t), execclient.StartOptions{Argv: []string{"/bin/cat"}, PipeStdin: true, Cwd: roots[url]})
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, p.Stderr())
	px.Cut()
	next := func() Event {
		select {
		case e := <-events:
			return e
		case <-ctxT(t).Done():
			t.Fatal("no connection event")
		}
		return Event{}
	}
	if e := next(); e.ID != "r" || e.Connected || e.Err == nil || !strings.Contains(e.Err.Error(), "environment `r` disconnected") {
		t.Fatalf("first event %+v", e)
	}
	if e := next(); e.ID != "r" || !e.Connected {
		t.Fatalf("second event %+v", e)
	}
	wantStatus(t, r, "r", StatusReady, "")
	c2, err := r.Client(ctxT(t), "r")
	if err != nil || c2 != c {
		t.Fatalf("after resume: %v, same client %v", err, c2 == c)
	}
	if err := p.Write(ctxT(t), []byte("survived\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 9)
	if _, err := io.ReadFull(p.Stdout(), buf); err != nil || string(buf) != "survived\n" {
		t.Fatalf("read %q %v", buf, err)
	}
	if _, err := p.Terminate(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	_, _ = p.Wait(ctxT(t))
}

func TestRegistryClose(t *testing.T) {
	_, url := wsServer(t)
	r := newReg(t, true)
	if err := r.Add(AddParams{ID: "r", URL: url}); err != nil {
		t.Fatal(err)
	}
	r.Start("r")
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Client(ctxT(t), "r"); err == nil {
		t.Fatal("a client after Close")
	}
	if err := r.Add(AddParams{ID: "s", URL: url}); err == nil {
		t.Fatal("Add after Close")
	}
	r.Start("r") // starts nothing
}

func TestRegistryFromFile(t *testing.T) {
	_, url := wsServer(t)
	f, err := ParseFile([]byte("default = \"r\"\n[[environments]]\nid = \"r\"\nurl = \"" + url + "\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	local, err := InProcess(execserver.Config{}, execclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := FromFile(f, local, execclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := strings.Join(r.IDs(), ","); got != "local,r" || r.DefaultID() != "r" {
		t.Fatalf("ids %s default %s", got, r.DefaultID())
	}
	wantStatus(t, r, "r", StatusPending, "") // declared environments are lazy
	info, err := r.Info(ctxT(t), "r")
	if err != nil || info.Shell.Name == "" {
		t.Fatalf("info %+v %v", info, err)
	}
	f, err = ParseFile([]byte("include_local = false\n"))
	if err != nil {
		t.Fatal(err)
	}
	local, err = InProcess(execserver.Config{}, execclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := FromFile(f, local, execclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if len(r2.IDs()) != 0 || r2.DefaultID() != "" {
		t.Fatalf("without local: ids %v default %q", r2.IDs(), r2.DefaultID())
	}
}
