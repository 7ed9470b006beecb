package environment

import (
	"bufio"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/internal/execproctest"
)

// An exec-server that restarts loses its sessions: the client's resume is
// refused. The registry then opens a fresh session by itself, announces
// it (Connected), and the next use works on it; only the process of the
// lost session failed, with an error that says the session was lost.
func TestRegistryServerRestartedSessionLost(t *testing.T) {
	srv := execproctest.Start(t)
	// The resume keeps trying (bounded by its 20s) until the new process
	// answers, and is refused: the process may be slow to start here.
	r := New(Options{Client: execclient.Options{ReconnectAttempts: 1000, ReconnectTimeout: 20 * time.Second, ReconnectMaxBackoff: 100 * time.Millisecond}})
	t.Cleanup(func() { r.Close() })
	if err := r.Add(AddParams{ID: "r", URL: srv.URL}); err != nil {
		t.Fatal(err)
	}
	events := make(chan Event, 64)
	stop := r.Watch(func(e Event) { events <- e })
	defer stop()
	next := func() Event {
		t.Helper()
		select {
		case e := <-events:
			return e
		case <-ctxT(t).Done():
			t.Fatal("no connection event")
		}
		return Event{}
	}
	c, err := r.Client(ctxT(t), "r")
	if err != nil {
		t.Fatal(err)
	}
	old := c.SessionID()
	p, err := c.Start(ctxT(t), execclient.StartOptions{Argv: []string{"/bin/sh", "-c", "echo started; exec sleep 60"}, Cwd: srv.Root})
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, p.Stderr())
	rd := bufio.NewReader(p.Stdout())
	if l, err := rd.ReadString('\n'); l != "started\n" {
		t.Fatalf("read %q %v", l, err)
	}
	srv.Kill()
	if e := next(); e.ID != "r" || e.Connected {
		t.Fatalf("first event %+v", e)
	}
	srv.Start() // the same address, a new process: the session is gone
	if _, err := p.Wait(ctxT(t)); !errors.Is(err, execclient.ErrSessionLost) || !strings.Contains(err.Error(), "restarted") {
		t.Fatalf("the lost session's process: %v", err)
	}
	// Nobody asks for the client: the registry reconnects by itself.
	for {
		if e := next(); e.Connected {
			break
		}
	}
	wantStatus(t, r, "r", StatusReady, "")
	c2, err := r.Client(ctxT(t), "r")
	if err != nil {
		t.Fatal(err)
	}
	if c2.SessionID() == old || c2 == c {
		t.Fatalf("the session was not renewed: %s", c2.SessionID())
	}
	if out := echo(t, c2, srv.Root, "back"); out != "back\n" {
		t.Fatalf("echo after the restart: %q", out)
	}
}

// stacksContain reports whether a goroutine is in fn.
func stacksContain(fn string) bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), fn)
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, with a deadline
	}
}

// An environment replaced by environment/add while its lost session is
// being renewed stops renewing: it would otherwise dial the old URL for
// ever, and announce a fresh session under the id the new one holds.
func TestRegistryReplacedStopsRenewing(t *testing.T) {
	srv := execproctest.Start(t)
	// The replacement's server, closed after the registry (cleanups run
	// last first), so that no resume dials it while it shuts down.
	_, url := wsServer(t)
	r := New(Options{Client: execclient.Options{ReconnectAttempts: 1, DialTimeout: time.Second}})
	t.Cleanup(func() { r.Close() })
	if err := r.Add(AddParams{ID: "r", URL: srv.URL}); err != nil {
		t.Fatal(err)
	}
	c, err := r.Client(ctxT(t), "r")
	if err != nil {
		t.Fatal(err)
	}
	srv.Kill() // for good
	<-c.Done()
	const renew = "environment.(*Registry).renew"
	waitUntil(t, "renewing the lost session", func() bool { return stacksContain(renew) })
	if err := r.Add(AddParams{ID: "r", URL: url}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the replaced environment stops renewing", func() bool { return !stacksContain(renew) })
	c2, err := r.Client(ctxT(t), "r")
	if err != nil {
		t.Fatal(err)
	}
	if out := echo(t, c2, roots[url], "new"); out != "new\n" {
		t.Fatalf("echo %q", out)
	}
}
