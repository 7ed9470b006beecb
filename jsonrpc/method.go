package jsonrpc

import (
	"bytes"
	"context"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Handler answers inbound requests and notifications.
//
// For a request, the result is sent as the response: a jsontext.Value is
// sent as is, anything else is marshalled. Returning an *Error chooses the
// error's code; any other error is sent as an internal error. Returning
// ErrAsyncResponse defers the answer to [Conn.Respond].
//
// For a notification the result is ignored, and a non-nil error closes the
// connection: there is no one to answer, and Codex treats an unexpected
// notification as a protocol violation.
type Handler interface {
	Handle(ctx context.Context, req *Request) (result any, err error)
}

// HandlerFunc adapts a function to a Handler.
type HandlerFunc func(ctx context.Context, req *Request) (any, error)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, req *Request) (any, error) { return f(ctx, req) }

// Mux routes requests to the handlers registered for their method. It is not
// safe to register while the mux is serving.
type Mux struct {
	routes map[string]Handler
	// NotFound answers methods with no handler. When nil, requests get
	// -32601 and notifications are ignored.
	NotFound Handler
}

// NewMux returns an empty mux.
func NewMux() *Mux { return &Mux{routes: make(map[string]Handler)} }

// HandleFunc registers h for method, replacing any earlier handler.
func (m *Mux) HandleFunc(method string, h HandlerFunc) { m.routes[method] = h }

// Has reports whether method has a handler.
func (m *Mux) Has(method string) bool { _, ok := m.routes[method]; return ok }

// Handle implements Handler.
func (m *Mux) Handle(ctx context.Context, req *Request) (any, error) {
	if h, ok := m.routes[req.Method]; ok {
		return h.Handle(ctx, req)
	}
	if m.NotFound != nil {
		return m.NotFound.Handle(ctx, req)
	}
	if !req.IsCall() {
		return nil, nil
	}
	return nil, MethodNotFound(req.Method)
}

// MethodNotFound is the -32601 error for method.
func MethodNotFound(method string) *Error {
	return &Error{Code: CodeMethodNotFound, Message: "Method not found: " + method}
}

// Method binds a method name to its params type P and result type R. The
// same value registers the handler on the serving side and makes the call on
// the calling side, so the name and types cannot drift apart:
//
//	var Start = jsonrpc.Method[StartParams, StartResult]("process/start")
//	Start.Register(mux, func(ctx context.Context, p StartParams) (StartResult, error) { ... })
//	res, err := Start.Call(ctx, conn, StartParams{...})
type Method[P, R any] string

// Name returns the method name.
func (m Method[P, R]) Name() string { return string(m) }

// Register installs h as the handler of m on mux. Params are decoded once,
// into P, by [DecodeParams]; the result is marshalled from R.
func (m Method[P, R]) Register(mux *Mux, h func(ctx context.Context, params P) (R, error)) {
	mux.routes[string(m)] = HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		p, err := DecodeParams[P](req.Params)
		if err != nil {
			return nil, err
		}
		r, err := h(ctx, p)
		if err != nil {
			return nil, err
		}
		return r, nil
	})
}

// Call calls m on c and decodes the result into R.
func (m Method[P, R]) Call(ctx context.Context, c *Conn, params P) (R, error) {
	return m.CallWith(ctx, c, params, CallOptions{})
}

// CallWith is Call with options: the cleanup slot, a scope or a timeout.
func (m Method[P, R]) CallWith(ctx context.Context, c *Conn, params P, opts CallOptions) (R, error) {
	var r R
	err := c.CallWith(ctx, string(m), params, &r, opts)
	return r, err
}

// Notification binds a notification method name to its params type P.
type Notification[P any] string

// Name returns the method name.
func (n Notification[P]) Name() string { return string(n) }

// Register installs h as the handler of n on mux. Notification handlers run
// on the connection's reader, in arrival order, so they must not block.
func (n Notification[P]) Register(mux *Mux, h func(ctx context.Context, params P) error) {
	mux.routes[string(n)] = HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		p, err := DecodeParams[P](req.Params)
		if err != nil {
			return nil, err
		}
		return nil, h(ctx, p)
	})
}

// Notify sends n with params on c.
func (n Notification[P]) Notify(ctx context.Context, c *Conn, params P) error {
	return c.Notify(ctx, string(n), params)
}

var nullValue = jsontext.Value("null")

// DecodeParams decodes raw params into P the way Codex does: missing params
// decode as null; `{}` that does not fit P is retried as null; any other
// failure is an invalid-params error (-32602) with the decoder's message.
func DecodeParams[P any](raw jsontext.Value) (P, error) {
	var p P
	if raw == nil {
		raw = nullValue
	}
	err := unmarshal(raw, &p)
	if err == nil {
		return p, nil
	}
	if string(bytes.TrimSpace(raw[1:max(len(raw)-1, 1)])) == "" && raw[0] == '{' {
		var q P
		if json.Unmarshal(nullValue, &q) == nil {
			return q, nil
		}
	}
	return p, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("Invalid params: %v", err)}
}

// marshalValue encodes a params or result value into a scratch buffer
// from a free list, and returns the bytes with that buffer (nil when the value
// was already encoded: a jsontext.Value is taken as is). The caller copies
// the bytes into the message it builds and then gives the buffer back with
// putScratch: encoding straight into a reused buffer saves the copy and the
// allocation that json.Marshal makes for its result, which is what a large
// message (a 1 MiB echo) costs most.
func marshalValue(v any) (jsontext.Value, *bytes.Buffer, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil, nil
	case jsontext.Value:
		return v, nil, nil
	}
	b := scratchFree.get()
	if err := json.MarshalWrite(b, v); err != nil {
		putScratch(b)
		return nil, nil, err
	}
	return b.Bytes(), b, nil
}

// scratchFree holds the scratch buffers kept for reuse: at most 2 ×
// maxScratch bytes.
var scratchFree = freeList[bytes.Buffer]{max: 2}

// maxScratch is the largest scratch buffer kept for reuse: a burst of huge
// messages must not pin their buffers.
const maxScratch = 4 << 20

func putScratch(b *bytes.Buffer) {
	if b == nil || b.Cap() > maxScratch {
		return
	}
	b.Reset()
	scratchFree.put(b)
}
