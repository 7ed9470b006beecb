//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// wsConn is one WebSocket client of the fan-out test: it counts the
// notifications it receives and hands responses to their callers.
type wsConn struct {
	c *websocket.Conn

	mu        sync.Mutex
	pending   map[string]chan *msg
	notes     int64
	completed int
	changed   chan struct{}
	err       error
	nextID    int
	debug     bool
}

func dialWS(ctx context.Context, url string) (*wsConn, error) {
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(-1)
	w := &wsConn{c: c, pending: map[string]chan *msg{}, changed: make(chan struct{}, 1), nextID: 1}
	go w.read()
	return w, nil
}

var completedMarker = []byte(`"method":"turn/completed"`)

func (w *wsConn) read() {
	for {
		_, b, err := w.c.Read(context.Background())
		if err != nil {
			w.mu.Lock()
			w.err = err
			w.mu.Unlock()
			w.signal()
			return
		}
		// Notifications start with their method (both servers write it
		// first); responses with their id.
		if bytes.HasPrefix(b, []byte(`{"method"`)) {
			if w.debug {
				logf("recv %.200s", b)
			}
			w.mu.Lock()
			w.notes++
			if bytes.Contains(b, completedMarker) {
				w.completed++
			}
			w.mu.Unlock()
			w.signal()
			continue
		}
		var m msg
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		w.mu.Lock()
		ch := w.pending[string(m.ID)]
		delete(w.pending, string(m.ID))
		w.mu.Unlock()
		if ch != nil {
			ch <- &m
		}
	}
}

func (w *wsConn) signal() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

func (w *wsConn) call(ctx context.Context, method, params string) (json.RawMessage, error) {
	w.mu.Lock()
	id := strconv.Itoa(w.nextID)
	w.nextID++
	ch := make(chan *msg, 1)
	w.pending[id] = ch
	w.mu.Unlock()
	if err := w.c.Write(ctx, websocket.MessageText, []byte(fmt.Sprintf(`{"method":%q,"id":%s,"params":%s}`, method, id, params))); err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, m.Error)
		}
		return m.Result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// waitCompleted waits until the connection has seen n turn/completed.
func (w *wsConn) waitCompleted(ctx context.Context, n int) error {
	for {
		w.mu.Lock()
		done, err := w.completed >= n, w.err
		w.mu.Unlock()
		if done {
			return nil
		}
		if err != nil {
			return err
		}
		select {
		case <-w.changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (w *wsConn) count() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.notes
}

func (w *wsConn) close() { w.c.CloseNow() }

// freePort picks a loopback port nobody listens on.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitListening waits until something accepts on addr.
func waitListening(ctx context.Context, addr string) error {
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("nothing listens on %s: %w", addr, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
