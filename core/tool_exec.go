package core

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/applypatch"
	"github.com/codexd/codexd/core/safety"
	"github.com/codexd/codexd/core/tools"
	"github.com/codexd/codexd/execclient"
)

// execCommand runs exec_command: it decides on approval, runs the command
// through the exec-server (sandboxed unless escalation was granted or the
// sandbox is off) and waits up to yield_time_ms for it.
func (tr *turn) execCommand(callID, raw string) string {
	a, err := tools.ParseExecArgs(raw)
	if err != nil {
		return err.Error()
	}
	s := tr.settings
	policy := safety.Policy(s.Approval)
	if a.Escalated() && !escalationAllowed(s) {
		return tools.EscalationRefused(rustPolicyName(s))
	}
	cwd := s.Cwd
	if a.Workdir != "" {
		cwd = resolvePath(s.Cwd, a.Workdir)
	}
	shell := a.Shell
	if shell == "" {
		shell = tr.t.exec.shell()
	}
	login := !tr.t.core.cfg.NoLoginShell
	if a.Login != nil {
		login = *a.Login
	}
	flag := "-c"
	if login {
		flag = "-lc"
	}
	argv := []string{shell, flag, a.Cmd}

	// A patch sent through the shell is the same file change as apply_patch,
	// with the same approval and diff.
	inv, err := applypatch.Intercept(argv)
	if err != nil {
		return tools.PatchVerifyFailedText + err.Error()
	}
	if inv != nil {
		return shellPatchOutput(tr.applyInvocation(callID, inv, cwd))
	}

	x := &execCall{
		callID: callID, argv: argv, command: shellQuote(argv), cwd: cwd,
		actions: commandActions(a.Cmd), args: a,
	}
	unrestricted := s.Sandbox.Mode == agent.SandboxDangerFullAccess || s.Sandbox.Mode == agent.SandboxExternal
	// CODEX_HOME's rules come first, as in Codex: a forbidden command is
	// refused, one they allow runs unasked and unsandboxed, and one they
	// mark prompt is asked for without an amendment to propose.
	rv := tr.t.core.checkRules(argv, x.command)
	if !rv.matched {
		x.retryAmendment = retryAmendment(argv)
	}
	switch {
	case rv.forbidden != "":
		return tools.Rejected(tools.ExecCommand, rv.forbidden)
	case rv.allowed:
		x.approved = true
		return tr.runCommand(x)
	case rv.prompt != "":
		if reason := rulePromptRefused(s); reason != "" {
			return tools.Rejected(tools.ExecCommand, reason)
		}
		if !tr.t.approvedForSession(argv) {
			if out, ok := tr.askExec(x, rv.prompt, nil, false); !ok {
				return out
			}
		}
		x.escalated, x.approved = a.Escalated(), true
		x.sandboxed = !unrestricted && !x.escalated
		return tr.runCommand(x)
	}
	req := safety.Assess(safety.Request{
		Argv: argv, Policy: policy, Unrestricted: unrestricted,
		Escalated: a.Escalated(), PrefixRule: a.PrefixRule,
	})
	switch req.Decision {
	case safety.Forbidden:
		// Only a dangerous command is refused (under never), and Codex
		// 0.169's only dangerous command is a forced rm.
		return tools.Rejected(tools.ExecCommand, fmt.Sprintf("`%s` rejected: %s", x.command, tools.ReasonForcedRemoval))
	case safety.Prompt:
		if !tr.t.approvedForSession(argv) {
			reason := ""
			if a.Escalated() {
				reason = a.Justification
			}
			amendment := req.Amendment
			if s.Approval == agent.ApprovalGranular && !granularFlags(s).SandboxApproval {
				// Codex offers no rule for good without sandbox_approval.
				amendment = nil
			}
			if out, ok := tr.askExec(x, reason, amendment, false); !ok {
				return out
			}
		}
		x.escalated = a.Escalated()
		x.approved = true
	}
	x.sandboxed = !unrestricted && !x.escalated
	return tr.runCommand(x)
}

// execCall is one exec_command call on its way.
type execCall struct {
	callID    string
	argv      []string
	command   string
	cwd       string
	actions   []agent.CommandAction
	args      tools.ExecArgs
	escalated bool
	sandboxed bool
	// approved: the user approved this call (or the same command for the
	// session), so a retry without the sandbox is not asked for again.
	approved bool
	started  bool // ItemStarted was emitted
	// retryAmendment is the rule proposed with a retry without the
	// sandbox (nil when a rule matched the command, as in Codex).
	retryAmendment []string
}

// retryAmendment is what Codex proposes to allow for good when it asks to
// run argv again without the sandbox: its first plain command, or the
// whole argv for a script that is not plain.
func retryAmendment(argv []string) []string {
	cmds, complex := safety.Commands(argv)
	if complex || len(cmds) == 0 {
		return append([]string(nil), argv...)
	}
	return append([]string(nil), cmds[0]...)
}

func (x *execCall) item() *agent.CommandExecution {
	return &agent.CommandExecution{
		ID: x.callID, Command: x.command, Argv: x.argv, Cwd: x.cwd,
		Source: "agent", Status: agent.ItemStatusInProgress, Actions: x.actions,
	}
}

// askExec asks the user to approve x. ok is false when the command must
// not run; out is then the model's output.
func (tr *turn) askExec(x *execCall, reason string, amendment []string, sandboxRetry bool) (out string, ok bool) {
	if !x.started {
		tr.emit(agent.ItemStarted{Item: x.item()})
		x.started = true
	}
	// Codex offers accept and cancel, and accepting with the proposed
	// amendment (which a front-end shows after accept when
	// ProposedAmendment is set); decline and acceptForSession are answered
	// all the same.
	decisions := []agent.Decision{agent.Accept, agent.Cancel}
	ch := tr.request(x.callID)
	tr.emit(agent.ExecApprovalRequest{
		CallID: x.callID, Command: x.command, Argv: x.argv, Cwd: x.cwd, Reason: reason,
		Actions: x.actions, ProposedAmendment: amendment, Decisions: decisions,
		SandboxRetry: sandboxRetry,
	})
	op, answered := tr.await(x.callID, ch)
	if !answered {
		return "aborted", false
	}
	d, _ := op.(agent.ExecDecision)
	complete := func(status agent.ItemStatus) {
		it := x.item()
		it.Status = status
		tr.emit(agent.ItemCompleted{Item: it})
	}
	switch d.Decision {
	case agent.Accept:
		if len(d.Amendment) > 0 {
			tr.t.allowPrefix(d.Amendment)
			tr.t.core.acceptAmendment(d.Amendment)
		}
		return "", true
	case agent.AcceptForSession:
		tr.t.approveForSession(x.argv)
		return "", true
	case agent.Cancel:
		complete(agent.ItemStatusDeclined)
		tr.t.mu.Lock()
		tr.interrupt()
		tr.t.mu.Unlock()
		return "aborted", false
	case agent.RequestFailed:
		complete(agent.ItemStatusFailed)
		return tools.Rejected(tools.ExecCommand, tools.ReasonApprovalFailed), false
	default: // Decline
		// Also for the retry without the sandbox: Codex's orchestrator
		// answers a declined retry as it answers a declined first ask,
		// and the model never sees the sandboxed run's output.
		complete(agent.ItemStatusDeclined)
		return tools.Rejected(tools.ExecCommand, tools.ReasonRejectedByUser), false
	}
}

// runCommand starts x and waits for it as exec_command does.
func (tr *turn) runCommand(x *execCall) string {
	t := tr.t
	s := tr.settings
	argv := x.argv
	var confine *execclient.Sandbox
	if x.sandboxed {
		if cl, err := t.exec.dial(tr.ctx); err == nil && !cl.InProcess() {
			// Another machine, maybe: its exec-server confines the
			// command with its own helper, as Codex 0.169 asks it to.
			confine = serverSandbox(commandSandbox(s), s.Cwd)
		} else {
			wrapped, err := t.core.sandbox.Wrap(commandSandbox(s), s.Cwd, argv)
			if err != nil {
				return fmt.Sprintf("exec_command failed: %v", err)
			}
			argv = wrapped
		}
	}
	id := t.exec.allocate()
	it := x.item()
	it.ProcessID = strconv.Itoa(id)
	it.Source = "unifiedExecStartup"
	// A sandboxed run whose denial would be put to the user starts its
	// item only once it is known not to have been denied: Codex's item
	// then starts with the question (askExec), and the denied run shows
	// nothing.
	held := x.sandboxed && !x.started && retriesUnsandboxed(s) && !x.approved && !t.approvedForSession(x.argv)
	var hold heldOutput
	startItem := func() {
		if !x.started {
			c := *it
			tr.emit(agent.ItemStarted{Item: &c})
			x.started = true
		}
	}
	if !held {
		startItem()
	}
	start := time.Now()
	p, err := t.exec.start(tr.ctx, id, x.callID, argv, x.argv, x.cwd, x.args.TTY, x.command, confine)
	if err != nil {
		t.exec.release(id)
		startItem()
		msg := err.Error()
		c := *it
		c.Status = agent.ItemStatusFailed
		c.Output = &msg
		tr.emit(agent.ItemCompleted{Item: &c})
		return fmt.Sprintf("exec_command failed: CreateProcess { message: %q }", msg)
	}
	sink := tr.outputSink(x.callID)
	if held {
		sink = hold.sink
	}
	p.attach(sink)
	out, exited, code := p.collect(tr.ctx, start.Add(x.args.Yield()))
	p.detach()
	if held && !(exited && code != 0 && t.core.sandbox.Denied(code, p.aggregated())) {
		startItem()
		hold.replay(tr.outputSink(x.callID))
	}
	if tr.ctx.Err() != nil {
		// Interrupted: the command stops with its turn.
		p.terminate()
		t.exec.release(id)
		return "aborted"
	}
	res := tools.ExecOutput{ChunkID: tools.ChunkID(), WallTime: time.Since(start), Output: out, MaxTokens: x.args.MaxTokens()}
	if !exited {
		res.SessionID = &id
		return res.Text()
	}
	t.exec.release(id)
	agg := p.aggregated()
	denied := x.sandboxed && code != 0 && t.core.sandbox.Denied(code, agg)
	if denied && retriesUnsandboxed(s) {
		if x.approved || tr.t.approvedForSession(x.argv) {
			// Approved already: Codex does not ask a second time.
			x.sandboxed = false
			return tr.runCommand(x)
		}
		reply, ok := tr.askExec(x, "command failed; retry without sandbox?", x.retryAmendment, true)
		if !ok {
			return reply // declined, failed or cancelled: the item is complete
		}
		x.sandboxed = false
		return tr.runCommand(x)
	}
	res.ExitCode = &code
	tr.completeExec(it, code, agg, time.Since(start), denied)
	return res.Text()
}

// heldOutput keeps a command's output while its item waits to start.
type heldOutput struct {
	mu     sync.Mutex
	chunks []heldChunk
}

type heldChunk struct {
	stream string
	data   []byte
}

func (h *heldOutput) sink(stream string, data []byte) {
	h.mu.Lock()
	h.chunks = append(h.chunks, heldChunk{stream, append([]byte(nil), data...)})
	h.mu.Unlock()
}

// replay hands what was held to sink, in order.
func (h *heldOutput) replay(sink func(stream string, data []byte)) {
	h.mu.Lock()
	chunks := h.chunks
	h.chunks = nil
	h.mu.Unlock()
	for _, c := range chunks {
		sink(c.stream, c.data)
	}
}

func (tr *turn) completeExec(orig *agent.CommandExecution, code int, output string, d time.Duration, denied bool) {
	c := *orig
	it := &c
	it.Status = agent.ItemStatusCompleted
	if code != 0 {
		it.Status = agent.ItemStatusFailed
	}
	it.ExitCode = &code
	it.Output = &output
	it.Duration = d
	it.SandboxDenied = denied
	tr.emit(agent.ItemCompleted{Item: it})
}

func (tr *turn) outputSink(itemID string) func(stream string, data []byte) {
	return func(stream string, data []byte) {
		tr.emitStream(agent.CommandOutputDelta{ItemID: itemID, Stream: stream, Data: data})
	}
}

// writeStdin runs write_stdin: it types into a running session and waits
// for output.
func (tr *turn) writeStdin(callID, raw string) string {
	a, err := tools.ParseWriteStdinArgs(raw)
	if err != nil {
		return err.Error()
	}
	id64, err := a.SessionID.Int64()
	if err != nil {
		return fmt.Sprintf("failed to parse write_stdin arguments: invalid session_id %s", a.SessionID)
	}
	id := int(id64)
	t := tr.t
	p := t.exec.get(id)
	if p == nil {
		return fmt.Sprintf("write_stdin failed: UnknownProcessId { process_id: %d }", id)
	}
	if a.Chars != "" {
		if !p.tty {
			return "write_stdin failed: StdinClosed"
		}
		if err := p.proc.Write(tr.ctx, []byte(a.Chars)); err != nil {
			return fmt.Sprintf("write_stdin failed: WriteToStdin (%v)", err)
		}
	}
	start := time.Now()
	p.attach(tr.outputSink(p.itemID))
	out, exited, code := p.collect(tr.ctx, start.Add(a.Yield()))
	p.detach()
	if tr.ctx.Err() != nil {
		p.terminate()
		t.exec.release(id)
		return "aborted"
	}
	res := tools.ExecOutput{ChunkID: tools.ChunkID(), WallTime: time.Since(start), Output: out, MaxTokens: a.MaxTokens()}
	if !exited {
		res.SessionID = &id
		return res.Text()
	}
	t.exec.release(id)
	res.ExitCode = &code
	it := &agent.CommandExecution{ID: p.itemID, Command: p.command, Argv: p.argv, Cwd: p.cwd, Source: "unifiedExecStartup", ProcessID: strconv.Itoa(id)}
	tr.completeExec(it, code, p.aggregated(), time.Since(p.start), false)
	return res.Text()
}

func resolvePath(cwd, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}

// commandActions is a best-effort reading of what a shell line does: when
// every plain command of it reads, lists or searches, one action each;
// otherwise a single "unknown" action with the whole line, as Codex shows.
func commandActions(cmd string) []agent.CommandAction {
	unknown := []agent.CommandAction{{Type: "unknown", Command: cmd}}
	cmds, ok := safety.Words(cmd)
	if !ok {
		return unknown
	}
	var out []agent.CommandAction
	for _, c := range cmds {
		name := filepath.Base(c[0])
		line := shellQuote(c)
		args := nonFlags(c[1:])
		switch name {
		case "cd", "true":
			continue
		case "ls", "tree":
			a := agent.CommandAction{Type: "listFiles", Command: line}
			if len(args) > 0 {
				a.Path = args[len(args)-1]
			}
			out = append(out, a)
		case "cat", "head", "tail", "nl", "less", "more", "sed":
			if len(args) == 0 {
				return unknown
			}
			f := args[len(args)-1]
			out = append(out, agent.CommandAction{Type: "read", Command: line, Name: filepath.Base(f), Path: f})
		case "rg", "grep":
			a := agent.CommandAction{Type: "search", Command: line}
			if len(args) > 0 {
				a.Query = args[0]
			}
			if len(args) > 1 {
				a.Path = args[len(args)-1]
			}
			out = append(out, a)
		default:
			return unknown
		}
	}
	if len(out) == 0 {
		return unknown
	}
	return out
}

func nonFlags(args []string) []string {
	var out []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			out = append(out, a)
		}
	}
	return out
}

// Session approvals.

func commandKey(argv []string) string { return strings.Join(argv, "\x00") }

func (t *thread) approveForSession(argv []string) {
	t.mu.Lock()
	t.approvedCommands[commandKey(argv)] = true
	t.mu.Unlock()
}

func (t *thread) allowPrefix(prefix []string) {
	t.mu.Lock()
	t.allowedPrefixes = append(t.allowedPrefixes, append([]string(nil), prefix...))
	t.mu.Unlock()
}

// approvedForSession reports a command the user already allowed in this
// thread: the same command, or one whose every plain command starts with
// an allowed prefix.
func (t *thread) approvedForSession(argv []string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.approvedCommands[commandKey(argv)] {
		return true
	}
	if len(t.allowedPrefixes) == 0 {
		return false
	}
	cmds, complex := safety.Commands(argv)
	if complex {
		return false
	}
	for _, c := range cmds {
		if !t.prefixAllowed(c) {
			return false
		}
	}
	return true
}

func (t *thread) prefixAllowed(c []string) bool {
next:
	for _, p := range t.allowedPrefixes {
		if len(p) > len(c) {
			continue
		}
		for i := range p {
			if p[i] != c[i] {
				continue next
			}
		}
		return true
	}
	return false
}
