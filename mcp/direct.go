package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	sdkrpc "github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codexd/codexd/config"
)

// ErrNotObject is CallDirect's error for arguments that are not a JSON
// object.
var ErrNotObject = errors.New("MCP tool arguments must be a JSON object")

// CallDirect calls tool of server for a client (mcpServer/tool/call): the
// server's result as it came, and its JSON-RPC error unwrapped (a
// *jsonrpc.Error of the SDK), so that the app-server passes both on as
// Codex does. args is a JSON object, or empty; meta is the request's
// _meta, or empty. The call is bounded by the server's tool timeout.
func (m *Manager) CallDirect(ctx context.Context, server, tool string, args, meta json.RawMessage) (*sdk.CallToolResult, error) {
	params := &sdk.CallToolParams{Name: tool}
	if len(args) > 0 && string(args) != "null" {
		var a map[string]any
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, fmt.Errorf("%w, got %s", ErrNotObject, args)
		}
		params.Arguments = a
	}
	if len(meta) > 0 && string(meta) != "null" {
		var mm map[string]any
		if err := json.Unmarshal(meta, &mm); err == nil {
			params.Meta = mm
		}
	}
	s := m.server(server)
	timeout := DefaultToolTimeout
	if s != nil && s.cfg.ToolTimeout > 0 {
		timeout = s.cfg.ToolTimeout
	}
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("timed out after %s", timeout))
	defer cancel()
	srv, cs, err := m.session(ctx, server)
	if err != nil {
		return nil, err
	}
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		if c := context.Cause(ctx); c != nil && ctx.Err() != nil {
			return nil, c
		}
		return nil, closedAs(srv, cs, err)
	}
	return res, nil
}

// ErrTransportClosed is what a call or read whose server went away in
// the middle gets, in Codex 0.169's words.
var ErrTransportClosed = errors.New("Transport closed")

// closedAs is err, or ErrTransportClosed when the connection ended under
// the request (the server exited or closed its end).
func closedAs(s *server, cs *sdk.ClientSession, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, sdk.ErrConnectionClosed) || s.crashedSession(cs) {
		return ErrTransportClosed
	}
	return err
}

// ReadDirect reads uri from server for a client (mcpServer/resource/read),
// the server's JSON-RPC error unwrapped as CallDirect's.
func (m *Manager) ReadDirect(ctx context.Context, server, uri string) (*sdk.ReadResourceResult, error) {
	srv, cs, err := m.session(ctx, server)
	if err != nil {
		return nil, err
	}
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		var werr *jsonrpcError
		if errors.As(err, &werr) {
			return nil, err // the server's own answer
		}
		return nil, closedAs(srv, cs, err)
	}
	return res, nil
}

type jsonrpcError = sdkrpc.Error

// Known reports whether server is configured and enabled in m.
func (m *Manager) Known(server string) bool {
	s := m.server(server)
	return s != nil && s.cfg.Enabled
}

// reloadAnnounce reloads m as Reload does and then, as Codex's reload
// does, announces each unchanged ready server as ready again and starts
// again each unchanged one that failed.
func (m *Manager) reloadAnnounce(servers []config.MCPServer) {
	var same []string
	for _, c := range servers {
		if old, ok := m.Config(c.Name); ok && sameConfig(old, c) {
			same = append(same, c.Name)
		}
	}
	m.Reload(servers)
	for _, name := range same {
		s := m.server(name)
		if s == nil {
			continue
		}
		s.mu.Lock()
		switch {
		case s.stopped || !s.cfg.Enabled:
		case s.state == StateReady:
			s.setState(StateReady, "")
		case s.state == StateFailed && !s.running:
			s.mu.Unlock()
			s.launch()
			continue
		}
		s.mu.Unlock()
	}
}
