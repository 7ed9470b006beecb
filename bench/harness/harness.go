// Package harness runs the same JSON-RPC workloads over several
// implementations, so that codexd's engine can be compared with its peers and
// with a hand-written floor.
package harness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// EchoParams are the params and result of the echo method, for every
// implementation.
type EchoParams struct {
	Text string `json:"text"`
	N    int    `json:"n"`
}

// Small is the params of the small echo workloads.
var Small = EchoParams{Text: "hello", N: 42}

// Client is the calling side of a connection to an echo server.
type Client interface {
	Echo(ctx context.Context, p EchoParams) (EchoParams, error)
	Notify(ctx context.Context, p EchoParams) error
}

// Impl is one JSON-RPC implementation under test.
type Impl struct {
	Name string
	// Connect starts a server on srv and a client on cli. The server calls
	// onNote for each notification it handles. stop ends both sides.
	Connect func(cli, srv net.Conn, onNote func()) (c Client, stop func(), err error)
	// Serve starts the server alone on srv, for hostile input.
	Serve func(srv net.Conn) (stop func(), err error)
	// HostileMessage wraps a hostile payload as the params of the server's
	// "decode anything" method, in the implementation's dialect, with a
	// trailing newline.
	HostileMessage func(payload []byte) []byte
	// Handshake, when set, runs on the raw client connection before the
	// hostile message (MCP needs an initialize exchange).
	Handshake func(w io.Writer, r *bufio.Reader) error
}

// All lists the implementations, ours first and the floor last.
func All() []Impl {
	return []Impl{Codexd(), SourcegraphJSONRPC2(), JRPC2(), Geth(), MCP(), Floor()}
}

// Transport makes a connected pair of net.Conns.
type Transport struct {
	Name string
	Pair func() (cli, srv net.Conn, cleanup func(), err error)
}

// Transports are net.Pipe and loopback TCP.
func Transports() []Transport {
	return []Transport{
		{Name: "pipe", Pair: func() (net.Conn, net.Conn, func(), error) {
			a, b := net.Pipe()
			return a, b, func() {}, nil
		}},
		{Name: "tcp", Pair: tcpPair},
	}
}

func tcpPair() (net.Conn, net.Conn, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, nil, err
	}
	defer ln.Close()
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := ln.Accept()
		ch <- res{c, err}
	}()
	cli, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return nil, nil, nil, err
	}
	r := <-ch
	if r.err != nil {
		cli.Close()
		return nil, nil, nil, r.err
	}
	return cli, r.c, func() {}, nil
}

// Session is a running client and server over one transport.
type Session struct {
	Client Client
	notes  noteCounter
	stop   func()
	clean  func()
	cli    net.Conn
	srv    net.Conn
}

type noteCounter struct {
	mu   sync.Mutex
	n    int64
	want int64
	done chan struct{}
}

func (n *noteCounter) inc() {
	n.mu.Lock()
	n.n++
	if n.done != nil && n.n >= n.want {
		close(n.done)
		n.done = nil
	}
	n.mu.Unlock()
}

// Notes returns the number of notifications the server has handled.
func (s *Session) Notes() int64 {
	s.notes.mu.Lock()
	defer s.notes.mu.Unlock()
	return s.notes.n
}

// WaitNotes waits until the server has handled n notifications in all.
func (s *Session) WaitNotes(n int64, timeout time.Duration) error {
	s.notes.mu.Lock()
	if s.notes.n >= n {
		s.notes.mu.Unlock()
		return nil
	}
	done := make(chan struct{})
	s.notes.want, s.notes.done = n, done
	s.notes.mu.Unlock()
	select {
	case <-done:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("only %d of %d notifications delivered after %v", s.Notes(), n, timeout)
	}
}

// Close stops both sides and closes the transport.
func (s *Session) Close() {
	s.stop()
	s.cli.Close()
	s.srv.Close()
	s.clean()
}

// Start connects impl over t and checks one echo round trip.
func Start(impl Impl, t Transport) (*Session, error) {
	cli, srv, clean, err := t.Pair()
	if err != nil {
		return nil, err
	}
	s := &Session{cli: cli, srv: srv, clean: clean}
	c, stop, err := impl.Connect(cli, srv, s.notes.inc)
	if err != nil {
		cli.Close()
		srv.Close()
		clean()
		return nil, fmt.Errorf("%s over %s: %w", impl.Name, t.Name, err)
	}
	s.Client, s.stop = c, stop
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := c.Echo(ctx, Small)
	if err == nil && got != Small {
		err = fmt.Errorf("echo returned %+v, want %+v", got, Small)
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("%s over %s: first echo: %w", impl.Name, t.Name, err)
	}
	return s, nil
}

// BigParams returns echo params whose text is n bytes long.
func BigParams(n int) EchoParams {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return EchoParams{Text: string(b), N: n}
}

var errMismatch = errors.New("echo result differs from params")

// EchoCheck calls echo and checks the result.
func EchoCheck(ctx context.Context, c Client, p EchoParams) error {
	got, err := c.Echo(ctx, p)
	if err != nil {
		return err
	}
	if got.N != p.N || len(got.Text) != len(p.Text) {
		return errMismatch
	}
	return nil
}
