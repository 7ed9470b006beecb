package appserver

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/jsonrpc"
)

// ServeStream serves one JSON connection (stdio) until it ends.
func (s *Server) ServeStream(stream jsonrpc.Stream) error {
	return s.ServeStreamFrom(stream, "stdio", "stdio")
}

// ServeStreamFrom serves one JSON connection whose transport and peer are
// known, until it ends. On return the connection's subscriptions are gone
// and its processes killed.
func (s *Server) ServeStreamFrom(stream jsonrpc.Stream, transport, peerName string) error {
	jp := &jsonPeer{srv: s}
	sess, err := s.addSession(jp)
	if err != nil {
		_ = stream.Close()
		return err
	}
	jp.sess = sess
	s.conns.Add(1)
	defer s.conns.Done()
	// A network client (WebSocket, Unix socket) too slow to read what it
	// subscribed to is disconnected, with a reason (a WebSocket close
	// frame), rather than hold back the thread listeners every other client
	// depends on (Codex drops it silently). Stdio, the one client of its
	// server, gets backpressure instead.
	full := jsonrpc.FullQueueClose
	if transport == "stdio" {
		full = jsonrpc.FullQueueWait
	}
	conn := jsonrpc.NewConn(stream, jsonrpc.Options{
		Handler:           jsonrpc.HandlerFunc(jp.handle),
		OnFullQueue:       full,
		MaxQueuedBytes:    s.cfg.MaxQueuedBytes,
		Limits:            s.cfg.Limits,
		MaxInbound:        s.cfg.MaxInbound,
		MaxConcurrency:    s.cfg.MaxConcurrency,
		Admit:             jp.admit,
		OrderKey:          jp.orderKey,
		OnUnknownResponse: jp.onResponse,
		OnInvalid:         jp.onInvalid,
		Logger:            s.log,
	})
	jp.conn.CompareAndSwap(nil, conn)
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		conn.Shutdown()
	}
	<-conn.Done()
	sess.close()
	if err := conn.Err(); err != nil && !errors.Is(err, jsonrpc.ErrClosed) {
		s.log.Debug("app-server: connection ended", "transport", transport, "peer", peerName, "err", err)
	}
	return nil
}

// jsonPeer is a session's JSON connection.
type jsonPeer struct {
	srv  *Server
	sess *session
	conn atomic.Pointer[jsonrpc.Conn]
}

// admit runs on the reader, in arrival order. initialize completes here,
// before the next message is read, so that a client may pipeline its
// first requests behind it (the TUI does).
func (p *jsonPeer) admit(ctx context.Context, req *jsonrpc.Request) error {
	p.conn.CompareAndSwap(nil, jsonrpc.ConnFrom(ctx))
	if !req.IsCall() {
		return nil
	}
	if req.Method != appproto.MethodInitialize {
		// Whether the connection was initialized is decided in arrival
		// order, here, not when a handler gets to run: a request sent
		// before initialize is refused even if initialize completes before
		// its handler starts. Params are checked first, as Codex does.
		if p.sess.isInitialized() {
			return nil
		}
		if _, err := p.srv.decode(req.Method, req.Params); err != nil {
			return err
		}
		return invalidRequest("Not initialized")
	}
	params, err := p.srv.decode(req.Method, req.Params)
	if err != nil {
		return err
	}
	c := &call{sess: p.sess, id: req.ID}
	res, err := p.srv.dispatch(ctx, c, req.Method, params)
	if errors.Is(err, errDeferred) {
		return err
	}
	c.respond(res, err)
	return jsonrpc.ErrAsyncResponse
}

// handle serves every request but initialize. Notifications from the
// client (initialized, or any other) are ignored, as Codex does.
func (p *jsonPeer) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	if !req.IsCall() {
		return nil, nil
	}
	params, err := p.srv.decode(req.Method, req.Params)
	if err != nil {
		return nil, err
	}
	return p.srv.dispatch(ctx, &call{sess: p.sess, id: req.ID}, req.Method, params)
}

// orderKey keeps the requests about one thread (or one command/exec
// process) in arrival order.
func (p *jsonPeer) orderKey(req *jsonrpc.Request) string {
	h := p.srv.handlers[req.Method]
	if h == nil {
		return ""
	}
	if h.threadOf != nil {
		if id := h.threadOf(req.Params); id != "" {
			return "thread\x00" + id
		}
	}
	if h.processOf != nil {
		if id := h.processOf(req.Params); id != "" {
			return "exec\x00" + id
		}
	}
	return ""
}

// onResponse takes the client's answers to server requests.
func (p *jsonPeer) onResponse(ctx context.Context, resp *jsonrpc.Response) error {
	if !resp.ID.IsInt() {
		p.srv.log.Warn("app-server: response to no server request", "id", resp.ID.String())
		return nil
	}
	p.srv.answer(p.sess, resp.ID.Int(), resp.Result, resp.Error)
	return nil
}

// onInvalid logs a message that cannot be parsed and skips it: Codex
// answers nothing and the connection goes on.
func (p *jsonPeer) onInvalid(ctx context.Context, de *jsonrpc.DecodeError) (*jsonrpc.Response, error) {
	p.srv.log.Warn("app-server: failed to deserialize JSONRPCMessage", "err", de.Error())
	return nil, nil
}

func (p *jsonPeer) notify(n *note) error {
	conn := p.conn.Load()
	if conn == nil {
		return jsonrpc.ErrClosed
	}
	enc, err := n.encoded()
	if err != nil {
		return err
	}
	return conn.SendEncoded(background, enc)
}

func (p *jsonPeer) request(id int64, r *outRequest) error {
	conn := p.conn.Load()
	if conn == nil {
		return jsonrpc.ErrClosed
	}
	params, err := r.encoded()
	if err != nil {
		return err
	}
	// {"method":M,"id":N,"params":P}, in Codex's order; the params are
	// encoded once for every recipient.
	msg := make([]byte, 0, len(params)+len(r.method)+48)
	msg = append(msg, `{"method":`...)
	msg, _ = jsontext.AppendQuote(msg, r.method)
	msg = append(msg, `,"id":`...)
	msg = strconv.AppendInt(msg, id, 10)
	msg = append(msg, `,"params":`...)
	msg = append(msg, params...)
	return conn.SendEncoded(background, append(msg, '}'))
}

// respond queues a deferred answer without writing it itself: it is often
// called under a thread's lock (so that the answer precedes the thread's
// next notifications), and a client that does not read must not hold that
// lock, and every other subscriber of the thread with it, through a write
// that cannot complete.
func (p *jsonPeer) respond(id jsonrpc.ID, result any, err error) error {
	conn := p.conn.Load()
	if conn == nil {
		return jsonrpc.ErrClosed
	}
	return conn.RespondAsync(id, result, err)
}

func (p *jsonPeer) shutdown() {
	if conn := p.conn.Load(); conn != nil {
		conn.Shutdown()
	}
}
