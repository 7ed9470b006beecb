//go:build unix

package execclient

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/codexd/codexd/execserver"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const waitTimeout = 15 * time.Second

// newServer serves a fresh exec-server over an httptest WebSocket endpoint.
func newServer(t *testing.T, cfg execserver.Config) (*execserver.Server, string) {
	t.Helper()
	srv, err := execserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close() // ends the WebSocket handlers hs.Close waits for
		hs.Close()
	})
	return srv, "ws" + strings.TrimPrefix(hs.URL, "http")
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

func dialT(t *testing.T, url string, opts Options) *Client {
	t.Helper()
	c, err := Dial(testCtx(t), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// hostEnv is the test's own environment, so that PATH works remotely.
func hostEnv() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

// collector drains a reader on its own goroutine and lets the test wait for
// content with a deadline.
type collector struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	err     error // io.EOF on a clean end
	changed chan struct{}
	done    chan struct{}
}

func collect(r io.Reader) *collector {
	c := &collector{changed: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		b := make([]byte, 4096)
		for {
			n, err := r.Read(b)
			c.mu.Lock()
			c.buf.Write(b[:n])
			if err != nil {
				c.err = err
			}
			close(c.changed)
			c.changed = make(chan struct{})
			c.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return c
}

func (c *collector) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// waitFor waits until the output contains s.
func (c *collector) waitFor(t *testing.T, s string) {
	t.Helper()
	timer := time.NewTimer(waitTimeout)
	defer timer.Stop()
	for {
		c.mu.Lock()
		got, err, ch := c.buf.String(), c.err, c.changed
		c.mu.Unlock()
		if strings.Contains(got, s) {
			return
		}
		if err != nil {
			t.Fatalf("stream ended (%v) before %q; got %q", err, s, got)
		}
		select {
		case <-ch:
		case <-timer.C:
			t.Fatalf("no %q within %v; got %q", s, waitTimeout, got)
		}
	}
}

// waitLen waits until at least n bytes were read.
func (c *collector) waitLen(t *testing.T, n int) {
	t.Helper()
	timer := time.NewTimer(waitTimeout)
	defer timer.Stop()
	for {
		c.mu.Lock()
		l, err, ch := c.buf.Len(), c.err, c.changed
		c.mu.Unlock()
		if l >= n {
			return
		}
		if err != nil {
			t.Fatalf("stream ended (%v) after %d bytes, before %d", err, l, n)
		}
		select {
		case <-ch:
		case <-timer.C:
			t.Fatalf("only %d of %d bytes within %v", l, n, waitTimeout)
		}
	}
}

// end waits for the reader to end and returns the output and the error.
func (c *collector) end(t *testing.T) (string, error) {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(waitTimeout):
		t.Fatalf("stream did not end within %v; got %q", waitTimeout, c.String())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	err := c.err
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return c.buf.String(), err
}

type result struct {
	stdout, stderr string
	code           int
	err            error
}

// run starts a process and collects everything it does.
func run(t *testing.T, c *Client, o StartOptions) result {
	t.Helper()
	p, err := c.Start(testCtx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	return finish(t, p)
}

func finish(t *testing.T, p *Process) result {
	t.Helper()
	out, errs := collect(p.Stdout()), collect(p.Stderr())
	var r result
	r.stdout, r.err = out.end(t)
	if r.err != nil {
		t.Fatalf("stdout: %v", r.err)
	}
	r.stderr, r.err = errs.end(t)
	if r.err != nil {
		t.Fatalf("stderr: %v", r.err)
	}
	r.code, r.err = p.Wait(testCtx(t))
	return r
}

// proxy is a TCP proxy whose connections the test can cut, to drop the
// client's transport the way a network failure does.
type proxy struct {
	t      *testing.T
	ln     net.Listener
	target string

	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	blocked bool
	wg      sync.WaitGroup
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		blocked := p.blocked
		p.mu.Unlock()
		if blocked {
			in.Close()
			continue
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close()
			continue
		}
		p.mu.Lock()
		p.conns[in], p.conns[out] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(in, out)
		go p.pipe(out, in)
	}
}

func (p *proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
}

// cut resets every current connection, as a broken network would.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // RST, not a polite FIN
		}
		c.Close()
	}
	p.conns = map[net.Conn]struct{}{}
}

// block makes the proxy refuse (accept and drop) new connections.
func (p *proxy) block(b bool) {
	p.mu.Lock()
	p.blocked = b
	p.mu.Unlock()
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}

// writeFifo writes s to a fifo, waiting (with a deadline) for the child to
// open it.
func writeFifo(t *testing.T, path, s string) {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- os.WriteFile(path, []byte(s), 0o600) }()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitTimeout):
		t.Fatalf("nobody opened %s", path)
	}
}

// readFifo reads a fifo to EOF, waiting (with a deadline) for the child.
func readFifo(t *testing.T, path string) string {
	t.Helper()
	type res struct {
		b   []byte
		err error
	}
	ch := make(chan res, 1)
	go func() { b, err := os.ReadFile(path); ch <- res{b, err} }()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return string(r.b)
	case <-time.After(waitTimeout):
		t.Fatalf("nobody wrote %s", path)
	}
	return ""
}
