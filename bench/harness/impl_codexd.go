package harness

import (
	"context"
	"io"
	"log/slog"
	"net"

	"github.com/codexd/codexd/jsonrpc"
)

var (
	codexdEcho    = jsonrpc.Method[EchoParams, EchoParams]("echo")
	codexdNote    = jsonrpc.Notification[EchoParams]("note")
	codexdHostile = jsonrpc.Method[any, int]("hostile")
)

var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

type codexdClient struct{ c *jsonrpc.Conn }

func (c codexdClient) Echo(ctx context.Context, p EchoParams) (EchoParams, error) {
	return codexdEcho.Call(ctx, c.c, p)
}

func (c codexdClient) Notify(ctx context.Context, p EchoParams) error {
	return codexdNote.Notify(ctx, c.c, p)
}

func codexdServer(srv net.Conn, onNote func()) *jsonrpc.Conn {
	mux := jsonrpc.NewMux()
	codexdEcho.Register(mux, func(_ context.Context, p EchoParams) (EchoParams, error) { return p, nil })
	codexdNote.Register(mux, func(context.Context, EchoParams) error {
		if onNote != nil {
			onNote()
		}
		return nil
	})
	codexdHostile.Register(mux, func(context.Context, any) (int, error) { return 1, nil })
	// Options.Limits is the zero value: the bounded decoder with its
	// defaults (262,144 values, depth 128, duplicate names rejected).
	return jsonrpc.NewConn(jsonrpc.NewLineStream(srv, 0), jsonrpc.Options{Handler: mux, Logger: quietLogger})
}

// Codexd is github.com/codexd/codexd/jsonrpc with its default limits.
func Codexd() Impl {
	return Impl{
		Name: "codexd",
		Connect: func(cli, srv net.Conn, onNote func()) (Client, func(), error) {
			s := codexdServer(srv, onNote)
			c := jsonrpc.NewConn(jsonrpc.NewLineStream(cli, 0), jsonrpc.Options{Logger: quietLogger})
			return codexdClient{c}, func() {
				cli.Close()
				srv.Close()
				c.Close()
				s.Close()
			}, nil
		},
		Serve: func(srv net.Conn) (func(), error) {
			s := codexdServer(srv, nil)
			return func() { srv.Close(); s.Close() }, nil
		},
		HostileMessage: plainHostile("hostile"),
	}
}

// plainHostile frames payload as the params of method, with the id first so
// that a rejecting decoder can still answer.
func plainHostile(method string) func([]byte) []byte {
	return func(payload []byte) []byte {
		m := make([]byte, 0, len(payload)+64)
		m = append(m, `{"jsonrpc":"2.0","id":7,"method":"`...)
		m = append(m, method...)
		m = append(m, `","params":`...)
		m = append(m, payload...)
		return append(m, "}\n"...)
	}
}
