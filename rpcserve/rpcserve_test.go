package rpcserve

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/codexd/codexd/jsonrpc"
	"github.com/codexd/codexd/sandbox"
)

func TestMain(m *testing.M) {
	// Children of the peer tests: the sandbox helper, and a client.
	sandbox.RunHelperIfRequested()
	if url := os.Getenv(dialEnv); url != "" {
		dialAsClient(url)
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

const deadline = 15 * time.Second

// echoEndpoint answers "echo" with its params and records the transport
// and peer of each connection. Close ends every live connection.
type echoEndpoint struct {
	mu     sync.Mutex
	conns  map[*jsonrpc.Conn]bool
	seen   []string
	closed bool
	wg     sync.WaitGroup
}

func newEcho() *echoEndpoint { return &echoEndpoint{conns: map[*jsonrpc.Conn]bool{}} }

func (e *echoEndpoint) ServeStreamFrom(st jsonrpc.Stream, transport, peer string) error {
	mux := jsonrpc.NewMux()
	mux.HandleFunc("echo", func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		return req.Params, nil
	})
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return st.Close()
	}
	e.wg.Add(1)
	defer e.wg.Done()
	c := jsonrpc.NewConn(st, jsonrpc.Options{Handler: mux})
	e.conns[c] = true
	e.seen = append(e.seen, transport+" "+peer)
	e.mu.Unlock()
	<-c.Done()
	e.mu.Lock()
	delete(e.conns, c)
	e.mu.Unlock()
	return nil
}

func (e *echoEndpoint) Close() error {
	e.mu.Lock()
	e.closed = true
	var cs []*jsonrpc.Conn
	for c := range e.conns {
		cs = append(cs, c)
	}
	e.mu.Unlock()
	for _, c := range cs {
		c.Close()
	}
	e.wg.Wait()
	return nil
}

func echoCall(t *testing.T, c *jsonrpc.Conn, text string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	var got string
	if err := c.Call(ctx, "echo", text, &got); err != nil || got != text {
		t.Fatalf("echo %q = %q, %v", text, got, err)
	}
}

func TestHandlerRoutesAndRefusals(t *testing.T) {
	ep := newEcho()
	defer ep.Close()
	h := Handler(ep, Options{AuthToken: "s3cret"})
	cases := []struct {
		path, origin, auth string
		want               int
		body               string
	}{
		{"/readyz", "", "", 200, ""},
		{"/healthz", "", "", 200, ""},
		{"/readyz", "https://evil.example", "", 403, "cross-origin"},
		{"/", "https://evil.example", "Bearer s3cret", 403, "cross-origin"},
		{"/nope", "", "Bearer s3cret", 404, ""},
		{"/", "", "", 401, "missing websocket bearer token"},
		{"/", "", "Basic s3cret", 401, "missing websocket bearer token"},
		{"/", "", "Bearer s3cre", 401, "invalid websocket bearer token"},
		{"/", "", "Bearer s3cret-and-more", 401, "invalid websocket bearer token"},
		// Authorized, but not an upgrade: the WebSocket library says 426.
		{"/", "", "Bearer s3cret", 426, "Upgrade"},
		{"/", "", "bearer s3cret", 426, "Upgrade"},
		{"/", "", "BEARER  s3cret ", 426, "Upgrade"},
	}
	for _, tc := range cases {
		req := httptest.NewRequest("GET", tc.path, nil)
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != tc.want || !strings.Contains(w.Body.String(), tc.body) {
			t.Errorf("%s origin=%q auth=%q: %d %q; want %d %q", tc.path, tc.origin, tc.auth, w.Code, w.Body, tc.want, tc.body)
		}
	}
}

func TestBearerToken(t *testing.T) {
	for in, want := range map[string]string{
		"Bearer abc": "abc", "bearer abc": "abc", "BeArEr  abc  ": "abc", " Bearer abc": "abc",
	} {
		if got, ok := bearerToken(in); !ok || got != want {
			t.Errorf("bearerToken(%q) = %q, %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "Bearer", "Bearerabc", "Basic abc", "Token abc"} {
		if got, ok := bearerToken(in); ok {
			t.Errorf("bearerToken(%q) = %q, accepted", in, got)
		}
	}
}

func TestWebSocketWithToken(t *testing.T) {
	ep := newEcho()
	l, err := Listen(ep, jsonrpc.Listen{Scheme: "ws", Addr: "127.0.0.1:0"}, Options{AuthToken: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- l.Serve(nil, nil) }()
	defer func() {
		l.Close()
		ep.Close()
		<-served
	}()
	if !strings.HasPrefix(l.URL(), "ws://127.0.0.1:") || strings.HasSuffix(l.URL(), ":0") {
		t.Fatalf("URL %q", l.URL())
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if _, err := jsonrpc.DialWebSocket(ctx, l.URL(), http.Header{"Authorization": {"Bearer wrong"}}, 0); err == nil {
		t.Fatal("a wrong token was accepted")
	}
	st, err := jsonrpc.DialWebSocket(ctx, l.URL(), http.Header{"Authorization": {"bearer tok"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonrpc.NewConn(st, jsonrpc.Options{})
	defer c.Close()
	echoCall(t, c, "over ws")
}

func TestNonLoopbackNeedsAuth(t *testing.T) {
	ep := newEcho()
	defer ep.Close()
	for _, addr := range []string{"0.0.0.0:0", "[::]:0"} {
		_, err := Listen(ep, jsonrpc.Listen{Scheme: "ws", Addr: addr}, Options{})
		if !errors.Is(err, ErrNoAuth) {
			t.Errorf("ws://%s without a token: %v, want ErrNoAuth", addr, err)
		}
	}
	for _, opts := range []Options{{AuthToken: "t"}, {InsecureNoAuth: true}} {
		l, err := Listen(ep, jsonrpc.Listen{Scheme: "ws", Addr: "0.0.0.0:0"}, opts)
		if err != nil {
			t.Errorf("ws://0.0.0.0:0 with %+v: %v", opts, err)
			continue
		}
		l.Close()
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", "[::1]:0", "127.0.0.2:0"} {
		if !isLoopback(addr) {
			t.Errorf("%s is loopback", addr)
		}
	}
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "192.168.1.1:0", "[::ffff:10.0.0.1]:0"} {
		if isLoopback(addr) {
			t.Errorf("%s is not loopback", addr)
		}
	}
}

func TestUnixSocketIsPrivate(t *testing.T) {
	old := syscall.Umask(0o002) // as loose as most desktops
	defer syscall.Umask(old)
	ep := newEcho()
	sock := filepath.Join(t.TempDir(), "s.sock")
	l, err := Listen(ep, jsonrpc.Listen{Scheme: "unix", Addr: sock}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- l.Serve(nil, nil) }()
	fi, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want 0600", fi.Mode().Perm())
	}
	nc, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonrpc.NewConn(jsonrpc.NewLineStream(nc, 0), jsonrpc.Options{})
	echoCall(t, c, "over unix")
	// A second server on a live socket is refused.
	if _, err := Listen(newEcho(), jsonrpc.Listen{Scheme: "unix", Addr: sock}, Options{}); err == nil || !strings.Contains(err.Error(), "already listening") {
		t.Errorf("second listener on a live socket: %v", err)
	}
	c.Close()
	l.Close()
	ep.Close()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind: %v", err)
	}
	ep.mu.Lock()
	// (The refused listener's probe was a connection too.)
	if len(ep.seen) == 0 || ep.seen[0] != "unix "+sock {
		t.Errorf("connections %q", ep.seen)
	}
	ep.mu.Unlock()
}

func TestUnixSocketPathInUse(t *testing.T) {
	dir := t.TempDir()
	// A regular file is never replaced.
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(newEcho(), jsonrpc.Listen{Scheme: "unix", Addr: file}, Options{}); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("listen on a regular file: %v", err)
	}
	if b, _ := os.ReadFile(file); string(b) != "keep" {
		t.Errorf("file changed: %q", b)
	}
	// A stale socket (nobody listening) is replaced.
	stale := filepath.Join(dir, "stale.sock")
	ln, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	l, err := Listen(newEcho(), jsonrpc.Listen{Scheme: "unix", Addr: stale}, Options{})
	if err != nil {
		t.Fatalf("stale socket: %v", err)
	}
	l.Close()
}

func TestRunPrintsURLAndStopsWithContext(t *testing.T) {
	ep := newEcho()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, ep, jsonrpc.Listen{Scheme: "ws", Addr: "127.0.0.1:0"}, Options{}, nil, pw)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSpace(line)
	dctx, dcancel := context.WithTimeout(context.Background(), deadline)
	defer dcancel()
	st, err := jsonrpc.DialWebSocket(dctx, url, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonrpc.NewConn(st, jsonrpc.Options{})
	echoCall(t, c, "run")
	go io.Copy(io.Discard, pr)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(deadline):
		t.Fatal("Run did not return after its context ended")
	}
	// Run closed the endpoint, which ended the live connection.
	select {
	case <-c.Done():
	case <-time.After(deadline):
		t.Fatal("the connection outlived Run")
	}
}

func TestRunStdio(t *testing.T) {
	ep := newEcho()
	defer ep.Close()
	in := strings.NewReader(`{"id":1,"method":"echo","params":"hi"}` + "\n")
	var out strings.Builder
	if err := Run(context.Background(), ep, jsonrpc.Listen{Scheme: "stdio"}, Options{}, in, &syncWriter{w: &out}); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != `{"id":1,"result":"hi"}`+"\n" {
		t.Fatalf("stdout %q", got)
	}
}

func TestRunStdioEndsWhenContextEnds(t *testing.T) {
	// The client keeps stdin open; cancelling must still end the session.
	ep := newEcho()
	defer ep.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, ep, jsonrpc.Listen{Scheme: "stdio"}, Options{}, r, io.Discard) }()
	if _, err := w.WriteString(`{"id":1,"method":"echo","params":"x"}` + "\n"); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(deadline):
		t.Fatal("Run over stdio did not return after its context ended")
	}
}

func TestReadAuthToken(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "tok")
	if err := os.WriteFile(p, []byte("  abc \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if tok, err := ReadAuthToken(p); err != nil || tok != "abc" {
		t.Errorf("ReadAuthToken = %q, %v", tok, err)
	}
	if err := os.WriteFile(p, []byte("\n\t"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadAuthToken(p); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("empty token: %v", err)
	}
	if _, err := ReadAuthToken(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file accepted")
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// TestStdinOutlivesItsFile: the *os.File given as stdin may be dropped by
// its owner once Run has it; a garbage collection then runs its finalizer,
// which must not close the descriptor the session reads from.
func TestStdinOutlivesItsFile(t *testing.T) {
	ep := newEcho()
	defer ep.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	out := make(chanWriter, 16)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func(r *os.File) { done <- Run(ctx, ep, jsonrpc.Listen{Scheme: "stdio"}, Options{}, r, out) }(r)
	r = nil
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
	if _, err := w.WriteString(`{"id":1,"method":"echo","params":"x"}` + "\n"); err != nil {
		t.Fatalf("the session's stdin was closed under it: %v", err)
	}
	select {
	case line := <-out:
		if !strings.Contains(line, `"id":1`) {
			t.Fatalf("answer: %q", line)
		}
	case <-time.After(deadline):
		t.Fatal("no answer")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(deadline):
		t.Fatal("Run did not return")
	}
}

// chanWriter hands each write to the test.
type chanWriter chan string

func (c chanWriter) Write(b []byte) (int, error) {
	c <- string(b)
	return len(b), nil
}
