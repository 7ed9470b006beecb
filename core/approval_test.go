package core

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/tools"
)

// recSandbox records what it wrapped; with deny, a sandboxed command fails
// as a denied write would.
type recSandbox struct {
	mu      sync.Mutex
	wrapped [][]string
	deny    bool
}

func (s *recSandbox) Available() error { return nil }
func (s *recSandbox) Wrap(p agent.SandboxPolicy, cwd string, argv []string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wrapped = append(s.wrapped, argv)
	if s.deny {
		return []string{"/bin/sh", "-c", "echo 'touch: cannot touch x: Read-only file system' >&2; exit 1"}, nil
	}
	return argv, nil
}
func (s *recSandbox) Denied(code int, out string) bool { return deniedHeuristic(code, out) }
func (s *recSandbox) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.wrapped)
}

func policy(p agent.ApprovalPolicy) *agent.ApprovalPolicy { return &p }
func sandboxMode(m agent.SandboxMode) *agent.SandboxPolicy {
	return &agent.SandboxPolicy{Mode: m}
}

func isApproval(ev agent.Event) bool {
	_, ok := ev.Msg.(agent.ExecApprovalRequest)
	return ok
}

// TestUntrustedDecisions: under untrusted, a command not known to be safe
// asks; each decision has Codex's outcome.
func TestUntrustedDecisions(t *testing.T) {
	const cmd = "touch approved_file.txt && echo created"
	rejected := `exec_command failed: CreateProcess { message: "Rejected(\"rejected by user\")" }`
	failed := `exec_command failed: CreateProcess { message: "Rejected(\"approval request failed\")" }`
	cases := []struct {
		decision   agent.Decision
		itemStatus agent.ItemStatus
		turn       agent.TurnStatus
		created    bool
		output     string // "" means a normal exec output
	}{
		{agent.Accept, agent.ItemStatusCompleted, agent.TurnStatusCompleted, true, ""},
		{agent.AcceptForSession, agent.ItemStatusCompleted, agent.TurnStatusCompleted, true, ""},
		{agent.Decline, agent.ItemStatusDeclined, agent.TurnStatusCompleted, false, rejected},
		{agent.RequestFailed, agent.ItemStatusFailed, agent.TurnStatusCompleted, false, failed},
		{agent.Cancel, agent.ItemStatusDeclined, agent.TurnStatusInterrupted, false, "-"},
	}
	for _, c := range cases {
		t.Run(string(c.decision), func(t *testing.T) {
			m := newFakeModel(
				callResponse("call_1", "exec_command", map[string]any{"cmd": cmd}),
				textResponse("msg_2", "done"),
			)
			h := newHarness(t, m, nil)
			th := h.start(agent.Overrides{Approval: policy(agent.ApprovalUntrusted)})
			h.submit(th, agent.UserInput{Input: text("touch it")})
			evs := until(t, th, isApproval)
			req := evs[len(evs)-1].Msg.(agent.ExecApprovalRequest)
			if req.CallID != "call_1" || req.Command != "/bin/bash -c '"+cmd+"'" || req.Cwd != h.dir ||
				strings.Join(req.ProposedAmendment, " ") != "touch approved_file.txt" || req.SandboxRetry {
				t.Fatalf("request %+v", req)
			}
			if len(req.Decisions) != 2 || req.Decisions[0] != agent.Accept || req.Decisions[1] != agent.Cancel {
				t.Fatalf("decisions %v", req.Decisions)
			}
			if len(req.Actions) != 1 || req.Actions[0].Type != "unknown" || req.Actions[0].Command != cmd {
				t.Fatalf("actions %+v", req.Actions)
			}
			st := msgs[agent.ItemStarted](evs)
			if it, ok := st[len(st)-1].Item.(*agent.CommandExecution); !ok || it.Source != "agent" || it.Status != agent.ItemStatusInProgress {
				t.Fatalf("item started before the approval %+v", st[len(st)-1].Item)
			}
			if _, err := th.Submit(t.Context(), agent.ExecDecision{CallID: "nope", Decision: agent.Accept}); err != agent.ErrUnknownCall {
				t.Fatalf("unknown call id: %v", err)
			}
			h.submit(th, agent.ExecDecision{CallID: "call_1", Decision: c.decision})
			evs = until(t, th, isTurnCompleted)
			done := evs[len(evs)-1].Msg.(agent.TurnCompleted)
			if done.Status != c.turn {
				t.Fatalf("turn %s, want %s: %s", done.Status, c.turn, describe(evs))
			}
			items := itemsCompleted[*agent.CommandExecution](evs)
			if len(items) != 1 || items[0].Status != c.itemStatus {
				t.Fatalf("items %s", describe(evs))
			}
			if c.itemStatus == agent.ItemStatusCompleted && (items[0].Source != "unifiedExecStartup" || *items[0].ExitCode != 0) {
				t.Fatalf("item %+v", items[0])
			}
			_, err := os.Stat(filepath.Join(h.dir, "approved_file.txt"))
			if (err == nil) != c.created {
				t.Fatalf("file created=%v, want %v", err == nil, c.created)
			}
			m.request(t)
			if c.output == "-" {
				select {
				case r := <-m.reqs:
					t.Fatalf("a request after cancel: %+v", r)
				default:
				}
				return
			}
			got := lastOutput(t, m.request(t), "call_1")
			if c.output != "" && got != c.output {
				t.Fatalf("model got %q, want %q", got, c.output)
			}
			if c.output == "" && !strings.Contains(got, "Process exited with code 0\n") {
				t.Fatalf("model got %q", got)
			}
		})
	}
}

func TestAcceptForSessionIsRemembered(t *testing.T) {
	const cmd = "touch a.txt"
	m := newFakeModel(
		callResponse("call_1", "exec_command", map[string]any{"cmd": cmd}),
		callResponse("call_2", "exec_command", map[string]any{"cmd": cmd}),
		textResponse("msg_3", "done"),
	)
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{Approval: policy(agent.ApprovalUntrusted)})
	h.submit(th, agent.UserInput{Input: text("go")})
	until(t, th, isApproval)
	h.submit(th, agent.ExecDecision{CallID: "call_1", Decision: agent.AcceptForSession})
	evs := until(t, th, isTurnCompleted)
	if n := len(msgs[agent.ExecApprovalRequest](evs)); n != 0 {
		t.Fatalf("asked again: %s", describe(evs))
	}
	if items := itemsCompleted[*agent.CommandExecution](evs); len(items) != 2 {
		t.Fatalf("items %s", describe(evs))
	}
}

func TestAcceptWithAmendmentAllowsPrefix(t *testing.T) {
	m := newFakeModel(
		callResponse("call_1", "exec_command", map[string]any{"cmd": "touch a.txt"}),
		callResponse("call_2", "exec_command", map[string]any{"cmd": "touch b.txt"}),
		textResponse("msg_3", "done"),
	)
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{Approval: policy(agent.ApprovalUntrusted)})
	h.submit(th, agent.UserInput{Input: text("go")})
	until(t, th, isApproval)
	h.submit(th, agent.ExecDecision{CallID: "call_1", Decision: agent.Accept, Amendment: []string{"touch"}})
	evs := until(t, th, isTurnCompleted)
	if n := len(msgs[agent.ExecApprovalRequest](evs)); n != 0 {
		t.Fatalf("asked again: %s", describe(evs))
	}
}

func TestAcceptWithProposedAmendment(t *testing.T) {
	m := newFakeModel(
		callResponse("call_1", "exec_command", map[string]any{"cmd": "touch a.txt"}),
		callResponse("call_2", "exec_command", map[string]any{"cmd": "touch a.txt b.txt"}),
		callResponse("call_3", "exec_command", map[string]any{"cmd": "mkdir d"}),
		textResponse("msg_4", "done"),
	)
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{Approval: policy(agent.ApprovalUntrusted)})
	h.submit(th, agent.UserInput{Input: text("go")})
	until(t, th, isApproval)
	h.submit(th, agent.ExecDecision{CallID: "call_1", Decision: agent.Accept, Amendment: []string{"touch", "a.txt"}})
	// "touch a.txt b.txt" starts with the amendment ["touch", "a.txt"]; mkdir does not.
	evs := until(t, th, isApproval)
	if req := evs[len(evs)-1].Msg.(agent.ExecApprovalRequest); req.CallID != "call_3" {
		t.Fatalf("asked for %s", req.CallID)
	}
	h.submit(th, agent.ExecDecision{CallID: "call_3", Decision: agent.Decline})
	until(t, th, isTurnCompleted)
}

// TestUntrustedAsksEvenForSafeCommands: Codex 0.169 asks under untrusted
// for every command, one that only reads included (observed side by side:
// differential session exec-untrusted), proposing its first command for
// good. codexd used to run known-safe commands without asking.
func TestUntrustedAsksEvenForSafeCommands(t *testing.T) {
	m := newFakeModel(
		callResponse("call_1", "exec_command", map[string]any{"cmd": "ls -la && cat a.txt"}),
		textResponse("msg_2", "done"),
	)
	h := newHarness(t, m, nil)
	writeFile(t, filepath.Join(h.dir, "a.txt"), "A\n")
	th := h.start(agent.Overrides{Approval: policy(agent.ApprovalUntrusted)})
	h.submit(th, agent.UserInput{Input: text("go")})
	evs := until(t, th, func(ev agent.Event) bool { return isApproval(ev) || isTurnCompleted(ev) })
	req, ok := evs[len(evs)-1].Msg.(agent.ExecApprovalRequest)
	if !ok || strings.Join(req.ProposedAmendment, " ") != "ls -la" {
		t.Fatalf("did not ask as Codex does: %s", describe(evs))
	}
	h.submit(th, agent.ExecDecision{CallID: "call_1", Decision: agent.Accept})
	evs = until(t, th, isTurnCompleted)
	items := itemsCompleted[*agent.CommandExecution](evs)
	if len(items) != 1 || items[0].Status != agent.ItemStatusCompleted || len(items[0].Actions) != 2 || items[0].Actions[0].Type != "listFiles" || items[0].Actions[1].Type != "read" {
		t.Fatalf("items %s", describe(evs))
	}
}

func TestOnRequestEscalation(t *testing.T) {
	for _, d := range []agent.Decision{agent.Accept, agent.Decline} {
		t.Run(string(d), func(t *testing.T) {
			sb := &recSandbox{}
			m := newFakeModel(
				callResponse("call_1", "exec_command", map[string]any{"cmd": "echo sandboxed"}),
				callResponse("call_2", "exec_command", map[string]any{
					"cmd": "touch outside", "sandbox_permissions": "require_escalated",
					"justification": "Do you want to touch a file outside the sandbox?",
				}),
				textResponse("msg_3", "done"),
			)
			h := newHarness(t, m, func(c *Config) { c.Sandbox = sb })
			th := h.start(agent.Overrides{Approval: policy(agent.ApprovalOnRequest), Sandbox: sandboxMode(agent.SandboxWorkspaceWrite)})
			h.submit(th, agent.UserInput{Input: text("go")})
			evs := until(t, th, isApproval)
			req := evs[len(evs)-1].Msg.(agent.ExecApprovalRequest)
			if req.CallID != "call_2" || req.Reason != "Do you want to touch a file outside the sandbox?" {
				t.Fatalf("request %+v", req)
			}
			if sb.count() != 1 {
				t.Fatalf("the plain command was not sandboxed: %v", sb.wrapped)
			}
			h.submit(th, agent.ExecDecision{CallID: "call_2", Decision: d})
			until(t, th, isTurnCompleted)
			if sb.count() != 1 {
				t.Fatalf("the escalated command was sandboxed: %v", sb.wrapped)
			}
			_, err := os.Stat(filepath.Join(h.dir, "outside"))
			if (err == nil) != (d == agent.Accept) {
				t.Fatalf("escalated command ran=%v", err == nil)
			}
		})
	}
}

func TestEscalationRefusedUnlessOnRequest(t *testing.T) {
	for _, p := range []agent.ApprovalPolicy{agent.ApprovalNever, agent.ApprovalUntrusted, agent.ApprovalOnFailure} {
		t.Run(string(p), func(t *testing.T) {
			m := newFakeModel(
				callResponse("call_1", "exec_command", map[string]any{"cmd": "touch x", "sandbox_permissions": "require_escalated"}),
				textResponse("msg_2", "done"),
			)
			h := newHarness(t, m, nil)
			th := h.start(agent.Overrides{Approval: policy(p)})
			h.submit(th, agent.UserInput{Input: text("go")})
			evs := until(t, th, isTurnCompleted)
			if len(msgs[agent.ExecApprovalRequest](evs)) != 0 {
				t.Fatal("asked")
			}
			m.request(t)
			got := lastOutput(t, m.request(t), "call_1")
			if !strings.HasPrefix(got, "approval policy is ") || !strings.Contains(got, "you cannot ask for escalated permissions") {
				t.Fatalf("model got %q", got)
			}
		})
	}
}

func TestNeverRefusesDangerousAndRunsTheRest(t *testing.T) {
	m := newFakeModel(
		callResponse("call_1", "exec_command", map[string]any{"cmd": "rm -rf build"}),
		callResponse("call_2", "exec_command", map[string]any{"cmd": "touch made"}),
		textResponse("msg_3", "done"),
	)
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{Approval: policy(agent.ApprovalNever)})
	h.submit(th, agent.UserInput{Input: text("go")})
	evs := until(t, th, isTurnCompleted)
	if len(msgs[agent.ExecApprovalRequest](evs)) != 0 {
		t.Fatal("asked under never")
	}
	m.request(t)
	// Codex 0.169's words for it (observed side by side).
	if got := lastOutput(t, m.request(t), "call_1"); got != tools.Rejected("exec_command", "`/bin/bash -c 'rm -rf build'` rejected: rm -f style commands are not permitted. Use a safer approach") {
		t.Fatalf("model got %q", got)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "made")); err != nil {
		t.Fatal("the harmless command did not run")
	}
}

func TestOnFailureOffersUnsandboxedRetry(t *testing.T) {
	for _, d := range []agent.Decision{agent.Accept, agent.Decline} {
		t.Run(string(d), func(t *testing.T) {
			sb := &recSandbox{deny: true}
			m := newFakeModel(
				callResponse("call_1", "exec_command", map[string]any{"cmd": "touch x && echo made"}),
				textResponse("msg_2", "done"),
			)
			h := newHarness(t, m, func(c *Config) { c.Sandbox = sb })
			th := h.start(agent.Overrides{Approval: policy(agent.ApprovalOnFailure), Sandbox: sandboxMode(agent.SandboxWorkspaceWrite)})
			h.submit(th, agent.UserInput{Input: text("go")})
			evs := until(t, th, isApproval)
			req := evs[len(evs)-1].Msg.(agent.ExecApprovalRequest)
			if !req.SandboxRetry || req.CallID != "call_1" {
				t.Fatalf("request %+v", req)
			}
			h.submit(th, agent.ExecDecision{CallID: "call_1", Decision: d})
			evs = until(t, th, isTurnCompleted)
			items := itemsCompleted[*agent.CommandExecution](evs)
			m.request(t)
			got := lastOutput(t, m.request(t), "call_1")
			if d == agent.Accept {
				if len(items) != 1 || items[0].Status != agent.ItemStatusCompleted || !strings.Contains(got, "made") {
					t.Fatalf("retry: items %s; model got %q", describe(evs), got)
				}
			} else {
				// As Codex: a declined retry is a declined command, and the
				// model reads "rejected by user", not the sandboxed output.
				if len(items) != 1 || items[0].Status != agent.ItemStatusDeclined || !strings.Contains(got, "rejected by user") || strings.Contains(got, "Read-only file system") {
					t.Fatalf("no retry: items %s; model got %q", describe(evs), got)
				}
			}
		})
	}
}

func TestSandboxUnavailableRefusesConfinedCommands(t *testing.T) {
	m := newFakeModel(
		callResponse("call_1", "exec_command", map[string]any{"cmd": "touch x"}),
		textResponse("msg_2", "done"),
	)
	h := newHarness(t, m, func(c *Config) { c.Sandbox = nil })
	th := h.start(agent.Overrides{Sandbox: sandboxMode(agent.SandboxWorkspaceWrite)})
	h.submit(th, agent.UserInput{Input: text("go")})
	until(t, th, isTurnCompleted)
	m.request(t)
	got := lastOutput(t, m.request(t), "call_1")
	if !strings.Contains(got, "sandbox unavailable") || !strings.Contains(got, "workspace-write") {
		t.Fatalf("model got %q", got)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "x")); err == nil {
		t.Fatal("the command ran unconfined")
	}
}

// TestDecisionsUnderEachAskingPolicy: every decision under on-request (an
// escalation) and on-failure (a sandbox retry); untrusted is
// TestUntrustedDecisions, and never never asks.
func TestDecisionsUnderEachAskingPolicy(t *testing.T) {
	type outcome struct {
		item agent.ItemStatus
		turn agent.TurnStatus
		ran  bool // the unsandboxed command ran
	}
	policies := []struct {
		policy agent.ApprovalPolicy
		args   map[string]any
		deny   bool
		want   map[agent.Decision]outcome
	}{
		{agent.ApprovalOnRequest, map[string]any{"cmd": "touch ran", "sandbox_permissions": "require_escalated", "justification": "why"}, false,
			map[agent.Decision]outcome{
				agent.Accept:           {agent.ItemStatusCompleted, agent.TurnStatusCompleted, true},
				agent.AcceptForSession: {agent.ItemStatusCompleted, agent.TurnStatusCompleted, true},
				agent.Decline:          {agent.ItemStatusDeclined, agent.TurnStatusCompleted, false},
				agent.Cancel:           {agent.ItemStatusDeclined, agent.TurnStatusInterrupted, false},
				agent.RequestFailed:    {agent.ItemStatusFailed, agent.TurnStatusCompleted, false},
			}},
		{agent.ApprovalOnFailure, map[string]any{"cmd": "touch ran"}, true,
			map[agent.Decision]outcome{
				agent.Accept:           {agent.ItemStatusCompleted, agent.TurnStatusCompleted, true},
				agent.AcceptForSession: {agent.ItemStatusCompleted, agent.TurnStatusCompleted, true},
				agent.Decline:          {agent.ItemStatusDeclined, agent.TurnStatusCompleted, false},
				agent.Cancel:           {agent.ItemStatusDeclined, agent.TurnStatusInterrupted, false},
				agent.RequestFailed:    {agent.ItemStatusFailed, agent.TurnStatusCompleted, false},
			}},
	}
	for _, p := range policies {
		for _, d := range []agent.Decision{agent.Accept, agent.AcceptForSession, agent.Decline, agent.Cancel, agent.RequestFailed} {
			want := p.want[d]
			t.Run(string(p.policy)+"/"+string(d), func(t *testing.T) {
				sb := &recSandbox{deny: p.deny}
				m := newFakeModel(callResponse("call_1", "exec_command", p.args), textResponse("msg_2", "done"))
				h := newHarness(t, m, func(c *Config) { c.Sandbox = sb })
				th := h.start(agent.Overrides{Approval: policy(p.policy), Sandbox: sandboxMode(agent.SandboxWorkspaceWrite)})
				h.submit(th, agent.UserInput{Input: text("go")})
				until(t, th, isApproval)
				h.submit(th, agent.ExecDecision{CallID: "call_1", Decision: d})
				evs := until(t, th, isTurnCompleted)
				if got := evs[len(evs)-1].Msg.(agent.TurnCompleted).Status; got != want.turn {
					t.Fatalf("turn %s: %s", got, describe(evs))
				}
				items := itemsCompleted[*agent.CommandExecution](evs)
				if want.item == "" {
					if len(items) != 0 {
						t.Fatalf("items %s", describe(evs))
					}
				} else if len(items) != 1 || items[0].Status != want.item {
					t.Fatalf("items %s", describe(evs))
				}
				_, err := os.Stat(filepath.Join(h.dir, "ran"))
				if (err == nil) != want.ran {
					t.Fatalf("ran=%v", err == nil)
				}
			})
		}
	}
}

// TestUntrustedRetriesWhatTheSandboxDenied: like on-failure, untrusted
// offers to run a command the sandbox denied without it (Codex's
// wants_no_sandbox_approval). A command the user already approved for this
// call is retried without asking twice (should_bypass_approval).
func TestUntrustedRetriesWhatTheSandboxDenied(t *testing.T) {
	t.Run("approved", func(t *testing.T) {
		sb := &recSandbox{deny: true}
		m := newFakeModel(
			callResponse("call_1", "exec_command", map[string]any{"cmd": "touch x && echo made"}),
			textResponse("msg_2", "done"),
		)
		h := newHarness(t, m, func(c *Config) { c.Sandbox = sb })
		th := h.start(agent.Overrides{Approval: policy(agent.ApprovalUntrusted), Sandbox: sandboxMode(agent.SandboxWorkspaceWrite)})
		h.submit(th, agent.UserInput{Input: text("go")})
		evs := until(t, th, isApproval)
		if req := evs[len(evs)-1].Msg.(agent.ExecApprovalRequest); req.SandboxRetry {
			t.Fatalf("first request %+v", req)
		}
		h.submit(th, agent.ExecDecision{CallID: "call_1", Decision: agent.Accept})
		evs = until(t, th, isTurnCompleted)
		if n := len(msgs[agent.ExecApprovalRequest](evs)); n != 0 {
			t.Fatalf("asked again after the approval: %s", describe(evs))
		}
		items := itemsCompleted[*agent.CommandExecution](evs)
		m.request(t)
		got := lastOutput(t, m.request(t), "call_1")
		if sb.count() != 1 || len(items) != 1 || items[0].Status != agent.ItemStatusCompleted || !strings.Contains(got, "made") {
			t.Fatalf("sandboxed runs %d; items %s; model got %q", sb.count(), describe(evs), got)
		}
		if _, err := os.Stat(filepath.Join(h.dir, "x")); err != nil {
			t.Fatal("the retry did not run:", err)
		}
	})
	t.Run("read only", func(t *testing.T) {
		// ls asks first too (as in Codex 0.169); approved, its denied run
		// is retried without asking again.
		sb := &recSandbox{deny: true}
		m := newFakeModel(
			callResponse("call_1", "exec_command", map[string]any{"cmd": "ls"}),
			textResponse("msg_2", "done"),
		)
		h := newHarness(t, m, func(c *Config) { c.Sandbox = sb })
		th := h.start(agent.Overrides{Approval: policy(agent.ApprovalUntrusted), Sandbox: sandboxMode(agent.SandboxWorkspaceWrite)})
		h.submit(th, agent.UserInput{Input: text("go")})
		evs := until(t, th, isApproval)
		if req := evs[len(evs)-1].Msg.(agent.ExecApprovalRequest); req.SandboxRetry || sb.count() != 0 {
			t.Fatalf("request %+v after %d sandboxed runs", req, sb.count())
		}
		h.submit(th, agent.ExecDecision{CallID: "call_1", Decision: agent.Accept})
		evs = until(t, th, isTurnCompleted)
		if n := len(msgs[agent.ExecApprovalRequest](evs)); n != 0 || sb.count() != 1 {
			t.Fatalf("asked %d more times after %d sandboxed runs: %s", n, sb.count(), describe(evs))
		}
		if items := itemsCompleted[*agent.CommandExecution](evs); len(items) != 1 || items[0].Status != agent.ItemStatusCompleted {
			t.Fatalf("items %s", describe(evs))
		}
	})
}
