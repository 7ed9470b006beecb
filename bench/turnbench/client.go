package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
)

// client drives one app-server over its stdin and stdout, speaking
// Codex's JSON-RPC dialect (no "jsonrpc" member). It decodes only what it
// needs: responses, turn/completed and the commandExecution items of
// item/completed; every other notification is skipped after reading its
// method, so that the client costs little next to either server.
type client struct {
	w   *bufio.Writer
	wmu sync.Mutex

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan response
	turns   map[string]*turnWait // by thread id
	err     error                // set when the reader stops
	done    chan struct{}        // closed when the reader stops

	// serverRequests counts requests from the server (there should be
	// none under approval_policy "never"); each gets an error reply.
	serverRequests int
}

type response struct {
	result json.RawMessage
	err    *rpcError
}

type rpcError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// turnResult is what the client saw of one turn.
type turnResult struct {
	turnID   string
	status   string
	err      json.RawMessage
	commands int // commandExecution items completed with exit code 0, and mcpToolCall items completed
	failed   int // commandExecution items completed otherwise
	at       time.Time
}

type turnWait struct {
	ch       chan turnResult
	commands int
	failed   int
}

func newClient(stdin io.Writer, stdout io.Reader) *client {
	c := &client{
		w:       bufio.NewWriterSize(stdin, 64<<10),
		pending: map[int64]chan response{},
		turns:   map[string]*turnWait{},
		done:    make(chan struct{}),
	}
	go c.read(stdout)
	return c
}

func (c *client) write(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.w.Write(b)
	c.w.WriteByte('\n')
	return c.w.Flush()
}

// call sends a request and waits for its response.
func (c *client) call(method string, params any, timeout time.Duration) (json.RawMessage, error) {
	ch, err := c.send(method, params)
	if err != nil {
		return nil, err
	}
	return c.await(method, ch, timeout)
}

// send sends a request; await collects its response.
func (c *client) send(method string, params any) (chan response, error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, c.err
	}
	c.nextID++
	id := c.nextID
	ch := make(chan response, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	msg := map[string]any{"method": method, "id": id}
	if params != nil {
		msg["params"] = params
	}
	if err := c.write(msg); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	return ch, nil
}

func (c *client) await(method string, ch chan response, timeout time.Duration) (json.RawMessage, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("%s: %w", method, r.err)
		}
		return r.result, nil
	case <-c.done:
		return nil, fmt.Errorf("%s: %w", method, c.err)
	case <-t.C:
		return nil, fmt.Errorf("%s: no response within %v", method, timeout)
	}
}

func (c *client) notify(method string, params any) error {
	msg := map[string]any{"method": method}
	if params != nil {
		msg["params"] = params
	}
	return c.write(msg)
}

// expectTurn registers interest in the next turn/completed of thread; it
// must be called before turn/start is sent.
func (c *client) expectTurn(thread string) chan turnResult {
	ch := make(chan turnResult, 1)
	c.mu.Lock()
	c.turns[thread] = &turnWait{ch: ch}
	c.mu.Unlock()
	return ch
}

func (c *client) waitTurn(ch chan turnResult, timeout time.Duration) (turnResult, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-ch:
		return r, nil
	case <-c.done:
		return turnResult{}, fmt.Errorf("waiting for turn/completed: %w", c.err)
	case <-t.C:
		return turnResult{}, fmt.Errorf("no turn/completed within %v", timeout)
	}
}

var (
	methodPrefix = []byte(`{"method":"`)
	idKey        = []byte(`"id":`)
)

func (c *client) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 1<<20)
	var err error
	for {
		var line []byte
		line, err = readLine(br)
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err = c.handle(line); err != nil {
			break
		}
	}
	if errors.Is(err, io.EOF) {
		err = errors.New("the server closed its stdout")
	}
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
	close(c.done)
}

// readLine returns the next line without its newline; the slice is valid
// until the next call.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == nil {
		return line[:len(line)-1], nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	buf := append([]byte(nil), line...)
	for {
		line, err = br.ReadSlice('\n')
		buf = append(buf, line...)
		if err == nil {
			return buf[:len(buf)-1], nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
	}
}

// cheapMethod returns the method of a line that starts with
// {"method":"..." (both servers put it first on notifications), or "".
func cheapMethod(line []byte) string {
	rest, ok := bytes.CutPrefix(line, methodPrefix)
	if !ok {
		return ""
	}
	i := bytes.IndexByte(rest, '"')
	if i < 0 {
		return ""
	}
	return string(rest[:i])
}

func (c *client) handle(line []byte) error {
	if m := cheapMethod(line); m != "" {
		switch m {
		case "turn/completed", "item/completed":
		default:
			// A notification the benchmark ignores, unless it is a
			// server request ({"method","id","params"}).
			if rest := line[len(methodPrefix)+len(m)+1:]; !bytes.HasPrefix(rest, []byte(`,`)) || !bytes.HasPrefix(rest[1:], idKey) {
				return nil
			}
		}
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(line, &msg); err != nil {
		return fmt.Errorf("unparsable line from the server: %v: %.200s", err, line)
	}
	switch {
	case msg.Method != "" && len(msg.ID) > 0:
		c.mu.Lock()
		c.serverRequests++
		c.mu.Unlock()
		return c.write(map[string]any{"id": msg.ID, "error": map[string]any{"code": -32601, "message": "turnbench answers no server request"}})
	case msg.Method == "item/completed":
		c.itemCompleted(msg.Params)
	case msg.Method == "turn/completed":
		c.turnCompleted(msg.Params)
	case msg.Method != "":
	default:
		id, err := strconv.ParseInt(string(msg.ID), 10, 64)
		if err != nil {
			return fmt.Errorf("response with an id this client never sent: %s", msg.ID)
		}
		c.mu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ch == nil {
			return fmt.Errorf("response to unknown id %d", id)
		}
		ch <- response{result: msg.Result, err: msg.Error}
	}
	return nil
}

func (c *client) itemCompleted(params json.RawMessage) {
	var p struct {
		ThreadID string `json:"threadId"`
		Item     struct {
			Type     string `json:"type"`
			Status   string `json:"status"`
			ExitCode *int   `json:"exitCode"`
		} `json:"item"`
	}
	if json.Unmarshal(params, &p) != nil || p.Item.Type != "commandExecution" && p.Item.Type != "mcpToolCall" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if w := c.turns[p.ThreadID]; w != nil {
		// An MCP call (-mcp-turn) counts as a command that succeeded when
		// it completed.
		mcpOK := p.Item.Type == "mcpToolCall" && p.Item.Status == "completed"
		if mcpOK || p.Item.Status == "completed" && p.Item.ExitCode != nil && *p.Item.ExitCode == 0 {
			w.commands++
		} else {
			w.failed++
		}
	}
}

func (c *client) turnCompleted(params json.RawMessage) {
	at := time.Now()
	var p struct {
		ThreadID string `json:"threadId"`
		Turn     struct {
			ID     string          `json:"id"`
			Status string          `json:"status"`
			Error  json.RawMessage `json:"error"`
		} `json:"turn"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	c.mu.Lock()
	w := c.turns[p.ThreadID]
	delete(c.turns, p.ThreadID)
	c.mu.Unlock()
	if w != nil {
		w.ch <- turnResult{turnID: p.Turn.ID, status: p.Turn.Status, err: p.Turn.Error, commands: w.commands, failed: w.failed, at: at}
	}
}
