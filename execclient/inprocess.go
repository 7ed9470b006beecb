package execclient

import (
	"context"
	"sync"

	"github.com/codexd/codexd/jsonrpc"
)

// StreamServer is what NewInProcess needs of an in-process exec-server:
// *execserver.Server is one. The client knows its server only through this
// interface, so that it builds wherever a client runs (macOS, Windows),
// not only where the server does.
type StreamServer interface {
	// ServeStreamFrom serves one connection on stream until it ends.
	ServeStreamFrom(stream jsonrpc.Stream, transport, peer string) error
}

// NewInProcess connects to srv over a socket pair (a pipe where there are
// no Unix sockets), serving the other end with srv.ServeStreamFrom: the
// embedded default of `codexd exec`. Resuming works as for a dialled
// server (each attempt makes a new pair). Close waits for the serving
// goroutines; it does not close srv.
func NewInProcess(ctx context.Context, srv StreamServer, opts Options) (*Client, error) {
	var serving sync.WaitGroup
	dial := func(ctx context.Context) (jsonrpc.Stream, error) {
		ours, theirs, err := connPair()
		if err != nil {
			return nil, err
		}
		serving.Add(1)
		go func() {
			defer serving.Done()
			_ = srv.ServeStreamFrom(jsonrpc.NewLineStream(theirs, opts.MaxMessage), "unix", "in-process")
		}()
		return jsonrpc.NewLineStream(ours, opts.MaxMessage), nil
	}
	c, err := connect(ctx, dial, opts, serving.Wait)
	if err != nil {
		serving.Wait()
		return nil, err
	}
	c.inProcess = true
	return c, nil
}

// InProcess reports whether the server runs in this process (NewInProcess),
// as opposed to one dialled, which may be on another machine.
func (c *Client) InProcess() bool { return c.inProcess }
