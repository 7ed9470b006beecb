package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// client speaks JSON-RPC to one app-server over its stdin and stdout: one
// line per message, requests answered by id, notifications handed to
// onNote in the order they arrive (on the reader's goroutine, so that an
// item's completion is seen before its turn's).
type client struct {
	wmu sync.Mutex
	w   io.Writer

	mu      sync.Mutex
	next    int
	pending map[int]chan response
	done    chan struct{}
	onNote  func(method string, params json.RawMessage)
}

type response struct {
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

func newClient(w io.Writer, r io.Reader, onNote func(string, json.RawMessage)) *client {
	c := &client{w: w, pending: map[int]chan response{}, done: make(chan struct{}), onNote: onNote}
	go c.read(r)
	return c
}

func (c *client) write(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.w.Write(append(b, '\n'))
	return err
}

// call sends a request and waits up to timeout for its answer.
func (c *client) call(method string, params any, timeout time.Duration) (json.RawMessage, error) {
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan response, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.write(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-ch:
		if r.Error != nil {
			return nil, r.Error
		}
		return r.Result, nil
	case <-c.done:
		return nil, errors.New("the app-server closed its output")
	case <-t.C:
		return nil, fmt.Errorf("%s: no answer in %s", method, timeout)
	}
}

func (c *client) notify(method string, params any) error {
	return c.write(map[string]any{"method": method, "params": params})
}

func (c *client) read(r io.Reader) {
	defer close(c.done)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			c.handle(line)
		}
		if err != nil {
			return
		}
	}
}

func (c *client) handle(line []byte) {
	var m struct {
		ID     *json.RawMessage `json:"id"`
		Method string           `json:"method"`
		Params json.RawMessage  `json:"params"`
		response
	}
	if json.Unmarshal(line, &m) != nil {
		return
	}
	switch {
	case m.Method != "" && m.ID != nil:
		// A server request: under approval "never" none is expected.
		_ = c.write(map[string]any{"id": m.ID, "error": map[string]any{"code": -32601, "message": "fleetbench answers no requests"}})
	case m.Method != "":
		c.onNote(m.Method, m.Params)
	case m.ID != nil:
		var id int
		if json.Unmarshal(*m.ID, &id) != nil {
			return
		}
		c.mu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ch != nil {
			ch <- m.response
		}
	}
}
