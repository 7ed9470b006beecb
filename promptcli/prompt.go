package promptcli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/appproto"
)

// Options describe one run. The zero value of each field is the default
// of `codexd exec`.
type Options struct {
	// Prompt is the PROMPT argument. Empty or "-" reads the prompt from
	// Stdin (refused when Stdin is a terminal, unless it is "-"). Any
	// other prompt gets what a piped Stdin holds appended in a <stdin>
	// block, as Codex 0.169 does. A nil Stdin has nothing to read.
	Prompt string
	Stdin  io.Reader

	Stdout, Stderr io.Writer

	// JSON prints JSONL events on stdout instead of the human form.
	JSON bool
	// OutputLastMessage names a file that gets the final agent message
	// when the turn completes.
	OutputLastMessage string
	// OutputSchemaFile names a JSON Schema file for the final answer,
	// passed to turn/start.
	OutputSchemaFile string
	// Ephemeral starts a thread that is never written to disk.
	Ephemeral bool
	// Review, when set, runs a review (`codexd exec review`) instead of a
	// turn: the prompt, if any, is its custom instructions.
	Review *ReviewFlags

	// Signals delivers the process's SIGINT and SIGTERM (cmd/codexd
	// relays them; tests inject their own). Nil means none arrive.
	Signals <-chan os.Signal

	// ClientName and ClientVersion go in initialize's clientInfo; the
	// thread records the name as its originator. Defaults: "codex_exec",
	// as Codex's exec client calls itself, and "0".
	ClientName, ClientVersion string
	// Banner is the first line of the human header (e.g. the version).
	Banner string
	Logger *slog.Logger
}

// Job is a run whose input has been read: Prepare checks everything the
// user gave before anything starts.
type Job struct {
	opts   Options
	prompt string
	schema jsontext.Value
	review *appproto.ReviewTarget
}

// UsageError is an error in what the user gave: nothing was run, and the
// command should exit 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usageErrorf(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// Prepare reads the prompt (from stdin when it must) and the output
// schema. Its errors are *UsageError values.
func Prepare(opts Options) (*Job, error) {
	if opts.Stdout == nil {
		opts.Stdout = io.Discard
	}
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	if opts.ClientName == "" {
		opts.ClientName = "codex_exec"
	}
	if opts.ClientVersion == "" {
		opts.ClientVersion = "0"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(opts.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	j := &Job{opts: opts}
	var err error
	if opts.Review != nil {
		custom := opts.Prompt
		if custom == "-" {
			if custom, err = readPrompt("-", opts.Stdin, opts.Stderr); err != nil {
				return nil, err
			}
		}
		if j.review, err = reviewTarget(*opts.Review, strings.TrimSpace(custom)); err != nil {
			return nil, err
		}
	} else if j.prompt, err = readPrompt(opts.Prompt, opts.Stdin, opts.Stderr); err != nil {
		return nil, err
	}
	if opts.OutputSchemaFile != "" {
		if j.schema, err = readSchema(opts.OutputSchemaFile); err != nil {
			return nil, err
		}
	}
	return j, nil
}

// SetSignals sets Options.Signals: a caller that reads the prompt before
// it catches signals (so that Ctrl-C still ends a read of stdin) sets
// them here.
func (j *Job) SetSignals(ch <-chan os.Signal) { j.opts.Signals = ch }

// Prompt returns the prompt the turn will send.
func (j *Job) Prompt() string { return j.prompt }

// readPrompt resolves the prompt as Codex 0.169 does: the argument, or
// stdin when the argument is "-" or absent (absent needs a stdin that is
// not a terminal), or the argument with a piped stdin appended.
func readPrompt(arg string, stdin io.Reader, stderr io.Writer) (string, error) {
	tty := stdin == nil || isTerminal(stdin)
	switch {
	case arg == "-" && stdin == nil:
		return "", usageErrorf("no prompt: \"-\" reads it from stdin, and there is none")
	case arg == "-":
	case arg == "" && tty:
		return "", usageErrorf("no prompt: give one as an argument, or pipe it into stdin")
	case arg == "":
		fmt.Fprintln(stderr, "Reading prompt from stdin...")
	case tty:
		return arg, nil
	default:
		// Codex appends whatever a pipe holds, so that
		// `git diff | codexd exec "review this"` works.
		fmt.Fprintln(stderr, "Reading additional input from stdin...")
		extra, err := readText(stdin)
		if err != nil {
			return "", err
		}
		if strings.TrimSpace(extra) == "" {
			return arg, nil
		}
		if !strings.HasSuffix(extra, "\n") {
			extra += "\n"
		}
		return arg + "\n\n<stdin>\n" + extra + "</stdin>", nil
	}
	p, err := readText(stdin)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(p) == "" {
		return "", usageErrorf("no prompt: stdin was empty")
	}
	return p, nil
}

// maxPromptBytes bounds what is read from stdin. The app-server refuses
// input past appproto.MaxInputChars characters anyway; this only keeps a
// runaway pipe from filling memory first.
const maxPromptBytes = 16 << 20

// readText reads stdin to its end as UTF-8 text (a UTF-8 byte order mark
// is dropped).
func readText(r io.Reader) (string, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxPromptBytes+1))
	if err != nil {
		return "", usageErrorf("reading the prompt from stdin: %v", err)
	}
	if len(b) > maxPromptBytes {
		return "", usageErrorf("the prompt on stdin is larger than %d MiB", maxPromptBytes>>20)
	}
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	for _, bom := range []struct {
		prefix, name string
	}{{"\xff\xfe\x00\x00", "UTF-32LE"}, {"\x00\x00\xfe\xff", "UTF-32BE"}, {"\xff\xfe", "UTF-16LE"}, {"\xfe\xff", "UTF-16BE"}} {
		if bytes.HasPrefix(b, []byte(bom.prefix)) {
			return "", usageErrorf("the prompt on stdin looks like %s: convert it to UTF-8 (e.g. iconv -f %s -t UTF-8)", bom.name, bom.name)
		}
	}
	if !utf8.Valid(b) {
		n := 0
		for n < len(b) {
			r, size := utf8.DecodeRune(b[n:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			n += size
		}
		return "", usageErrorf("the prompt on stdin is not valid UTF-8 (invalid byte at offset %d): convert it to UTF-8", n)
	}
	return string(b), nil
}

// readSchema reads an --output-schema file: any one JSON value, as Codex
// accepts (the model provider judges the schema itself), except that a
// name given twice in an object is refused rather than guessed at.
func readSchema(path string) (jsontext.Value, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErrorf("--output-schema: %v", err)
	}
	dec := jsontext.NewDecoder(bytes.NewReader(b))
	v, err := dec.ReadValue()
	v = bytes.Clone(v) // the decoder reuses its buffer
	if err == nil {
		if _, err = dec.ReadToken(); err == io.EOF {
			err = nil
		} else if err == nil {
			err = errors.New("more than one JSON value")
		}
	}
	if err != nil {
		return nil, usageErrorf("--output-schema %s is not valid JSON: %v", path, err)
	}
	if err := v.Compact(); err != nil {
		return nil, usageErrorf("--output-schema %s: %v", path, err)
	}
	return v, nil
}
