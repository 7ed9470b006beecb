package harness

import (
	"context"
	"net"

	"github.com/creachadair/jrpc2"
	"github.com/creachadair/jrpc2/channel"
	"github.com/creachadair/jrpc2/handler"
)

type jrpc2Client struct{ c *jrpc2.Client }

func (c jrpc2Client) Echo(ctx context.Context, p EchoParams) (EchoParams, error) {
	var r EchoParams
	err := c.c.CallResult(ctx, "echo", p, &r)
	return r, err
}

func (c jrpc2Client) Notify(ctx context.Context, p EchoParams) error {
	return c.c.Notify(ctx, "note", p)
}

func jrpc2Server(srv net.Conn, onNote func()) *jrpc2.Server {
	m := handler.Map{
		"echo": func(_ context.Context, req *jrpc2.Request) (any, error) {
			var p EchoParams
			if err := req.UnmarshalParams(&p); err != nil {
				return nil, err
			}
			return p, nil
		},
		"note": func(_ context.Context, req *jrpc2.Request) (any, error) {
			var p EchoParams
			_ = req.UnmarshalParams(&p)
			if onNote != nil {
				onNote()
			}
			return nil, nil
		},
		"hostile": func(_ context.Context, req *jrpc2.Request) (any, error) {
			var v any
			if err := req.UnmarshalParams(&v); err != nil {
				return nil, err
			}
			return 1, nil
		},
	}
	return jrpc2.NewServer(m, nil).Start(channel.Line(srv, srv))
}

// JRPC2 is github.com/creachadair/jrpc2 with line framing and default
// options (handler concurrency = NumCPU).
func JRPC2() Impl {
	return Impl{
		Name: "creachadair/jrpc2",
		Connect: func(cli, srv net.Conn, onNote func()) (Client, func(), error) {
			s := jrpc2Server(srv, onNote)
			c := jrpc2.NewClient(channel.Line(cli, cli), nil)
			return jrpc2Client{c}, func() { c.Close(); s.Stop() }, nil
		},
		Serve: func(srv net.Conn) (func(), error) {
			s := jrpc2Server(srv, nil)
			return func() { s.Stop() }, nil
		},
		HostileMessage: plainHostile("hostile"),
	}
}
