package rpcserve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/codexd/codexd/jsonrpc"
)

// ErrNoAuth is returned by Listen for a ws:// address other than loopback
// with neither an auth token nor Options.InsecureNoAuth.
var ErrNoAuth = errors.New("a WebSocket listener on an address other than loopback needs an auth token (--auth-token-file), or --insecure-no-auth")

// Listener serves an Endpoint on one --listen address.
type Listener struct {
	ep   Endpoint
	addr jsonrpc.Listen
	opts Options
	url  string

	ln      net.Listener // ws, unix
	httpSrv *http.Server // ws
	sock    os.FileInfo  // unix: the socket file we created

	mu         sync.Mutex
	closed     bool
	stdinClose io.Closer // stdio: closes stdin under a blocked read
}

// Listen binds addr for ep: a TCP port for "ws", a socket file for "unix";
// "stdio" and "off" bind nothing. Serve then accepts connections until
// Close.
func Listen(ep Endpoint, addr jsonrpc.Listen, opts Options) (*Listener, error) {
	l := &Listener{ep: ep, addr: addr, opts: opts}
	switch addr.Scheme {
	case "ws":
		if opts.AuthToken == "" && !opts.InsecureNoAuth && !isLoopback(addr.Addr) {
			return nil, fmt.Errorf("listen %s: %w", addr, ErrNoAuth)
		}
		ln, err := net.Listen("tcp", addr.Addr)
		if err != nil {
			return nil, err
		}
		l.ln = ln
		l.url = "ws://" + ln.Addr().String()
		l.httpSrv = &http.Server{Handler: Handler(ep, opts), ReadHeaderTimeout: 10 * time.Second,
			ConnContext: func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) }}
	case "unix":
		ln, fi, err := listenUnix(addr.Addr)
		if err != nil {
			return nil, fmt.Errorf("listen %s: %w", addr, err)
		}
		l.ln, l.sock = ln, fi
		l.url = "unix://" + addr.Addr
	case "stdio":
		l.url = "stdio://"
	case "off":
		l.url = "off"
	default:
		return nil, fmt.Errorf("cannot listen on %s", addr)
	}
	return l, nil
}

// isLoopback reports whether host:port names a loopback address. The
// unspecified addresses (0.0.0.0, ::) are not loopback: they listen on
// every interface.
func isLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// URL is the bound address as a --listen URL; with port 0 it names the port
// that was picked.
func (l *Listener) URL() string { return l.url }

// Serve accepts connections until Close, handing each to the Endpoint on
// its own goroutine; for stdio it serves the one connection on stdin and
// stdout until it ends; for "off" it returns at once.
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
			go func() {
				if refusePeer(nc) {
					_ = nc.Close()
					return
				}
				_ = l.ep.ServeStreamFrom(jsonrpc.NewLineStream(nc, l.opts.MaxMessage), "unix", l.addr.Addr)
			}()
		}
	case "stdio":
		in, closer := closeableStdin(stdin)
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			return nil
		}
		l.stdinClose = closer
		l.mu.Unlock()
		return l.ep.ServeStreamFrom(jsonrpc.NewLineStreamRW(in, stdout, closer, l.opts.MaxMessage), "stdio", "stdio")
	}
	return nil
}

// Close stops accepting connections and removes the socket file. Live
// WebSocket and Unix connections are the Endpoint's to end; the stdio
// connection's stdin is closed (when it can be), so that it ends even when
// the client keeps its end open.
func (l *Listener) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	stdin := l.stdinClose
	l.mu.Unlock()
	var err error
	switch {
	case l.httpSrv != nil:
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		// Shutdown does not wait for hijacked WebSocket connections.
		err = l.httpSrv.Shutdown(ctx)
	case l.ln != nil:
		err = l.ln.Close()
	case stdin != nil:
		err = stdin.Close()
	}
	if l.sock != nil {
		// Remove the socket only if it is still ours: someone may have
		// replaced it since.
		if fi, serr := os.Lstat(l.addr.Addr); serr == nil && os.SameFile(fi, l.sock) {
			_ = os.Remove(l.addr.Addr)
		}
	}
	return err
}

// ReadAuthToken reads a bearer token from a file, as --auth-token-file
// names it; surrounding whitespace is ignored and an empty token refused.
func ReadAuthToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("auth token file: %w", err)
	}
	tok := string(trimSpace(b))
	if tok == "" {
		return "", fmt.Errorf("auth token file %s is empty", path)
	}
	return tok, nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// Run serves ep on addr until ctx ends or, for stdio, until the client
// hangs up. The bound URL is printed on stdout as one line, for scripts,
// except for stdio, whose stdout carries the protocol. When ctx ends, Run
// stops accepting, closes ep if it is an io.Closer (ending its
// connections), and returns once Serve has.
func Run(ctx context.Context, ep Endpoint, addr jsonrpc.Listen, opts Options, stdin io.Reader, stdout io.Writer) error {
	closeEndpoint := func() {
		if c, ok := ep.(io.Closer); ok {
			_ = c.Close()
		}
	}
	if addr.Scheme == "off" {
		<-ctx.Done()
		closeEndpoint()
		return nil
	}
	l, err := Listen(ep, addr, opts)
	if err != nil {
		return err
	}
	if addr.Scheme != "stdio" {
		if _, err := fmt.Fprintln(stdout, l.URL()); err != nil {
			_ = l.Close()
			return err
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- l.Serve(stdin, stdout) }()
	select {
	case <-ctx.Done():
		_ = l.Close()
		closeEndpoint()
		<-errc
		return nil
	case err := <-errc:
		_ = l.Close()
		return err
	}
}
