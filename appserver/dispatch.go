package appserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/jsonrpc"
)

// call is one inbound request being handled, whichever transport brought
// it: its session, and the id its answer goes to.
type call struct {
	sess *session
	id   jsonrpc.ID
}

// respond answers c now, from the handler (which then returns
// errDeferred) or later from a listener.
func (c *call) respond(result any, err error) {
	if rerr := c.sess.out.respond(c.id, result, err); rerr != nil {
		c.sess.srv.log.Debug("app-server: response not sent", "id", c.id.String(), "err", rerr)
	}
}

// errDeferred is returned by a handler whose answer is sent with
// call.respond, before or after it returns.
var errDeferred = jsonrpc.ErrAsyncResponse

// handler is one method: how its JSON params decode, and what runs.
type handler struct {
	decode func(raw jsontext.Value) (any, error)
	run    func(ctx context.Context, c *call, params any) (any, error)
	// threadOf names the thread a request is about, so that requests about
	// one thread run in arrival order; nil when the method has none.
	threadOf func(raw jsontext.Value) string
	// processOf names the command/exec process a request is about.
	processOf func(raw jsontext.Value) string
}

// register binds the typed definition m to fn.
func register[P, R any](s *Server, m jsonrpc.Method[P, R], fn func(ctx context.Context, c *call, p P) (R, error)) {
	s.handlers[m.Name()] = &handler{
		decode: func(raw jsontext.Value) (any, error) { return appproto.DecodeParams[P](m.Name(), raw) },
		run: func(ctx context.Context, c *call, params any) (any, error) {
			p, ok := params.(P)
			if !ok {
				return nil, internalError(fmt.Sprintf("params of %s have type %T", m.Name(), params))
			}
			r, err := fn(ctx, c, p)
			if err != nil {
				return nil, err
			}
			return r, nil
		},
	}
}

// threadScoped marks methods about one thread: they run in arrival order
// per thread and connection, as Codex's serialization scopes do.
func threadScoped(s *Server, methods ...string) {
	for _, m := range methods {
		s.handlers[m].threadOf = peekThreadID
	}
}

func peekThreadID(raw jsontext.Value) string {
	var p struct {
		ThreadID string `json:"threadId"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return ""
	}
	return p.ThreadID
}

// dispatch runs a decoded request through the rules every transport
// shares: initialize first, experimental gating, then the handler.
func (s *Server) dispatch(ctx context.Context, c *call, method string, params any) (any, error) {
	h := s.handlers[method]
	if method == appproto.MethodInitialize {
		return h.run(ctx, c, params)
	}
	if !c.sess.isInitialized() {
		return nil, invalidRequest("Not initialized")
	}
	if reason := appproto.ExperimentalReason(method, params); reason != "" && !c.sess.experimental() {
		return nil, invalidRequest(appproto.ExperimentalMessage(reason))
	}
	if h == nil && !appproto.IsClientMethod(method) {
		// (The JSON path refused it while decoding; this is the in-process
		// client's.)
		return nil, appproto.InvalidRequest(appproto.UnknownMethodMessage(method))
	}
	if h == nil {
		// A method of Codex's protocol that codexd does not implement.
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, fmt.Sprintf("`%s` is not supported by codexd", method))
	}
	return h.run(ctx, c, params)
}

// decode turns raw params into the typed params of method, or returns
// Codex's error for a method it does not know.
func (s *Server) decode(method string, raw jsontext.Value) (any, error) {
	h := s.handlers[method]
	if h == nil {
		if !appproto.IsClientMethod(method) {
			return nil, appproto.InvalidRequest(appproto.UnknownMethodMessage(method))
		}
		return nil, nil // known to Codex, not served: dispatch says so
	}
	return h.decode(raw)
}

func invalidRequest(msg string) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidRequest, msg)
}

func internalError(msg string) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInternalError, msg)
}

func invalidParams(msg string) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams, msg)
}

// threadIDError is Codex's answer to a thread id that is not a UUID.
func threadIDError(err error) *jsonrpc.Error {
	return invalidRequest("invalid thread id: " + err.Error())
}

// isJSONRPCError reports whether err already carries a wire error.
func isJSONRPCError(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we)
}

func newError(code int64, msg string) *jsonrpc.Error { return jsonrpc.NewError(code, msg) }

type jsontextValue = jsontext.Value

func mustJSON(v any) jsontext.Value {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// jsonUnmarshalLoose decodes what it can of raw into v.
func jsonUnmarshalLoose(raw jsontext.Value, v any) error { return json.Unmarshal(raw, v) }
