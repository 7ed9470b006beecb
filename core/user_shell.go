package core

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/core/tools"
	"github.com/codexd/codexd/execenv"
)

// A user's shell command (agent.ShellCommand, the TUI's `!cmd`) runs as
// Codex's UserShellCommandTask does: `shell -lc COMMAND` in the thread's
// cwd, never sandboxed (the user typed it), with a one-hour timeout; its
// item has source "userShell", and its command and output reach the model
// as a <user_shell_command> user message. With a regular turn running it
// runs beside that turn, as Codex's ActiveTurnAuxiliary mode does.

// shellJob is what a "userShell" turn runs.
type shellJob struct {
	command string
	timeout time.Duration
}

// submitShell queues op as a turn of its own, or runs it beside the
// running regular turn (mu held). It returns the turn's id.
func (t *thread) submitShell(op agent.ShellCommand) (string, error) {
	cmd := strings.TrimSpace(op.Command)
	if cmd == "" {
		return "", agent.ErrEmptyInput
	}
	timeout := op.Timeout
	if timeout == 0 {
		timeout = agent.DefaultShellTimeout
	}
	if tr := t.current(); tr != nil && tr == t.queue[0] && tr.kind == "regular" {
		tr.aux.Add(1)
		go func() {
			defer tr.aux.Done()
			tr.runUserShell(cmd, timeout, true)
		}()
		return tr.id, nil
	}
	tr := t.newTurn(t.settings, nil)
	tr.kind = "userShell"
	tr.shell = &shellJob{command: cmd, timeout: timeout}
	t.queue = append(t.queue, tr)
	t.signal()
	return tr.id, nil
}

// runShellTurn runs a "userShell" turn: the command, nothing else.
func (tr *turn) runShellTurn() (agent.TurnStatus, *agent.TurnError) {
	tr.runUserShell(tr.shell.command, tr.shell.timeout, false)
	if tr.ctx.Err() != nil {
		return agent.TurnStatusInterrupted, nil
	}
	return agent.TurnStatusCompleted, nil
}

// userShellEnv is the environment of a user's command: the shell
// environment policy's, without the unified-exec additions (no pager or
// colour overrides: the user runs it as in a terminal).
func (c *Core) userShellEnv(id string) map[string]string {
	env := execenv.Build(os.Environ(), c.cfg.ShellEnvironment, c.cfg.SecretEnvVars)
	if id != "" {
		env[threadIDEnvVar] = id
	}
	return env
}

// runUserShell runs one user command to its end, streaming its output, and
// records it for the model. aux: it runs beside the turn's own work, so its
// record waits for the turn's next request.
func (tr *turn) runUserShell(cmd string, timeout time.Duration, aux bool) {
	t := tr.t
	argv := []string{t.exec.shell(), "-lc", cmd}
	it := &agent.CommandExecution{
		ID: uuid.NewString(), Command: shellQuote(argv), Argv: argv, Cwd: tr.settings.Cwd,
		Source: "userShell", Status: agent.ItemStatusInProgress, Actions: commandActions(cmd),
	}
	started := *it
	tr.emit(agent.ItemStarted{Item: &started})

	res := tr.execUserShell(it, argv, timeout)
	done := *it
	done.Status = agent.ItemStatusCompleted
	if res.code != 0 {
		done.Status = agent.ItemStatusFailed
	}
	done.ExitCode = &res.code
	done.Output = &res.output
	done.Duration = res.duration
	tr.emit(agent.ItemCompleted{Item: &done})

	p := t.core.modelInfo(tr.settings.Model).Truncation
	rec := prompt.Item{Type: prompt.TypeMessage, Role: "user", ID: newMessageID(), Content: []prompt.Content{{
		Type: "input_text", Text: userShellRecord(cmd, res.code, res.duration, tools.TruncateForHistory(res.output, p.Mode, p.Limit)),
	}}}
	if aux {
		t.mu.Lock()
		tr.pendingItems = append(tr.pendingItems, rec)
		t.mu.Unlock()
		return
	}
	t.appendHistory(tr.id, rec)
}

// shellResult is how a user's command ended, as its item and record show it.
type shellResult struct {
	code     int
	output   string
	duration time.Duration
}

// abortedByUser is Codex's output for a user's command whose turn was
// interrupted.
const abortedByUser = "command aborted by user"

func (tr *turn) execUserShell(it *agent.CommandExecution, argv []string, timeout time.Duration) shellResult {
	t := tr.t
	start := time.Now()
	p, err := t.exec.spawn(tr.ctx, 0, it.ID, argv, argv, it.Cwd, false, it.Command, t.core.userShellEnv(t.id), nil)
	if err != nil {
		if tr.ctx.Err() != nil {
			return shellResult{code: -1, output: abortedByUser}
		}
		return shellResult{code: -1, output: fmt.Sprintf("execution error: %v", err)}
	}
	// Codex keeps stdout and stderr apart besides the aggregate; its
	// timeout message shows both.
	var mu sync.Mutex
	var stdout, stderr strings.Builder
	sink := tr.outputSink(it.ID)
	p.attach(func(stream string, data []byte) {
		mu.Lock()
		if stream == "stderr" {
			capWrite(&stderr, data)
		} else {
			capWrite(&stdout, data)
		}
		mu.Unlock()
		sink(stream, data)
	})
	_, exited, code := p.collect(tr.ctx, start.Add(max(timeout, 0)))
	p.detach()
	if exited {
		return shellResult{code: code, output: p.aggregated(), duration: time.Since(start)}
	}
	p.terminate()
	if tr.ctx.Err() != nil {
		return shellResult{code: -1, output: abortedByUser}
	}
	mu.Lock()
	out, errOut := stdout.String(), stderr.String()
	mu.Unlock()
	return shellResult{code: -1, output: timeoutText(out, errOut, p.aggregated(), time.Since(start))}
}

// capWrite keeps at most maxAggregated bytes of a stream.
func capWrite(b *strings.Builder, data []byte) {
	if room := maxAggregated - b.Len(); room > 0 {
		b.Write(data[:min(room, len(data))])
	}
}

// timeoutText is the output Codex 0.169 reports for a user's command that
// timed out: the Debug form of its sandbox error, exit code 124 inside.
func timeoutText(stdout, stderr, aggregated string, d time.Duration) string {
	stream := func(s string) string {
		return fmt.Sprintf("StreamOutput { text: %s, truncated_after_lines: None }", rustDebugString(s))
	}
	return fmt.Sprintf("execution error: Sandbox(Timeout { output: ExecToolCallOutput { exit_code: 124, stdout: %s, stderr: %s, aggregated_output: %s, duration: %s, timed_out: true } })",
		stream(stdout), stream(stderr), stream(aggregated), d)
}

// rustDebugString quotes s as Rust's Debug does for a str: double quotes,
// \n \r \t \\ \" escaped, other control characters as \u{N}.
func rustDebugString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case 0:
			b.WriteString(`\0`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u{%x}`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// userShellRecord is the user message that tells the model about a user's
// command, in Codex's format.
func userShellRecord(cmd string, code int, d time.Duration, output string) string {
	return fmt.Sprintf("<user_shell_command>\n<command>\n%s\n</command>\n<result>\nExit code: %d\nDuration: %.4f seconds\nOutput:\n%s\n</result>\n</user_shell_command>",
		cmd, code, d.Seconds(), output)
}
