//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appserver"
	"github.com/codexd/codexd/jsonrpc"
	"github.com/codexd/codexd/rpcserve"
)

// serveAppServer is codexd's app-server over the instant scripted core,
// served by this binary, which links the app-server without the real core:
// what the app-server costs by itself, next to the codexd binary that
// also carries the core's dependencies.
func serveAppServer(listen string, deltas int) int {
	addr, err := jsonrpc.ParseListenURL(listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	core := agenttest.New(agenttest.Options{Instant: true, InstantDeltas: deltas})
	defer core.Close()
	srv, err := appserver.New(appserver.Config{Core: core})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer srv.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := rpcserve.Run(ctx, srv, addr, rpcserve.Options{}, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
