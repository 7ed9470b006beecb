package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/codexd/codexd/execserver"
	"github.com/codexd/codexd/execserver/httpreq"
	"github.com/codexd/codexd/jsonrpc"
	"github.com/codexd/codexd/rpcserve"
)

func runExecServer(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("exec-server", flag.ContinueOnError)
	listen := fs.String("listen", "ws://127.0.0.1:0", "where to listen: ws://IP:PORT, unix://PATH, stdio:// or off")
	var roots multiFlag
	fs.Var(&roots, "root", "confine fs paths and process cwd to `DIR` (repeatable)")
	tokenFile := fs.String("auth-token-file", "", "require this bearer token on WebSocket upgrades")
	insecureNoAuth := fs.Bool("insecure-no-auth", false, "allow a ws:// listener on an address other than loopback without --auth-token-file")
	cgroupRoot := fs.String("cgroup-root", "", "give each process a cgroup under this delegated cgroup v2 `DIR`, killed with cgroup.kill")
	ttl := fs.Duration("session-ttl", execserver.DefaultSessionTTL, "how long a detached session keeps its processes")
	maxMessage := fs.Int64("max-message", jsonrpc.DefaultMaxMessage, "largest inbound message, in bytes")
	httpTimeout := fs.Duration("http-timeout", execserver.DefaultHTTPTimeout, "timeout of an http/request that names none")
	httpMaxBody := fs.Int64("http-max-body", httpreq.DefaultMaxBodyBytes, "largest http/request response body, in bytes")
	fs.Usage = flagUsage(fs, "usage: codexd exec-server [flags]\n\nServes the exec-server (Codex 0.169's protocol): processes, files and HTTP requests\nfor an agent. ws://IP:PORT (the default, port 0 picks one; the URL is printed),\nunix://PATH (mode 0600) or stdio://.\n\nflags:")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "codexd exec-server: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	addr, err := jsonrpc.ParseListenURL(*listen)
	if err != nil {
		fmt.Fprintln(stderr, "codexd exec-server:", err)
		return 2
	}
	cfg := execserver.Config{Roots: roots, SessionTTL: *ttl, MaxMessage: *maxMessage, InsecureNoAuth: *insecureNoAuth,
		HTTP: httpreq.Config{DefaultTimeout: *httpTimeout, MaxBodyBytes: *httpMaxBody}}
	cfg.Procs.CgroupRoot = *cgroupRoot
	if *tokenFile != "" {
		if cfg.AuthToken, err = rpcserve.ReadAuthToken(*tokenFile); err != nil {
			fmt.Fprintln(stderr, "codexd exec-server:", err)
			return 2
		}
	}
	if os.Getenv("GOGC") == "" {
		// A server's live heap is small (rings, queues), while streamed
		// output makes garbage fast: collecting at half the live heap
		// instead of all of it keeps RSS near the live heap for little CPU.
		debug.SetGCPercent(50)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := execserver.Run(ctx, cfg, addr, stdin, stdout); err != nil {
		fmt.Fprintln(stderr, "codexd exec-server:", err)
		if errors.Is(err, rpcserve.ErrNoAuth) {
			return 2
		}
		return 1
	}
	return 0
}
