//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// client is a minimal exec-server client over one WebSocket: it sends
// requests, matches responses, and routes process notifications to the
// process that asked for them. Its reader parses process/output frames
// without decoding them, counting the base64 payload's decoded length, so
// that the client costs little next to the server it measures.
type client struct {
	ws *websocket.Conn

	wmu    sync.Mutex
	nextID int64

	mu      sync.Mutex
	pending map[int64]chan response
	procs   map[string]*procState
	err     error
	done    chan struct{}
}

type response struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// procState collects what one process sent.
type procState struct {
	bytes    int64        // decoded output bytes
	chunks   int64        // process/output notifications
	keep     bool         // keep the output itself, not only its length
	out      bytes.Buffer // the output, when keep
	exited   chan struct{}
	closed   chan struct{}
	exitCode int
	lastSeq  int64 // seq of the last notification
	skipped  int64 // seqs never notified: events the server dropped
}

// dial connects and performs the initialize / initialized handshake. With
// read false the client never reads: it is the stalled client of the
// backpressure test (the handshake's response is then not awaited either).
func dial(ctx context.Context, url string, read bool) (*client, error) {
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{
		CompressionMode: websocket.CompressionDisabled,
		HTTPClient:      &http.Client{Transport: &http.Transport{DialContext: dialBigReads}},
	})
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(1 << 30)
	c := &client{ws: ws, pending: map[int64]chan response{}, procs: map[string]*procState{}, done: make(chan struct{})}
	if !read {
		if err := c.send(ctx, `{"id":0,"method":"initialize","params":{"clientName":"execbench"}}`); err != nil {
			return nil, err
		}
		return c, c.send(ctx, `{"method":"initialized"}`)
	}
	go c.readLoop()
	if _, err := c.call(ctx, "initialize", map[string]any{"clientName": "execbench"}); err != nil {
		c.close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if err := c.send(ctx, `{"method":"initialized"}`); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// dialBigReads dials TCP and reads the socket through a 1 MiB buffer.
// The WebSocket library reads through its own 4 KiB buffer, which would
// cost the client a system call or two per 11 KiB process/output frame;
// with this one, a read takes whatever the socket holds, and the client
// stays a small share of the CPU next to the server it measures.
func dialBigReads(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &bigReadConn{Conn: c, r: bufio.NewReaderSize(c, 1<<20)}, nil
}

type bigReadConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bigReadConn) Read(p []byte) (int, error) { return c.r.Read(p) }

func (c *client) close() {
	_ = c.ws.CloseNow()
}

func (c *client) send(ctx context.Context, msg string) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.ws.Write(ctx, websocket.MessageText, []byte(msg))
}

// call sends a request and waits for its response.
func (c *client) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	ch, err := c.start(ctx, method, params)
	if err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return nil, fmt.Errorf("%s: %d %s", method, r.Error.Code, r.Error.Message)
		}
		return r.Result, nil
	case <-c.done:
		return nil, c.failure()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// start sends a request; its response arrives on the channel returned.
func (c *client) start(ctx context.Context, method string, params any) (chan response, error) {
	c.wmu.Lock()
	c.nextID++
	id := c.nextID
	c.wmu.Unlock()
	ch := make(chan response, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	b, err := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	return ch, c.send(ctx, string(b))
}

// startProcess registers a process and sends its process/start; the
// response is not awaited (output may arrive before it).
func (c *client) startProcess(ctx context.Context, id string, argv []string, keep bool) (*procState, chan response, error) {
	p := &procState{keep: keep, exited: make(chan struct{}), closed: make(chan struct{})}
	c.mu.Lock()
	c.procs[id] = p
	c.mu.Unlock()
	ch, err := c.start(ctx, "process/start", startParams(id, argv))
	return p, ch, err
}

func startParams(id string, argv []string) map[string]any {
	return map[string]any{
		"processId": id,
		"argv":      argv,
		"cwd":       "file:///tmp",
		"env":       map[string]string{"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
		"tty":       false,
	}
}

func (c *client) failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		return errors.New("connection closed")
	}
	return c.err
}

func (c *client) readLoop() {
	defer close(c.done)
	var buf bytes.Buffer
	for {
		_, r, err := c.ws.Reader(context.Background())
		if err != nil {
			c.mu.Lock()
			c.err = err
			c.mu.Unlock()
			return
		}
		buf.Reset()
		if _, err := buf.ReadFrom(r); err != nil {
			c.mu.Lock()
			c.err = err
			c.mu.Unlock()
			return
		}
		c.dispatch(buf.Bytes())
	}
}

var (
	keyMethod    = []byte(`"method":"`)
	keyProcessID = []byte(`"processId":"`)
	keyChunk     = []byte(`"chunk":"`)
	keyExitCode  = []byte(`"exitCode":`)
	keySeq       = []byte(`"seq":`)
)

// numberAt returns the JSON integer right after key in msg.
func numberAt(msg, key []byte) (int64, bool) {
	i := bytes.Index(msg, key)
	if i < 0 {
		return 0, false
	}
	rest := msg[i+len(key):]
	j := bytes.IndexAny(rest, ",}")
	if j <= 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(rest[:j])), 10, 64)
	return n, err == nil
}

// stringAt returns the JSON string (without escapes, as every value read
// here is) that starts right after key in msg.
func stringAt(msg, key []byte) ([]byte, bool) {
	i := bytes.Index(msg, key)
	if i < 0 {
		return nil, false
	}
	rest := msg[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return nil, false
	}
	return rest[:j], true
}

func (c *client) dispatch(msg []byte) {
	method, isNote := stringAt(msg, keyMethod)
	if !isNote {
		var r struct {
			ID *int64 `json:"id"`
			response
		}
		if json.Unmarshal(msg, &r) != nil || r.ID == nil {
			return
		}
		c.mu.Lock()
		ch := c.pending[*r.ID]
		delete(c.pending, *r.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- r.response
		}
		return
	}
	id, _ := stringAt(msg, keyProcessID)
	c.mu.Lock()
	p := c.procs[string(id)]
	c.mu.Unlock()
	if p == nil {
		return
	}
	// Notifications carry one seq counter per process: a jump means the
	// server skipped events (it dropped output).
	if seq, ok := numberAt(msg, keySeq); ok {
		if p.lastSeq != 0 && seq > p.lastSeq+1 {
			p.skipped += seq - p.lastSeq - 1
		}
		p.lastSeq = seq
	}
	switch string(method) {
	case "process/output":
		b64, ok := stringAt(msg, keyChunk)
		if !ok {
			return
		}
		n := len(b64) / 4 * 3
		if len(b64) > 0 && b64[len(b64)-1] == '=' {
			n--
			if len(b64) > 1 && b64[len(b64)-2] == '=' {
				n--
			}
		}
		p.bytes += int64(n)
		p.chunks++
		if p.keep {
			var s []byte
			_ = json.Unmarshal(append(append([]byte{'"'}, b64...), '"'), &s)
			p.out.Write(s)
		}
	case "process/exited":
		if n, ok := numberAt(msg, keyExitCode); ok {
			p.exitCode = int(n)
		}
		close(p.exited)
	case "process/closed":
		close(p.closed)
	}
}

// wait waits for the process to be closed, or fails at the deadline.
func (c *client) wait(ctx context.Context, p *procState) error {
	select {
	case <-p.closed:
		return nil
	case <-c.done:
		return c.failure()
	case <-ctx.Done():
		return fmt.Errorf("waiting for process/closed: %w", ctx.Err())
	}
}

// drainTimeout bounds every single step of the bench.
const drainTimeout = 120 * time.Second
