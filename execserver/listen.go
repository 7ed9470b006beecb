package execserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/codexd/codexd/jsonrpc"
)

// ServeHTTP serves the WebSocket endpoint and the health probes on one
// listener. Requests from browsers (any Origin header) are refused: a web
// page must never be able to drive a process runner on the user's machine.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Origin") != "" {
		http.Error(w, "cross-origin requests are refused", http.StatusForbidden)
		return
	}
	switch r.URL.Path {
	case "/readyz", "/healthz":
		// Codex answers 200 with an empty body (and has no /healthz).
		w.WriteHeader(http.StatusOK)
		return
	case "/":
	default:
		http.NotFound(w, r)
		return
	}
	if s.cfg.AuthToken != "" {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		switch {
		case !ok:
			http.Error(w, "missing websocket bearer token", http.StatusUnauthorized)
			return
		case subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(s.cfg.AuthToken)) != 1:
			http.Error(w, "invalid websocket bearer token", http.StatusUnauthorized)
			return
		}
	}
	// Accept answers 400 to anything that is not a WebSocket upgrade.
	stream, err := jsonrpc.AcceptWebSocket(w, r, s.cfg.MaxMessage)
	if err != nil {
		return // Accept has written the error response
	}
	_ = s.ServeStreamFrom(stream, "websocket", r.RemoteAddr)
}

// Listener serves the exec-server on one --listen address.
type Listener struct {
	srv  *Server
	addr jsonrpc.Listen
	// URL is the bound address as a --listen URL; with port 0 it names the
	// port that was picked.
	URL string

	ln      net.Listener
	httpSrv *http.Server
}

// Listen binds addr. Serve then accepts connections until Close.
func (s *Server) Listen(addr jsonrpc.Listen) (*Listener, error) {
	l := &Listener{srv: s, addr: addr}
	switch addr.Scheme {
	case "ws":
		ln, err := net.Listen("tcp", addr.Addr)
		if err != nil {
			return nil, err
		}
		l.ln = ln
		l.URL = "ws://" + ln.Addr().String()
		l.httpSrv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	case "unix":
		// A stale socket file from a dead server would make bind fail; only
		// remove it if it is a socket nobody answers on.
		if fi, err := os.Lstat(addr.Addr); err == nil && fi.Mode()&os.ModeSocket != 0 {
			if c, err := net.Dial("unix", addr.Addr); err == nil {
				c.Close()
				return nil, fmt.Errorf("listen %s: a server is already listening there", addr)
			}
			_ = os.Remove(addr.Addr)
		}
		ln, err := net.Listen("unix", addr.Addr)
		if err != nil {
			return nil, err
		}
		l.ln = ln
		l.URL = "unix://" + addr.Addr
	case "stdio":
		l.URL = "stdio://"
	case "off":
		l.URL = "off"
	default:
		return nil, fmt.Errorf("cannot listen on %s", addr)
	}
	return l, nil
}

// Serve accepts connections until Close, or, for stdio, serves the one
// connection on stdin and stdout until it ends.
func (l *Listener) Serve(stdin io.Reader, stdout io.Writer) error {
	switch l.addr.Scheme {
	case "ws":
		err := l.httpSrv.Serve(l.ln)
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case "unix":
		for {
			nc, err := l.ln.Accept()
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return nil
				}
				return err
			}
			// Server.Close ends and waits for this connection.
			go func() {
				_ = l.srv.ServeStreamFrom(jsonrpc.NewLineStream(nc, l.srv.cfg.MaxMessage), "unix", l.addr.Addr)
			}()
		}
	case "stdio":
		in, closer := closeableStdin(stdin)
		return l.srv.ServeStream(jsonrpc.NewLineStreamRW(in, stdout, closer, l.srv.cfg.MaxMessage))
	}
	return nil
}

// Close stops accepting. Live connections are ended by Server.Close.
func (l *Listener) Close() error {
	var err error
	if l.httpSrv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		// Shutdown does not wait for hijacked WebSocket connections; those
		// end with Server.Close.
		err = l.httpSrv.Shutdown(ctx)
	} else if l.ln != nil {
		err = l.ln.Close()
	}
	if l.addr.Scheme == "unix" {
		_ = os.Remove(l.addr.Addr)
	}
	return err
}

// closeableStdin makes a stdin pipe or socket closeable while a read is
// blocked on it, so that shutting the server down (SIGTERM) ends the stdio
// connection and its session's processes even when the client keeps its end
// open. A terminal is left alone: putting it in non-blocking mode would
// change it for the shell that shares it.
func closeableStdin(r io.Reader) (io.Reader, io.Closer) {
	f, ok := r.(*os.File)
	if !ok {
		return r, nil
	}
	fd := int(f.Fd())
	if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil {
		return r, nil
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		return r, nil
	}
	// A non-blocking descriptor is registered with the poller, whose Close
	// wakes a pending Read.
	nf := os.NewFile(uintptr(fd), f.Name())
	return nf, nf
}
