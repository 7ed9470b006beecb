package harness

import (
	"context"
	"net"

	"github.com/ethereum/go-ethereum/rpc"
)

// gethService is registered under "bench": bench_echo, bench_note and
// bench_hostile.
type gethService struct{ onNote func() }

func (gethService) Echo(p EchoParams) EchoParams { return p }

func (s gethService) Note(EchoParams) error {
	if s.onNote != nil {
		s.onNote()
	}
	return nil
}

func (gethService) Hostile(any) int { return 1 }

type gethClient struct{ c *rpc.Client }

func (c gethClient) Echo(ctx context.Context, p EchoParams) (EchoParams, error) {
	var r EchoParams
	err := c.c.CallContext(ctx, &r, "bench_echo", p)
	return r, err
}

func (c gethClient) Notify(ctx context.Context, p EchoParams) error {
	return c.c.Notify(ctx, "bench_note", p)
}

func gethServer(srv net.Conn, onNote func()) (*rpc.Server, error) {
	s := rpc.NewServer()
	if err := s.RegisterName("bench", gethService{onNote: onNote}); err != nil {
		return nil, err
	}
	go s.ServeCodec(rpc.NewCodec(srv), 0)
	return s, nil
}

// Geth is the rpc package of github.com/ethereum/go-ethereum, with its
// newline-delimited stream codec (as for IPC) on both sides.
func Geth() Impl {
	return Impl{
		Name: "go-ethereum/rpc",
		Connect: func(cli, srv net.Conn, onNote func()) (Client, func(), error) {
			s, err := gethServer(srv, onNote)
			if err != nil {
				return nil, nil, err
			}
			c, err := rpc.DialIO(context.Background(), cli, cli)
			if err != nil {
				s.Stop()
				return nil, nil, err
			}
			return gethClient{c}, func() { cli.Close(); c.Close(); s.Stop() }, nil
		},
		Serve: func(srv net.Conn) (func(), error) {
			s, err := gethServer(srv, nil)
			if err != nil {
				return nil, err
			}
			return func() { srv.Close(); s.Stop() }, nil
		},
		// Geth takes positional params: the payload is the one argument.
		HostileMessage: func(payload []byte) []byte {
			m := make([]byte, 0, len(payload)+64)
			m = append(m, `{"jsonrpc":"2.0","id":7,"method":"bench_hostile","params":[`...)
			m = append(m, payload...)
			return append(m, "]}\n"...)
		},
	}
}
