package jsonrpc

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// stalledPeer connects a Conn to a net.Pipe whose other end nobody reads:
// the first write blocks in the transport, and the queue fills behind it.
func stalledPeer(t *testing.T, opts Options) *Conn {
	t.Helper()
	a, b := net.Pipe()
	c := NewConn(NewLineStream(a, 0), opts)
	t.Cleanup(func() {
		b.Close()
		c.Close()
	})
	return c
}

// fillQueue notifies until the queue has no room: a Notify whose context
// is already cancelled is queued while there is room, and fails with
// ErrCancelled as soon as it would have to wait.
func fillQueue(t *testing.T, c *Conn) {
	t.Helper()
	big := strings.Repeat("x", 8<<10)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for i := 0; i < 100_000; i++ {
		err := c.Notify(cancelled, "fill", big)
		if errors.Is(err, ErrCancelled) {
			return
		}
		if err != nil {
			t.Fatalf("fill: %v", err)
		}
	}
	t.Fatal("the queue never filled")
}

func TestCallHonoursContextWhileQueueFull(t *testing.T) {
	c := stalledPeer(t, Options{})
	fillQueue(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.Call(ctx, "m", strings.Repeat("y", 64<<10), nil) }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("Call = %v, want ErrTimeout", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("Call ignored its context while waiting for room in the queue")
	}
	if n := c.Pending(); n != 0 {
		t.Fatalf("%d calls left pending", n)
	}
}

func TestNotifyHonoursContextWhileQueueFull(t *testing.T) {
	c := stalledPeer(t, Options{})
	fillQueue(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Notify(ctx, "n", strings.Repeat("y", 64<<10)) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, ErrCancelled) {
			t.Fatalf("Notify = %v, want ErrCancelled", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("Notify ignored its context while waiting for room in the queue")
	}
}

func TestCloseIsBoundedWithAStuckHandler(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{})
	mux := NewMux()
	mux.HandleFunc("stuck", func(ctx context.Context, req *Request) (any, error) {
		close(started)
		<-release // ignores ctx
		return nil, nil
	})
	s, c := pair(t, Options{Handler: mux, DrainTimeout: 50 * time.Millisecond}, Options{})
	go func() { _ = c.Call(context.Background(), "stuck", nil, nil) }()
	<-started
	closed := make(chan struct{})
	go func() {
		s.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(waitLimit):
		t.Fatal("Close waited for a handler that ignores its context")
	}
}
