package mockmodel

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

const usage = `usage: codexd mock-model [--listen HOST:PORT] [--script FILE] [--context-window N] [--quiet]

Serves a mock OpenAI Responses API (POST /v1/responses, streamed as
server-sent events) for running Codex or codexd offline. Prints the base URL
to put in a provider's base_url (http://HOST:PORT/v1) as one line on
stdout, then serves until SIGINT or SIGTERM. Requests are logged on stderr.

  --listen HOST:PORT   address to listen on (default 127.0.0.1:0, any free port)
  --script FILE        JSON rules tried before the built-in behaviour
  --context-window N   fail a request past N tokens (4 bytes a token) with
                       context_length_exceeded, as a real model does
  --quiet              do not log requests

Built-in behaviour: a request for structured output gets JSON that fits its
schema; a compaction request (a "checkpoint" prompt asking for a summary)
gets a summary; a review request (instructions asking for the findings
format, "overall_correctness") gets findings JSON after one look at
` + "`git status` and `git diff`" + `; a marker in the prompt picks a behaviour;
otherwise the model runs
exec_command ("` + DefaultCommand + `") and then quotes its output.
Markers:
`

func printUsage(w io.Writer) {
	fmt.Fprint(w, usage)
	for _, m := range Markers {
		fmt.Fprintf(w, "  %-22s %s\n", m.Marker, m.Does)
	}
}

func usageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "codexd mock-model: %s\n%s(run `codexd mock-model --help` for more)\n", msg, usage[:strings.IndexByte(usage, '\n')+1])
	return 2
}

// Main is `codexd mock-model`: it serves until SIGINT or SIGTERM. It
// returns the exit code: 0, 2 for bad usage (nothing served), 1 when
// serving failed.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, args, stdout, stderr)
}

// Run is Main until ctx ends instead of a signal.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mock-model", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	listen := fs.String("listen", "127.0.0.1:0", "")
	scriptPath := fs.String("script", "", "")
	quiet := fs.Bool("quiet", false, "")
	window := fs.Int64("context-window", 0, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(stdout)
			return 0
		}
		return usageError(stderr, err.Error())
	}
	if fs.NArg() > 0 {
		return usageError(stderr, fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	addr := strings.TrimPrefix(strings.TrimPrefix(*listen, "http://"), "tcp://")
	if *window < 0 {
		return usageError(stderr, "--context-window must not be negative")
	}
	opts := Options{ContextWindow: *window}
	if *scriptPath != "" {
		sc, err := LoadScript(*scriptPath)
		if err != nil {
			fmt.Fprintf(stderr, "codexd mock-model: %v\n", err)
			return 2
		}
		opts.Script = sc
	}
	if !*quiet {
		opts.Logf = func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	}
	s := New(opts)
	url, err := s.Start(addr)
	if err != nil {
		fmt.Fprintf(stderr, "codexd mock-model: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, url)
	<-ctx.Done()
	s.Close()
	return 0
}
