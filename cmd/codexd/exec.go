//go:build !execonly

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/codexd/codexd/promptcli"
)

const execUsage = `usage: codexd exec [flags] ["PROMPT" | -]

Runs one agent turn non-interactively, as codex exec does, through the
in-process app-server. The answer streams to stdout; progress (commands
and their output, file changes, plans, warnings, errors) goes to stderr.
With --json, stdout gets the events as JSONL (codex exec --json's format).

The prompt is the argument; with none, or "-", it is read from stdin. A
piped stdin next to a prompt argument is appended to it in a <stdin> block.
Nobody can answer an approval here: the approval policy is "never" unless
--ask-for-approval says otherwise (requests that still come are declined).

Offline, with no key: codexd exec --model-provider mock "list the files here"

The core reads $CODEX_HOME/config.toml (default ~/.codex) as Codex does;
the flags below win over it.

exit codes: 0 completed, 1 the turn failed, 2 bad usage, 130 interrupted
(the first Ctrl-C interrupts the turn, a second one quits at once).

flags:`

const execReviewUsage = `usage: codexd exec review [flags] [--uncommitted | --base BRANCH | --commit SHA [--title TITLE] | "INSTRUCTIONS" | -]

Runs a code review of the repository in the working directory, as codex
exec review does: the working tree's changes (--uncommitted), what the
branch would merge into BRANCH (--base), one commit (--commit), or custom
instructions ("-" reads them from stdin). The reviewer runs git itself;
its findings are the answer (stdout), in Codex's format. The model is
review_model when config.toml sets it. With --json, stdout gets JSONL.

exit codes: 0 completed, 1 the review failed, 2 bad usage, 130 interrupted.

flags:`

// runExec is `codexd exec "PROMPT"`: one agent turn through the in-process
// app-server client (package promptcli).
func runExec(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "--" {
		fmt.Fprintln(stderr, "codexd exec: runs a prompt now; to run a command use: codexd run -- CMD [ARGS...]")
		return 2
	}
	var review *promptcli.ReviewFlags
	name, usage := "exec", execUsage
	if len(args) > 0 && args[0] == "review" {
		args, review, name, usage = args[1:], &promptcli.ReviewFlags{}, "exec review", execReviewUsage
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	if review != nil {
		fs.BoolVar(&review.Uncommitted, "uncommitted", false, "review staged, unstaged and untracked changes")
		fs.StringVar(&review.Base, "base", "", "review the changes against base `BRANCH`")
		fs.StringVar(&review.Commit, "commit", "", "review the changes of commit `SHA`")
		fs.StringVar(&review.Title, "title", "", "the commit's `TITLE`, shown with the review (with --commit)")
	}
	jsonOut := fs.Bool("json", false, "print the events to stdout as JSONL")
	var lastMessage string
	fs.StringVar(&lastMessage, "output-last-message", "", "write the final agent message to `FILE`")
	fs.StringVar(&lastMessage, "o", "", "same as --output-last-message")
	schema := fs.String("output-schema", "", "JSON Schema `FILE` the final answer must follow")
	ephemeral := fs.Bool("ephemeral", false, "keep nothing of the thread on disk")
	fs.Bool("skip-git-repo-check", false, "accepted for compatibility with codex exec (codexd runs anywhere)")
	var cf coreFlags
	cf.register(fs, true)
	fs.Usage = flagUsage(fs, usage)
	if code, ok := parseFlags(fs, interspersed(fs, args), stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 1 {
		fmt.Fprintf(stderr, "codexd %s: one prompt, please (got %d arguments; quote the prompt)\n", name, fs.NArg())
		return 2
	}
	if err := cf.validate(); err != nil {
		fmt.Fprintln(stderr, "codexd exec:", err)
		return 2
	}
	// Nobody is there to approve anything: Codex's exec forces "never".
	if cf.approval == "" {
		cf.approval = "never"
	}
	// The prompt is read first: a Ctrl-C while stdin is read still kills.
	job, err := promptcli.Prepare(promptcli.Options{
		Prompt: fs.Arg(0), Stdin: stdin, Stdout: stdout, Stderr: stderr,
		JSON: *jsonOut, OutputLastMessage: lastMessage, OutputSchemaFile: *schema, Ephemeral: *ephemeral, Review: review,
		ClientVersion: codexVersion,
		Banner:        fmt.Sprintf("codexd %s (Codex %s protocol)", version, codexVersion),
	})
	if err != nil {
		fmt.Fprintln(stderr, "codexd exec:", err)
		var ue *promptcli.UsageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	sigs, stop := execSignals()
	defer stop()
	job.SetSignals(sigs)
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	rt, err := cf.open(context.Background(), "codex_exec", log)
	if err != nil {
		fmt.Fprintln(stderr, "codexd exec:", err)
		return 1
	}
	// Deferred after stop: the runtime closes (its commands killed) while
	// signals are still caught.
	defer rt.Close()
	return job.Run(context.Background(), rt.Core)
}

// execSignals relays SIGINT and SIGTERM to the run until stop.
func execSignals() (<-chan os.Signal, func()) {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	return ch, func() { signal.Stop(ch) }
}

// interspersed moves the flags after the prompt in front of it, so that
// `codexd exec "PROMPT" --json` works as codex exec's parser allows.
// Everything after "--" stays an argument.
func interspersed(fs *flag.FlagSet, args []string) []string {
	var flags, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			rest = append(rest, args[i+1:]...)
			i = len(args)
		case len(a) > 1 && a[0] == '-':
			flags = append(flags, a)
			name := a[1:]
			if len(name) > 0 && name[0] == '-' {
				name = name[1:]
			}
			if _, _, hasValue := cut(name, '='); hasValue {
				continue
			}
			if f := fs.Lookup(name); f != nil && !isBoolFlag(f) && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		default:
			rest = append(rest, a)
		}
	}
	if len(rest) == 0 {
		return flags
	}
	return append(append(flags, "--"), rest...)
}

func cut(s string, sep byte) (before, after string, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
