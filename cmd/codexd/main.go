// Command codexd is one binary for codexd's servers and clients:
//
//	codexd exec-server --listen ws://127.0.0.1:0   serve the exec-server
//	codexd exec [--server URL] -- CMD ARGS...      run a command remotely
//
// It only parses flags and hands over to the packages that do the work; it
// must never hold protocol or server logic of its own.
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

	"github.com/codexd/codexd/execcli"
	"github.com/codexd/codexd/execserver"
	"github.com/codexd/codexd/execserver/httpreq"
	"github.com/codexd/codexd/execserver/procs"
	"github.com/codexd/codexd/jsonrpc"
	"github.com/codexd/codexd/mockmodel"
	"github.com/codexd/codexd/rpcserve"
	"github.com/codexd/codexd/sandbox"
)

const usage = `usage:
  codexd exec-server [--listen URL] [--root DIR]... [--auth-token-file FILE] [--insecure-no-auth] [--cgroup-root DIR] [--session-ttl D]
  codexd exec [--server ws://HOST:PORT] [--tty] [--cwd DIR] [--env K=V]... -- CMD [ARGS...]
  codexd mock-model [--listen 127.0.0.1:PORT] [--script FILE]
`

func main() {
	// A command wrapped by sandbox.Wrap re-executes codexd as its helper:
	// confine and exec it before anything else runs.
	sandbox.RunHelperIfRequested()
	if len(os.Args) > 1 && os.Args[1] == "exec-server" {
		// Every child of this process is started by the exec-server:
		// orphans of their descendants come back to it, to be reaped and
		// killed with their session (or the server). (Here rather than in
		// run, which tests call in their own process.)
		if err := procs.EnableSubreaper(); err != nil {
			fmt.Fprintln(os.Stderr, "codexd exec-server: cannot become a child subreaper:", err)
		}
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "exec-server":
		return runExecServer(args[1:], stdin, stdout, stderr)
	case "exec":
		return runExec(args[1:], stdin, stdout, stderr)
	case "mock-model":
		return mockmodel.Main(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "codexd: unknown command %q\n%s", args[0], usage)
	return 2
}

type multiFlag []string

func (m *multiFlag) String() string     { return fmt.Sprint(*m) }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func runExecServer(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("exec-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "ws://127.0.0.1:0", "where to listen: ws://IP:PORT, unix://PATH, stdio:// or off")
	var roots multiFlag
	fs.Var(&roots, "root", "confine fs paths and process cwd to `DIR` (repeatable)")
	tokenFile := fs.String("auth-token-file", "", "require this bearer token on WebSocket upgrades")
	cgroupRoot := fs.String("cgroup-root", "", "give each process a cgroup under this delegated cgroup v2 `DIR`, killed with cgroup.kill")
	insecureNoAuth := fs.Bool("insecure-no-auth", false, "allow a ws:// listener on an address other than loopback without --auth-token-file")
	ttl := fs.Duration("session-ttl", execserver.DefaultSessionTTL, "how long a detached session keeps its processes")
	maxMessage := fs.Int64("max-message", jsonrpc.DefaultMaxMessage, "largest inbound message, in bytes")
	httpTimeout := fs.Duration("http-timeout", execserver.DefaultHTTPTimeout, "timeout of an http/request that names none")
	httpMaxBody := fs.Int64("http-max-body", httpreq.DefaultMaxBodyBytes, "largest http/request response body, in bytes")
	if err := fs.Parse(args); err != nil {
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

func runExec(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return execcli.Main(args, stdin, stdout, stderr)
}
