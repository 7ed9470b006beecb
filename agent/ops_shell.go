package agent

import "time"

// ShellCommand runs a command the user typed (the TUI's `!cmd`) in the
// thread's shell, without a sandbox. With a regular turn running, the
// command runs beside it, as an item of that turn; otherwise it is a turn
// of its own (kind "userShell"). Its item has Source "userShell", and the
// command with its output is recorded in the history as a user message,
// so the model sees it from its next request on. Submit returns the id of
// the turn the command belongs to.
type ShellCommand struct {
	Command string
	// Timeout ends the command; zero means DefaultShellTimeout, and a
	// negative one times out at once (Codex's timeoutMs 0).
	Timeout time.Duration
}

// DefaultShellTimeout is how long a ShellCommand may run, as in Codex.
const DefaultShellTimeout = time.Hour

func (ShellCommand) isOp() {}
