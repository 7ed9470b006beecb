package harness

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type mcpEchoParams struct {
	mcp.ParamsBase
	Text string `json:"text"`
	N    int    `json:"n"`
}

type mcpEchoResult struct {
	mcp.ResultBase
	Text string `json:"text"`
	N    int    `json:"n"`
}

type mcpHostileParams struct {
	mcp.ParamsBase
	V any `json:"v"`
}

type mcpHostileResult struct {
	mcp.ResultBase
	OK int `json:"ok"`
}

type mcpClient struct{ cs *mcp.ClientSession }

func (c mcpClient) Echo(ctx context.Context, p EchoParams) (EchoParams, error) {
	r, err := mcp.CallCustomMethod[*mcpEchoParams, *mcpEchoResult](ctx, c.cs, "bench/echo",
		&mcpEchoParams{Text: p.Text, N: p.N})
	if err != nil {
		return EchoParams{}, err
	}
	return EchoParams{Text: r.Text, N: r.N}, nil
}

// Notify sends notifications/progress, the one client-to-server
// notification with a payload that a server can receive (custom
// notifications are not part of the SDK's public API).
func (c mcpClient) Notify(ctx context.Context, p EchoParams) error {
	return c.cs.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
		ProgressToken: "t", Message: p.Text, Progress: float64(p.N)})
}

var mcpImpl = &mcp.Implementation{Name: "rpcbench", Version: "1.0.0"}

func mcpServer(srv net.Conn, onNote func()) (*mcp.ServerSession, error) {
	s := mcp.NewServer(mcpImpl, &mcp.ServerOptions{
		Logger: quietLogger,
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationServerRequest) {
			if onNote != nil {
				onNote()
			}
		},
	})
	if err := mcp.AddReceivingCustomMethod(s, "bench/echo",
		func(_ context.Context, _ *mcp.ServerSession, p *mcpEchoParams) (*mcpEchoResult, error) {
			return &mcpEchoResult{Text: p.Text, N: p.N}, nil
		}); err != nil {
		return nil, err
	}
	if err := mcp.AddReceivingCustomMethod(s, "bench/hostile",
		func(context.Context, *mcp.ServerSession, *mcpHostileParams) (*mcpHostileResult, error) {
			return &mcpHostileResult{OK: 1}, nil
		}); err != nil {
		return nil, err
	}
	return s.Connect(context.Background(), &mcp.IOTransport{Reader: srv, Writer: srv}, nil)
}

// MCP is github.com/modelcontextprotocol/go-sdk: an mcp client and server
// session over IOTransport (newline-delimited JSON), with a custom
// "bench/echo" method (no tool machinery or schema validation).
func MCP() Impl {
	return Impl{
		Name: "mcp go-sdk",
		Connect: func(cli, srv net.Conn, onNote func()) (Client, func(), error) {
			ss, err := mcpServer(srv, onNote)
			if err != nil {
				return nil, nil, err
			}
			c := mcp.NewClient(mcpImpl, &mcp.ClientOptions{Logger: quietLogger})
			if err := mcp.AddSendingCustomMethod[*mcpEchoParams, *mcpEchoResult](c, "bench/echo"); err != nil {
				ss.Close()
				return nil, nil, err
			}
			cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: cli, Writer: cli}, nil)
			if err != nil {
				ss.Close()
				return nil, nil, err
			}
			return mcpClient{cs}, func() { cli.Close(); srv.Close(); cs.Close(); ss.Close() }, nil
		},
		Serve: func(srv net.Conn) (func(), error) {
			ss, err := mcpServer(srv, nil)
			if err != nil {
				return nil, err
			}
			return func() { srv.Close(); ss.Close() }, nil
		},
		HostileMessage: func(payload []byte) []byte {
			m := make([]byte, 0, len(payload)+80)
			m = append(m, `{"jsonrpc":"2.0","id":7,"method":"bench/hostile","params":{"v":`...)
			m = append(m, payload...)
			return append(m, "}}\n"...)
		},
		Handshake: func(w io.Writer, r *bufio.Reader) error {
			if _, err := io.WriteString(w, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`+"\n"); err != nil {
				return err
			}
			line, err := r.ReadBytes('\n')
			if err != nil {
				return fmt.Errorf("initialize: %w", err)
			}
			if !containsResult(line) {
				return fmt.Errorf("initialize: %s", line)
			}
			_, err = io.WriteString(w, `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`+"\n")
			return err
		},
	}
}
