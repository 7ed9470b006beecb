// Package promptcli is `codexd exec "PROMPT"`: one agent turn, run
// non-interactively, as `codex exec` runs one.
//
// The turn goes through the app-server's in-process typed client
// (initialize, thread/start, turn/start, then the notifications), the same
// handler path a network client takes, so `codexd exec` sees exactly what
// the TUI or an IDE would. It prints the turn in one of two forms:
//
//   - for a person (the default): the answer streams to stdout as the
//     model writes it, every message ending with a newline; progress
//     (the commands run and what they printed, file changes, plan
//     updates, warnings, retries, errors) goes to stderr in a compact
//     form, so `codexd exec "..." > answer.txt` keeps only the answer;
//   - for a program (--json): one JSON event a line on stdout, in the
//     format of `codex exec --json` 0.169 (thread.started, turn.started,
//     item.started/updated/completed, turn.completed or turn.failed,
//     error); see jsonl.go for the mapping.
//
// Nothing can be asked of a user: a server request that still arrives (a
// command or patch approval, a question) is declined, and stderr says so.
// The caller picks the approval policy; `codexd exec` makes it "never" unless
// told otherwise, as Codex does.
//
// Signals: the first SIGINT sends turn/interrupt and the run ends once the
// turn has ended interrupted (exit 130); a second SIGINT, or SIGTERM, ends
// it at once. Exit codes: 0 the turn completed, 1 it failed (or the run
// could not start it), 2 bad usage (from Prepare), 130 interrupted, 143
// terminated.
//
// The package must never reach into the agent core: it gets an agent.Core,
// hands it to an app-server and speaks only the app-server protocol. It
// does not parse flags (cmd/codexd does) or start the core (core/boot does).
package promptcli
