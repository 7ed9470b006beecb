package harness

import (
	"context"
	"encoding/json"
	"net"

	"github.com/sourcegraph/jsonrpc2"
)

type sgClient struct{ c *jsonrpc2.Conn }

func (c sgClient) Echo(ctx context.Context, p EchoParams) (EchoParams, error) {
	var r EchoParams
	err := c.c.Call(ctx, "echo", p, &r)
	return r, err
}

func (c sgClient) Notify(ctx context.Context, p EchoParams) error {
	return c.c.Notify(ctx, "note", p)
}

type sgNoop struct{}

func (sgNoop) Handle(context.Context, *jsonrpc2.Conn, *jsonrpc2.Request) {}

func sgServer(srv net.Conn, onNote func()) *jsonrpc2.Conn {
	h := jsonrpc2.HandlerWithError(func(ctx context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
		var raw []byte
		if req.Params != nil {
			raw = *req.Params
		}
		switch req.Method {
		case "echo":
			var p EchoParams
			if err := json.Unmarshal(raw, &p); err != nil {
				return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: err.Error()}
			}
			return p, nil
		case "note":
			var p EchoParams
			_ = json.Unmarshal(raw, &p)
			if onNote != nil {
				onNote()
			}
			return nil, nil
		case "hostile":
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: err.Error()}
			}
			return 1, nil
		}
		return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: req.Method}
	})
	// The default (synchronous) handler: requests are handled on the
	// reader, one at a time, which is the library's fastest mode for a
	// trivial handler.
	return jsonrpc2.NewConn(context.Background(), jsonrpc2.NewPlainObjectStream(srv), h)
}

// SourcegraphJSONRPC2 is github.com/sourcegraph/jsonrpc2 with plain
// (newline-delimited) object streams.
func SourcegraphJSONRPC2() Impl {
	return Impl{
		Name: "sourcegraph/jsonrpc2",
		Connect: func(cli, srv net.Conn, onNote func()) (Client, func(), error) {
			s := sgServer(srv, onNote)
			c := jsonrpc2.NewConn(context.Background(), jsonrpc2.NewPlainObjectStream(cli), sgNoop{})
			return sgClient{c}, func() { c.Close(); s.Close() }, nil
		},
		Serve: func(srv net.Conn) (func(), error) {
			s := sgServer(srv, nil)
			return func() { s.Close() }, nil
		},
		HostileMessage: plainHostile("hostile"),
	}
}
