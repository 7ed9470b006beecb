//go:build unix

package execclient

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codexd/codexd/execproto"
	"github.com/codexd/codexd/execserver"
	"github.com/codexd/codexd/jsonrpc"
)

// reconnects reports resume attempts on a channel.
type reconnects struct {
	ch chan error
}

func newReconnects() *reconnects { return &reconnects{ch: make(chan error, 100)} }

func (r *reconnects) hook(attempt int, err error) { r.ch <- err }

// waitSuccess waits for a successful resume.
func (r *reconnects) waitSuccess(t *testing.T) {
	t.Helper()
	timer := time.NewTimer(waitTimeout)
	defer timer.Stop()
	for {
		select {
		case err := <-r.ch:
			if err == nil {
				return
			}
		case <-timer.C:
			t.Fatal("no resume")
		}
	}
}

// waitFailure waits for a failed resume attempt.
func (r *reconnects) waitFailure(t *testing.T) {
	t.Helper()
	select {
	case err := <-r.ch:
		if err == nil {
			t.Fatal("resumed while the proxy was blocked")
		}
	case <-time.After(waitTimeout):
		t.Fatal("no resume attempt")
	}
}

// TestResumeAcrossCut drops the TCP connection (with a reset) twice while
// a process runs, the second time producing output while the client is
// disconnected, and checks that every byte arrives exactly once, in order.
func TestResumeAcrossCut(t *testing.T) {
	_, url := newServer(t, execserver.Config{})
	px := newProxy(t, url[len("ws://"):])
	rc := newReconnects()
	c := dialT(t, "ws://"+px.addr(), Options{OnReconnect: rc.hook, ReconnectBackoff: 10 * time.Millisecond})
	sid := c.SessionID()
	ctx := testCtx(t)

	dir := t.TempDir()
	in, out2 := filepath.Join(dir, "in"), filepath.Join(dir, "out2")
	mkfifo(t, in)
	mkfifo(t, out2)
	p, err := c.Start(ctx, StartOptions{
		Argv: []string{"sh", "-c", `echo one; read x; echo "two:$x"; read y < "$1"; echo three; echo err-three >&2; echo ok > "$2"; read z; echo four; exit 5`, "sh", in, out2},
		Env:  hostEnv(), PipeStdin: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	out, errs := collect(p.Stdout()), collect(p.Stderr())
	out.waitFor(t, "one\n")

	// Cut 1: the client notices, resumes, and a write goes through the new
	// connection.
	px.cut()
	rc.waitSuccess(t)
	if err := p.Write(ctx, []byte("x\n")); err != nil {
		t.Fatal(err)
	}
	out.waitFor(t, "two:x\n")

	// Cut 2: output is produced while no connection exists.
	px.block(true)
	px.cut()
	rc.waitFailure(t)
	writeFifo(t, in, "go\n")
	readFifo(t, out2) // "three" was written before this
	px.block(false)
	rc.waitSuccess(t)
	out.waitFor(t, "three\n")
	if err := p.Write(ctx, []byte("z\n")); err != nil {
		t.Fatal(err)
	}
	stdout, err := out.end(t)
	if err != nil {
		t.Fatal(err)
	}
	stderr, _ := errs.end(t)
	code, err := p.Wait(ctx)
	if err != nil || code != 5 {
		t.Fatalf("wait: %d, %v", code, err)
	}
	if stdout != "one\ntwo:x\nthree\nfour\n" || stderr != "err-three\n" {
		t.Fatalf("stdout %q, stderr %q", stdout, stderr)
	}
	if c.SessionID() != sid || c.Reconnects() != 2 {
		t.Fatalf("session %q (was %q), %d reconnects", c.SessionID(), sid, c.Reconnects())
	}
}

// TestResumeMidStream cuts the connection repeatedly while a process
// streams a lot of output, and checks the reader gets it exactly once.
func TestResumeMidStream(t *testing.T) {
	_, url := newServer(t, execserver.Config{})
	px := newProxy(t, url[len("ws://"):])
	rc := newReconnects()
	c := dialT(t, "ws://"+px.addr(), Options{OnReconnect: rc.hook, ReconnectBackoff: 10 * time.Millisecond})
	ctx := testCtx(t)
	p, err := c.Start(ctx, StartOptions{
		Argv: []string{"sh", "-c", `seq 1 60000; seq 1 20000 >&2; read x; seq 60001 120000`},
		Env:  hostEnv(), PipeStdin: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	out, errs := collect(p.Stdout()), collect(p.Stderr())
	for _, n := range []int{10000, 100000, 300000} {
		out.waitLen(t, n)
		px.cut()
		rc.waitSuccess(t)
	}
	out.waitFor(t, "\n60000\n")
	if err := p.Write(ctx, []byte("go\n")); err != nil {
		t.Fatal(err)
	}
	out.waitLen(t, 500000)
	px.cut()
	rc.waitSuccess(t)
	stdout, err := out.end(t)
	if err != nil {
		t.Fatal(err)
	}
	stderr, _ := errs.end(t)
	if code, err := p.Wait(ctx); err != nil || code != 0 {
		t.Fatalf("wait: %d, %v", code, err)
	}
	if stdout != seq(1, 120000) {
		t.Fatalf("stdout differs: %d bytes, want %d", len(stdout), len(seq(1, 120000)))
	}
	if stderr != seq(1, 20000) {
		t.Fatalf("stderr differs: %d bytes", len(stderr))
	}
	if c.Reconnects() < 4 {
		t.Fatalf("%d reconnects", c.Reconnects())
	}
}

// dropStream loses the first process/output notification it reads whose
// chunk matches once armed, and breaks the transport right after: exactly a
// notification lost in flight, which the server believes it delivered.
type dropStream struct {
	jsonrpc.Stream
	armed   *atomic.Bool
	dropped chan struct{}
}

func (s *dropStream) Read() ([]byte, error) {
	msg, err := s.Stream.Read()
	if err == nil && s.armed.Load() && bytes.Contains(msg, []byte(`"process/output"`)) {
		if s.armed.CompareAndSwap(true, false) {
			s.Stream.Close()
			close(s.dropped)
			return nil, errors.New("test: transport broken")
		}
	}
	return msg, err
}

// TestResumeRecoversLostNotification: the resumed server pushes from after
// the lost notification; the client must fetch it with process/read.
func TestResumeRecoversLostNotification(t *testing.T) {
	_, url := newServer(t, execserver.Config{})
	var armed atomic.Bool
	dropped := make(chan struct{})
	var mu sync.Mutex
	dial := func(ctx context.Context) (jsonrpc.Stream, error) {
		s, err := jsonrpc.DialWebSocket(ctx, url, nil, 0)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		return &dropStream{Stream: s, armed: &armed, dropped: dropped}, nil
	}
	rc := newReconnects()
	c, err := Connect(testCtx(t), dial, Options{OnReconnect: rc.hook})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testCtx(t)
	p, err := c.Start(ctx, StartOptions{
		Argv: []string{"sh", "-c", `echo one; read x; echo two; read y; echo three`},
		Env:  hostEnv(), PipeStdin: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	out := collect(p.Stdout())
	out.waitFor(t, "one\n")
	armed.Store(true)
	if err := p.Write(ctx, []byte("x\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-dropped:
	case <-time.After(waitTimeout):
		t.Fatal("nothing dropped")
	}
	rc.waitSuccess(t)
	out.waitFor(t, "two\n")
	if err := p.Write(ctx, []byte("y\n")); err != nil {
		t.Fatal(err)
	}
	stdout, err := out.end(t)
	if err != nil {
		t.Fatal(err)
	}
	if code, err := p.Wait(ctx); err != nil || code != 0 {
		t.Fatalf("wait: %d, %v", code, err)
	}
	if stdout != "one\ntwo\nthree\n" {
		t.Fatalf("stdout %q", stdout)
	}
}

// TestSessionLost: when the server is gone, the bounded resume gives up
// and the process fails with ErrSessionLost.
func TestSessionLost(t *testing.T) {
	srv, url := newServer(t, execserver.Config{})
	rc := newReconnects()
	c := dialT(t, url, Options{OnReconnect: rc.hook, ReconnectAttempts: 3, ReconnectBackoff: time.Millisecond})
	p, err := c.Start(testCtx(t), StartOptions{Argv: []string{"sleep", "30"}, Env: hostEnv()})
	if err != nil {
		t.Fatal(err)
	}
	out := collect(p.Stdout())
	srv.Close()
	if _, err := out.end(t); !errors.Is(err, ErrSessionLost) {
		t.Fatalf("reader: %v", err)
	}
	if _, err := p.Wait(testCtx(t)); !errors.Is(err, ErrSessionLost) {
		t.Fatalf("wait: %v", err)
	}
	select {
	case <-c.Done():
	case <-time.After(waitTimeout):
		t.Fatal("client not done")
	}
	if !errors.Is(c.Err(), ErrSessionLost) {
		t.Fatalf("Err: %v", c.Err())
	}
	if n := len(rc.ch); n != 3 {
		t.Fatalf("%d attempts", n)
	}
}

// TestSessionExpired: a session the server forgot (its TTL ran out while
// the client could not reach it) is refused at once, and the process fails.
func TestSessionExpired(t *testing.T) {
	_, url := newServer(t, execserver.Config{SessionTTL: time.Millisecond})
	px := newProxy(t, url[len("ws://"):])
	rc := newReconnects()
	c := dialT(t, "ws://"+px.addr(), Options{OnReconnect: rc.hook, ReconnectBackoff: 20 * time.Millisecond})
	held := filepath.Join(t.TempDir(), "held")
	mkfifo(t, held)
	opened := make(chan *os.File, 1)
	go func() {
		f, err := os.Open(held) // blocks until the child opens it
		if err != nil {
			t.Error(err)
		}
		opened <- f
	}()
	// The child holds the fifo open until the session's expiry kills it.
	p, err := c.Start(testCtx(t), StartOptions{Argv: []string{"sh", "-c", `exec 3>"$1"; echo ready; sleep 30`, "sh", held}, Env: hostEnv()})
	if err != nil {
		t.Fatal(err)
	}
	collect(p.Stdout()).waitFor(t, "ready\n")
	f := <-opened
	defer f.Close()
	px.block(true)
	px.cut()
	eof := make(chan error, 1)
	go func() { _, err := io.ReadAll(f); eof <- err }()
	select {
	case <-eof: // the process group was killed
	case <-time.After(waitTimeout):
		t.Fatal("the session did not expire")
	}
	px.block(false)
	if _, err := p.Wait(testCtx(t)); !errors.Is(err, ErrSessionLost) {
		t.Fatalf("wait: %v", err)
	}
}

// fakeServer speaks just enough of the protocol to play a resumed server
// whose pump starts too late: after the resume, the first process/read
// sees nothing, then the process's remaining output, exit and close
// happen without any notification.
type fakeServer struct {
	mu      sync.Mutex
	gen     int // connections served
	reads   int // process/read calls after the resume
	streams []jsonrpc.Stream
	conns   []*jsonrpc.Conn
}

func (f *fakeServer) dial(ctx context.Context) (jsonrpc.Stream, error) {
	a, b := net.Pipe()
	mux := jsonrpc.NewMux()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen++
	gen := f.gen
	execproto.Initialize.Register(mux, func(ctx context.Context, p execproto.InitializeParams) (execproto.InitializeResponse, error) {
		if (gen > 1) != (p.ResumeSessionID != nil) {
			return execproto.InitializeResponse{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "unexpected resume")
		}
		return execproto.InitializeResponse{SessionID: "fake-session"}, nil
	})
	mux.HandleFunc(execproto.MethodInitialized, func(context.Context, *jsonrpc.Request) (any, error) { return nil, nil })
	execproto.ProcessStart.Register(mux, func(ctx context.Context, p execproto.ProcessStartParams) (execproto.ProcessStartResponse, error) {
		return execproto.ProcessStartResponse{ProcessID: p.ProcessID}, nil
	})
	execproto.ProcessRead.Register(mux, func(ctx context.Context, p execproto.ProcessReadParams) (execproto.ProcessReadResponse, error) {
		f.mu.Lock()
		f.reads++
		n := f.reads
		f.mu.Unlock()
		after := uint64(0)
		if p.AfterSeq != nil {
			after = *p.AfterSeq
		}
		if n == 1 {
			return execproto.ProcessReadResponse{Chunks: []execproto.ProcessOutputChunk{}, NextSeq: 1}, nil
		}
		code := int32(7)
		res := execproto.ProcessReadResponse{Chunks: []execproto.ProcessOutputChunk{}, NextSeq: 4, Exited: true, ExitCode: &code, Closed: true}
		if after < 1 {
			res.Chunks = append(res.Chunks, execproto.ProcessOutputChunk{Seq: 1, Stream: execproto.StreamStdout, Chunk: []byte("late\n")})
			res.NextSeq = 2
		}
		return res, nil
	})
	s := jsonrpc.NewLineStream(b, 0)
	f.streams = append(f.streams, s)
	f.conns = append(f.conns, jsonrpc.NewConn(s, jsonrpc.Options{Handler: mux}))
	return jsonrpc.NewLineStream(a, 0), nil
}

// drop breaks the current connection.
func (f *fakeServer) drop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.streams[len(f.streams)-1].Close()
}

func (f *fakeServer) close() {
	f.mu.Lock()
	conns := f.conns
	f.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// TestResumeRereadsUntilPushed: a process whose end falls in the window
// between the first catch-up read and the start of the server's resumed
// pump is still seen to the end, by the delayed re-reads.
func TestResumeRereadsUntilPushed(t *testing.T) {
	f := &fakeServer{}
	defer f.close()
	rc := newReconnects()
	c, err := Connect(testCtx(t), f.dial, Options{OnReconnect: rc.hook})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := c.Start(testCtx(t), StartOptions{Argv: []string{"anything"}})
	if err != nil {
		t.Fatal(err)
	}
	f.drop()
	rc.waitSuccess(t)
	r := finish(t, p)
	if r.err != nil || r.code != 7 || r.stdout != "late\n" {
		t.Fatalf("got %+v", r)
	}
	f.mu.Lock()
	reads := f.reads
	f.mu.Unlock()
	if reads < 3 {
		t.Fatalf("%d reads", reads)
	}
}

// TestReconnectIsAnnouncedWhenConnected: whoever hears of a successful
// resume finds the client connected (environment/status after
// thread/environment/connected said "disconnected" when the announcement
// came before the new connection was installed).
func TestReconnectIsAnnouncedWhenConnected(t *testing.T) {
	_, url := newServer(t, execserver.Config{})
	px := newProxy(t, url[len("ws://"):])
	seen := make(chan bool, 10)
	var c *Client
	ready := make(chan struct{})
	c = dialT(t, "ws://"+px.addr(), Options{ReconnectBackoff: 10 * time.Millisecond, OnReconnect: func(_ int, err error) {
		if err == nil {
			<-ready
			seen <- c.Connected()
		}
	}})
	close(ready)
	for i := 0; i < 3; i++ {
		px.cut()
		select {
		case ok := <-seen:
			if !ok {
				t.Fatalf("resume %d was announced while the client was not connected", i+1)
			}
		case <-time.After(waitTimeout):
			t.Fatal("no resume")
		}
	}
}
