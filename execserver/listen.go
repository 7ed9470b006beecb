package execserver

import (
	"context"
	"io"
	"net/http"

	"github.com/codexd/codexd/jsonrpc"
	"github.com/codexd/codexd/rpcserve"
)

// listenOptions are the rpcserve options of the server's configuration.
func (s *Server) listenOptions() rpcserve.Options {
	return rpcserve.Options{
		AuthToken:      s.cfg.AuthToken,
		InsecureNoAuth: s.cfg.InsecureNoAuth,
		MaxMessage:     s.cfg.MaxMessage,
	}
}

// ServeHTTP serves the WebSocket endpoint and the health probes on one
// listener, as rpcserve.Handler does: any Origin header is refused, and the
// bearer token is checked when the server has one.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.httpHandler.ServeHTTP(w, r)
}

// Listen binds addr (see rpcserve.Listen); Serve on the result accepts
// connections until its Close. Live connections end with Server.Close.
func (s *Server) Listen(addr jsonrpc.Listen) (*rpcserve.Listener, error) {
	return rpcserve.Listen(s, addr, s.listenOptions())
}

// Run serves cfg on listen until ctx ends (or, for stdio, until the client
// hangs up), then closes the server, killing every process it started. The
// bound URL is printed on stdout as one line, for scripts; for stdio,
// nothing is printed there, as stdout carries the protocol.
func Run(ctx context.Context, cfg Config, listen jsonrpc.Listen, stdin io.Reader, stdout io.Writer) error {
	srv, err := New(cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	return rpcserve.Run(ctx, srv, listen, srv.listenOptions(), stdin, stdout)
}
