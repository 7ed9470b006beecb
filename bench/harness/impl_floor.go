package harness

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The floor is the least a newline-delimited JSON-RPC peer must do with
// go-json-experiment: marshal a request struct, unmarshal it on the other
// side with raw params, unmarshal the params, marshal the response, and
// unmarshal it with a raw result. One server goroutine handles requests in
// order; the client has one reader goroutine and a minimal pending table.

type floorReq struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id,omitzero"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type floorReqIn struct {
	ID     int64          `json:"id"`
	Method string         `json:"method"`
	Params jsontext.Value `json:"params"`
}

type floorErr struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (e *floorErr) Error() string { return e.Message }

type floorResp struct {
	JSONRPC string    `json:"jsonrpc"`
	ID      int64     `json:"id"`
	Result  any       `json:"result,omitzero"`
	Error   *floorErr `json:"error,omitzero"`
}

type floorRespIn struct {
	ID     int64          `json:"id"`
	Result jsontext.Value `json:"result"`
	Error  *floorErr      `json:"error"`
}

// lineReader returns lines that stay valid until the next call.
type lineReader struct {
	r   *bufio.Reader
	acc []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
}

func (l *lineReader) next() ([]byte, error) {
	frag, err := l.r.ReadSlice('\n')
	if err == nil {
		return frag, nil
	}
	l.acc = l.acc[:0]
	for errors.Is(err, bufio.ErrBufferFull) {
		l.acc = append(l.acc, frag...)
		frag, err = l.r.ReadSlice('\n')
	}
	if err != nil {
		return nil, err
	}
	l.acc = append(l.acc, frag...)
	return l.acc, nil
}

type floorWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (fw *floorWriter) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	fw.mu.Lock()
	defer fw.mu.Unlock()
	fw.w.Write(b)
	fw.w.WriteByte('\n')
	return fw.w.Flush()
}

func floorServe(srv net.Conn, onNote func()) {
	lr := newLineReader(srv)
	fw := &floorWriter{w: bufio.NewWriterSize(srv, 64<<10)}
	for {
		line, err := lr.next()
		if err != nil {
			return
		}
		var req floorReqIn
		if err := json.Unmarshal(line, &req); err != nil {
			fw.send(&floorResp{JSONRPC: "2.0", ID: req.ID, Error: &floorErr{Code: -32700, Message: err.Error()}})
			continue
		}
		var result any
		var rerr *floorErr
		switch req.Method {
		case "echo":
			var p EchoParams
			if err := json.Unmarshal(req.Params, &p); err != nil {
				rerr = &floorErr{Code: -32602, Message: err.Error()}
			}
			result = &p
		case "note":
			var p EchoParams
			_ = json.Unmarshal(req.Params, &p)
			if onNote != nil {
				onNote()
			}
			continue
		case "hostile":
			var v any
			if err := json.Unmarshal(req.Params, &v); err != nil {
				rerr = &floorErr{Code: -32602, Message: err.Error()}
			}
			result = 1
		default:
			rerr = &floorErr{Code: -32601, Message: "method not found"}
		}
		if req.ID == 0 {
			continue
		}
		resp := floorResp{JSONRPC: "2.0", ID: req.ID, Result: result, Error: rerr}
		if rerr != nil {
			resp.Result = nil
		}
		if fw.send(&resp) != nil {
			return
		}
	}
}

type floorClient struct {
	fw      *floorWriter
	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan floorRespIn
	closed  bool
}

var floorChans = sync.Pool{New: func() any { return make(chan floorRespIn, 1) }}

var errFloorClosed = errors.New("floor: connection closed")

func (c *floorClient) read(r io.Reader) {
	lr := newLineReader(r)
	for {
		line, err := lr.next()
		if err != nil {
			break
		}
		var resp floorRespIn
		if json.Unmarshal(line, &resp) != nil {
			continue
		}
		c.mu.Lock()
		ch := c.pending[resp.ID]
		delete(c.pending, resp.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- resp
		}
	}
	c.mu.Lock()
	c.closed = true
	for id, ch := range c.pending {
		delete(c.pending, id)
		ch <- floorRespIn{Error: &floorErr{Message: errFloorClosed.Error()}}
	}
	c.mu.Unlock()
}

func (c *floorClient) Echo(ctx context.Context, p EchoParams) (EchoParams, error) {
	var r EchoParams
	ch := floorChans.Get().(chan floorRespIn)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return r, errFloorClosed
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.fw.send(&floorReq{JSONRPC: "2.0", ID: id, Method: "echo", Params: &p}); err != nil {
		return r, err
	}
	var resp floorRespIn
	select {
	case resp = <-ch:
	case <-ctx.Done():
		return r, ctx.Err() // the channel is abandoned, not reused
	}
	floorChans.Put(ch)
	if resp.Error != nil {
		return r, resp.Error
	}
	err := json.Unmarshal(resp.Result, &r)
	return r, err
}

func (c *floorClient) Notify(_ context.Context, p EchoParams) error {
	return c.fw.send(&floorReq{JSONRPC: "2.0", Method: "note", Params: &p})
}

// Floor is the hand-written go-json-experiment baseline.
func Floor() Impl {
	return Impl{
		Name: "floor (json v2)",
		Connect: func(cli, srv net.Conn, onNote func()) (Client, func(), error) {
			go floorServe(srv, onNote)
			c := &floorClient{fw: &floorWriter{w: bufio.NewWriterSize(cli, 64<<10)}, pending: map[int64]chan floorRespIn{}}
			go c.read(cli)
			return c, func() { cli.Close(); srv.Close() }, nil
		},
		Serve: func(srv net.Conn) (func(), error) {
			go floorServe(srv, nil)
			return func() { srv.Close() }, nil
		},
		HostileMessage: plainHostile("hostile"),
	}
}

func containsResult(line []byte) bool { return bytes.Contains(line, []byte(`"result"`)) }
