package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appserver"
	"github.com/codexd/codexd/execserver/fsops"
	"github.com/codexd/codexd/jsonrpc"
	"github.com/codexd/codexd/rpcserve"
)

// newAgentCore builds the agent core the app-server serves. It is nil until
// the real core is wired here; `codexd app-server` then refuses to start.
var newAgentCore func(ctx context.Context) (agent.Core, error)

const appServerUsage = `usage: codexd app-server [--listen URL] [--root DIR]... [--auth-token-file FILE] [--insecure-no-auth] [--max-message N]

Serves Codex's app-server protocol (v2): stdio:// by default (one client),
ws://IP:PORT or unix://PATH for many.
`

func runAppServer(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("app-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "stdio://", "where to listen: stdio://, ws://IP:PORT, unix://PATH or off")
	var roots multiFlag
	fs.Var(&roots, "root", "confine fs/* paths and command/exec cwd to `DIR` (repeatable)")
	tokenFile := fs.String("auth-token-file", "", "require this bearer token on WebSocket upgrades")
	insecureNoAuth := fs.Bool("insecure-no-auth", false, "allow a ws:// listener on an address other than loopback without --auth-token-file")
	maxMessage := fs.Int64("max-message", jsonrpc.DefaultMaxMessage, "largest inbound message, in bytes")
	// Hidden: serve a scripted core that completes every turn at once, its
	// answer in N deltas, so that benchmarks measure the app-server itself.
	// Never for real use.
	benchCore := fs.Int("bench-instant-core", 0, "")
	fs.Usage = func() {
		fmt.Fprint(stderr, appServerUsage)
		fs.VisitAll(func(f *flag.Flag) {
			if f.Usage != "" {
				fmt.Fprintf(stderr, "  --%s\n    \t%s\n", f.Name, f.Usage)
			}
		})
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "codexd app-server: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	addr, err := jsonrpc.ParseListenURL(*listen)
	if err != nil {
		fmt.Fprintln(stderr, "codexd app-server:", err)
		return 2
	}
	opts := rpcserve.Options{InsecureNoAuth: *insecureNoAuth, MaxMessage: *maxMessage}
	if *tokenFile != "" {
		if opts.AuthToken, err = rpcserve.ReadAuthToken(*tokenFile); err != nil {
			fmt.Fprintln(stderr, "codexd app-server:", err)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var core agent.Core
	switch {
	case *benchCore > 0:
		core = agenttest.New(agenttest.Options{Instant: true, InstantDeltas: *benchCore})
	case newAgentCore == nil:
		fmt.Fprintln(stderr, "codexd app-server: the agent core is not built yet; this codexd cannot serve turns")
		return 1
	default:
		if core, err = newAgentCore(ctx); err != nil {
			fmt.Fprintln(stderr, "codexd app-server:", err)
			return 1
		}
	}
	defer core.Close()
	srv, err := appserver.New(appserver.Config{Core: core, MaxMessage: *maxMessage, FS: fsops.Config{Roots: roots}})
	if err != nil {
		fmt.Fprintln(stderr, "codexd app-server:", err)
		return 2
	}
	defer srv.Close()
	if err := rpcserve.Run(ctx, srv, addr, opts, stdin, stdout); err != nil {
		fmt.Fprintln(stderr, "codexd app-server:", err)
		if errors.Is(err, rpcserve.ErrNoAuth) {
			return 2
		}
		return 1
	}
	return 0
}
