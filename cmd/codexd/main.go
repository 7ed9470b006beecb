// Command codexd is one binary for codexd's servers and clients:
//
//	codexd exec "PROMPT"                          run one agent turn, print the answer
//	codexd app-server [--listen URL]              serve Codex's app-server protocol
//	codexd exec-server [--listen URL]             serve the exec-server
//	codexd run [--server URL] -- CMD [ARGS...]    run a command through an exec-server
//	codexd mock-model [--listen 127.0.0.1:PORT]   serve a mock Responses API
//
// It only parses flags and hands over to the packages that do the work; it
// must never hold protocol, server or agent logic of its own.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/codexd/codexd/execcli"
	"github.com/codexd/codexd/execserver/procs"
	"github.com/codexd/codexd/sandbox"
)

// version is codexd's own version; the wire contract it implements is
// Codex's (codexVersion).
const (
	version      = "0.2.0"
	codexVersion = "0.169.0"
)

type command struct {
	name, synopsis string
	run            func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

var commands = append(agentCommands(),
	command{"exec-server", "exec-server [--listen URL]         serve the exec-server (processes, files, HTTP for an agent)", runExecServer},
	command{"run", "run [--server URL] -- CMD [ARGS]    run a command through an exec-server (in-process by default)", runRun},
)

func usage(w io.Writer) {
	fmt.Fprintf(w, "codexd %s: Codex's JSON-RPC servers and agent, in Go (wire-compatible with Codex %s)\n\nusage:\n", version, codexVersion)
	for _, c := range commands {
		fmt.Fprintf(w, "  codexd %s\n", c.synopsis)
	}
	fmt.Fprint(w, "  codexd help [COMMAND]              this text, or a command's flags\n  codexd --version\n")
}

func main() {
	// A command wrapped by sandbox.Wrap re-executes codexd as its helper:
	// confine and exec it before anything else runs.
	sandbox.RunHelperIfRequested()
	// A server's guard is codexd re-executed too (procs.EnableGuard).
	procs.RunGuardIfRequested()
	prepareProcess(os.Args[1:])
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// prepareProcess sets up what is for the whole process, before run; it is
// not in run, which tests call in their own process.
func prepareProcess(args []string) {
	if len(args) > 0 && (args[0] == "exec-server" || args[0] == "app-server") {
		// Every child of this process is started by the exec-server (or
		// command/exec, through the same package): orphans of their
		// descendants come back to it, to be reaped and killed with their
		// session (or the server), and stay in its tree, where the
		// listeners recognise them and refuse them as clients (package
		// peerguard).
		if err := procs.EnableSubreaper(); err != nil {
			fmt.Fprintln(os.Stderr, "codexd "+args[0]+": cannot become a child subreaper:", err)
		}
		// Nor does anything they started outlive this process when it is
		// killed, even with SIGKILL: a guard process kills what is left.
		procs.EnableGuard()
	}
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "--help", "help":
		if len(args) > 1 && args[0] == "help" {
			return run([]string{args[1], "--help"}, stdin, stdout, stderr)
		}
		usage(stdout)
		return 0
	case "--version", "-V", "version":
		fmt.Fprintf(stdout, "codexd %s (Codex %s protocol, %s)\n", version, codexVersion, buildRevision())
		return 0
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(args[1:], stdin, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "codexd: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

// parseFlags parses args into fs, the way every subcommand does: -h and
// --help print the usage to stdout and exit 0; a bad flag prints the
// error and the usage to stderr and exits 2. ok reports whether to go on.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	var errOut bytes.Buffer
	fs.SetOutput(&errOut)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stdout)
		fs.Usage()
		return 0, false
	case err != nil:
		_, _ = stderr.Write(errOut.Bytes())
		return 2, false
	}
	fs.SetOutput(stderr)
	return 0, true
}

// flagUsage returns a FlagSet.Usage that prints head, then the flags that
// have a usage text (hidden flags have none).
func flagUsage(fs *flag.FlagSet, head string) func() {
	return func() {
		w := fs.Output()
		fmt.Fprint(w, head)
		if !strings.HasSuffix(head, "\n") {
			fmt.Fprintln(w)
		}
		fs.VisitAll(func(f *flag.Flag) {
			if f.Usage == "" {
				return
			}
			name, use := flag.UnquoteUsage(f)
			fmt.Fprintf(w, "  --%s %s\n    \t%s", f.Name, name, use)
			if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]" {
				fmt.Fprintf(w, " (default %s)", f.DefValue)
			}
			fmt.Fprintln(w)
		})
	}
}

func buildRevision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown build"
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return info.GoVersion
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return rev + ", " + info.GoVersion
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// runRun is `codexd run`: a command through an exec-server.
func runRun(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return execcli.Main(args, stdin, stdout, stderr)
}
