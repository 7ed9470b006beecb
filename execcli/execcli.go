// Package execcli is the `codexd run` command: it runs one command through
// an exec-server and mirrors its output, input, signals and exit code.
//
//	codexd run [--server ws://HOST:PORT|unix://PATH] [--auth-token-file F]
//	            [--tty] [--cwd DIR] [--env K=V]... [--no-stdin] -- CMD [ARGS...]
//
// Without --server it serves an in-process exec-server (the embedded
// default) and talks to it over a socket pair, so the command runs through
// the same protocol path as a remote one.
//
// A remote server (--server) gets only PATH, TERM, LANG and LC_* of the
// local environment, with the --env pairs on top: the rest (tokens, keys)
// stays here unless --inherit-env says otherwise. Without --cwd the command
// runs in the server's default directory (what it reported in initialize),
// since a local path means nothing there. The embedded server is local:
// its command gets the whole environment and the current directory. Remote stdout and stderr go to local stdout and stderr. Local stdin
// is forwarded with process/write. The protocol has no way to close a remote
// stdin: after local EOF a pipe command that reads stdin to its end (cat,
// wc) never sees EOF; use --no-stdin to give it /dev/null instead. With
// --tty, local EOF is sent as ^D (VEOF), which ends a read on the terminal.
// The local terminal is not put in raw mode.
//
// The first SIGINT (Ctrl-C) is forwarded as process/signal interrupt; a
// second one, or SIGTERM or SIGHUP, terminates the process (SIGKILL to its
// group).
//
// Exit codes:
//
//	0-255  the remote command's exit code; 128+N when signal N killed it
//	2      bad usage (nothing was run)
//	125    codexd run itself failed: cannot connect, handshake refused, the
//	       connection was lost and the session could not be resumed
//	126    the command could not be started (for example, permission denied)
//	127    the command (or its cwd) was not found
//
// 125-127 follow env(1), chroot(1) and docker run. A command may exit with
// these codes itself; the message on stderr, prefixed "codexd run:", tells
// the cases apart.
//
// The package must stay thin: flag parsing, wiring local I/O and signals to
// an execclient.Process, and exit-code policy. Protocol, resume and
// buffering belong to execclient; it must never talk JSON-RPC itself.
package execcli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/execserver"
	"github.com/codexd/codexd/jsonrpc"
	"github.com/codexd/codexd/rpcserve"
)

// Exit codes of codexd run itself; see the package doc.
const (
	ExitUsage     = 2
	ExitFailure   = 125
	ExitCannotRun = 126
	ExitNotFound  = 127
)

// Main runs `codexd run` with args and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	return run(args, stdin, stdout, stderr, sigs, os.Environ())
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

type config struct {
	server    string
	tokenFile string
	tty       bool
	noStdin   bool
	cwd       string
	inherit   bool
	env       map[string]string
	argv      []string
}

func parse(args []string, stderr io.Writer, environ []string) (*config, error) {
	fs := flag.NewFlagSet("codexd run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := &config{}
	fs.StringVar(&cfg.server, "server", "", "exec-server `URL`: ws://HOST:PORT or unix://PATH (default: an in-process server)")
	fs.StringVar(&cfg.tokenFile, "auth-token-file", "", "send the bearer token in `FILE` to the server")
	fs.BoolVar(&cfg.tty, "tty", false, "run the command on a pseudo-terminal")
	fs.BoolVar(&cfg.noStdin, "no-stdin", false, "give the command /dev/null as stdin instead of forwarding local stdin")
	fs.StringVar(&cfg.cwd, "cwd", "", "working `DIR` of the command (default: the current directory; with --server, the server's)")
	fs.BoolVar(&cfg.inherit, "inherit-env", false, "with --server, send the whole local environment (default: only PATH, TERM, LANG, LC_* and --env)")
	var envs multiFlag
	fs.Var(&envs, "env", "set `K=V` in the command's environment (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: codexd run [--server URL] [--auth-token-file FILE] [--tty] [--cwd DIR] [--env K=V]... [--inherit-env] [--no-stdin] -- CMD [ARGS...]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, errReported{err} // fs has printed it, with the usage
	}
	cfg.argv = fs.Args()
	if len(cfg.argv) == 0 {
		return nil, errors.New("missing command")
	}
	if cfg.tokenFile != "" && cfg.server == "" {
		return nil, errors.New("--auth-token-file needs --server")
	}
	if cfg.server != "" {
		if _, err := execclient.URLDialer(cfg.server, execclient.Options{}); err != nil {
			return nil, err
		}
	}
	cfg.env = map[string]string{}
	remote := cfg.server != ""
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" && (!remote || cfg.inherit || sentToRemote(k)) {
			cfg.env[k] = v
		}
	}
	for _, kv := range envs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--env %q: want K=V", kv)
		}
		cfg.env[k] = v
	}
	switch {
	case cfg.cwd == "" && remote:
		// The server's default, once connected.
	case cfg.cwd == "":
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("current directory: %v (use --cwd)", err)
		}
		cfg.cwd = wd
	case remote:
		// A path on the server: made absolute there, not against ours.
		if !strings.HasPrefix(cfg.cwd, "/") && !strings.HasPrefix(strings.ToLower(cfg.cwd), "file:") {
			return nil, fmt.Errorf("--cwd %q: with --server, give an absolute path on the server", cfg.cwd)
		}
	default:
		abs, err := filepath.Abs(cfg.cwd)
		if err != nil {
			return nil, fmt.Errorf("--cwd: %v", err)
		}
		cfg.cwd = abs
	}
	return cfg, nil
}

// sentToRemote reports whether a local variable goes to a remote server
// by default: what a command needs to find programs and to print as the
// user's terminal expects, nothing that could be a secret.
func sentToRemote(name string) bool {
	switch name {
	case "PATH", "TERM", "LANG":
		return true
	}
	return strings.HasPrefix(name, "LC_")
}

// errReported is an error already shown to the user.
type errReported struct{ error }

func (e errReported) Unwrap() error { return e.error }

// syncWriter serialises writes to stderr, which the command's stderr, our
// messages and the logger share.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer, sigs <-chan os.Signal, environ []string) int {
	stderr = &syncWriter{w: stderr}
	// --help is an answer, not a mistake: the usage goes to stdout, exit 0,
	// as for every other codexd command.
	if _, err := parse(args, io.Discard, environ); errors.Is(err, flag.ErrHelp) {
		_, _ = parse(args, stdout, environ)
		return 0
	}
	cfg, err := parse(args, stderr, environ)
	if err != nil {
		if !errors.As(err, new(errReported)) {
			fmt.Fprintln(stderr, "codexd run:", err)
		}
		return ExitUsage
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "codexd run: "+format+"\n", a...)
		return ExitFailure
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	opts := execclient.Options{ClientName: "codexd-exec", Logger: logger}
	ctx := context.Background()

	var client *execclient.Client
	if cfg.server == "" {
		srv, err := execserver.New(execserver.Config{Logger: logger})
		if err != nil {
			return fail("cannot start the embedded exec-server: %v", err)
		}
		defer srv.Close()
		client, err = execclient.NewInProcess(ctx, srv, opts)
		if err != nil {
			return fail("cannot connect to the embedded exec-server: %v", err)
		}
	} else {
		if cfg.tokenFile != "" {
			tok, err := rpcserve.ReadAuthToken(cfg.tokenFile)
			if err != nil {
				fmt.Fprintln(stderr, "codexd run:", err)
				return ExitUsage
			}
			opts.BearerToken = tok
		}
		client, err = execclient.Dial(ctx, cfg.server, opts)
		if err != nil {
			return fail("cannot connect to %s: %v", cfg.server, err)
		}
	}
	defer client.Close()

	// An empty cwd is the server's default directory (execclient).
	forwardStdin := stdin != nil && !cfg.noStdin
	p, err := client.Start(ctx, execclient.StartOptions{
		Argv: cfg.argv, Cwd: cfg.cwd, Env: cfg.env, TTY: cfg.tty, PipeStdin: forwardStdin,
	})
	if err != nil {
		return startFailure(stderr, cfg, err)
	}

	var outputs sync.WaitGroup
	outputs.Add(2)
	go copyOutput(ctx, &outputs, p, stdout, p.Stdout())
	go copyOutput(ctx, &outputs, p, stderr, p.Stderr())
	if forwardStdin {
		// Not waited for: a blocked read of the local stdin cannot be
		// interrupted. It ends at local EOF, or at its next write once the
		// process or client is gone.
		go forwardInput(ctx, p, stdin, cfg.tty)
	}
	outputsDone := make(chan struct{})
	go func() { outputs.Wait(); close(outputsDone) }()

	interrupted := false
	for waiting := true; waiting; {
		select {
		case sig := <-sigs:
			if sig == os.Interrupt && !interrupted {
				interrupted = true
				if err := p.Signal(ctx); err != nil {
					fmt.Fprintln(stderr, "codexd run: interrupt:", err)
				}
				continue
			}
			if _, err := p.Terminate(ctx); err != nil {
				fmt.Fprintln(stderr, "codexd run: terminate:", err)
			}
		case <-outputsDone:
			waiting = false
		}
	}
	code, err := p.Wait(ctx)
	switch {
	case err == nil:
		return code
	case errors.Is(err, execclient.ErrOutputLost):
		fmt.Fprintln(stderr, "codexd run: warning:", err)
		return code
	}
	return fail("%v", err)
}

// startFailure maps a failed process/start to an exit code.
func startFailure(stderr io.Writer, cfg *config, err error) int {
	fmt.Fprintf(stderr, "codexd run: cannot run %s: %v\n", cfg.argv[0], err)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError {
		return ExitFailure
	}
	msg := rpcErr.Message
	for _, notFound := range []string{"(os error 2)", "No viable candidates found in PATH", "Unable to resolve the PATH"} {
		if strings.Contains(msg, notFound) {
			return ExitNotFound
		}
	}
	if strings.Contains(msg, "(os error") || strings.HasPrefix(msg, "Unable to spawn") {
		return ExitCannotRun
	}
	return ExitFailure
}

// copyOutput copies one output stream of p to w. If w fails (a closed
// pipe), the process is terminated, as a local one would die of SIGPIPE,
// and the rest of its output is discarded so that it can finish.
func copyOutput(ctx context.Context, wg *sync.WaitGroup, p *execclient.Process, w io.Writer, r io.Reader) {
	defer wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 && w != nil {
			if _, werr := w.Write(buf[:n]); werr != nil {
				w = nil
				_, _ = p.Terminate(ctx)
			}
		}
		if err != nil {
			return
		}
	}
}

// forwardInput copies local stdin to the process's stdin.
func forwardInput(ctx context.Context, p *execclient.Process, stdin io.Reader, tty bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := stdin.Read(buf)
		if n > 0 {
			if p.Write(ctx, buf[:n]) != nil {
				return
			}
		}
		if err != nil {
			if tty && errors.Is(err, io.EOF) {
				_ = p.Write(ctx, []byte{4}) // ^D: end of input on the terminal
			}
			return
		}
	}
}
