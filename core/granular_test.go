package core

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/tools"
)

// TestGranularExecAndPatchDecisions: under a granular approval policy each
// command and patch is run, put to the user or refused as Codex 0.169
// decides, observed side by side (differential session exec-granular):
//
//   - sandbox_approval allows what on-request asks for: an escalation (run
//     unasked with full access), and a patch outside the writable roots;
//     and, as on-failure does, a retry without the sandbox of a command it
//     denied. Without it, an escalation is refused before anything runs
//     (approval policy is Granular(...)), a patch outside the roots is
//     refused with the read-only or outside-the-project reason, and a
//     denial goes to the model;
//   - rules allows the prompts of a prompt rule; without it the command is
//     refused with Codex's reason;
//   - a possibly dangerous command asks whatever the flags;
//   - skill_approval, request_permissions and mcp_elicitations change none
//     of these.
func TestGranularExecAndPatchDecisions(t *testing.T) {
	escalate := map[string]any{"cmd": "touch escalated", "sandbox_permissions": "require_escalated", "justification": "needs the host"}
	exec := func(cmd string) map[string]any { return map[string]any{"cmd": cmd} }
	type want struct {
		ask    string // "exec", "retry" or "patch": asks (the test declines); "" runs or is refused
		reason string // with ask: the request's reason
		output string // without ask: what the model reads, or the start of it ("" = the command ran)
		has    string // without ask: what the model's output holds
		amend  string // with ask: the proposed amendment, words joined by spaces
	}
	asked := func(kind, reason string) want { return want{ask: kind, reason: reason} }
	refusedExec := func(reason string) want { return want{output: tools.Rejected(tools.ExecCommand, reason)} }
	const (
		rulesReason   = "approval required by policy rule, but AskForApproval::Granular.rules is false"
		outsideReason = "patch rejected: writing outside of the project; rejected by user approval settings"
		readOnlyText  = "patch rejected: writing is blocked by read-only sandbox; rejected by user approval settings"
	)
	type scenario struct {
		name    string
		args    map[string]any // exec_command's, or nil for the patch
		patch   string         // the patch's file, relative to the work dir or absolute ("$OUT" is outside every root)
		sandbox agent.SandboxMode
		deny    bool                                // the sandbox denies the command
		want    func(g agent.GranularApproval) want // by the flags
	}
	runs := want{}
	scenarios := []scenario{
		{"escalation", escalate, "", agent.SandboxWorkspaceWrite, false, func(g agent.GranularApproval) want {
			if g.SandboxApproval {
				return want{ask: "exec", reason: "needs the host", amend: "touch escalated"}
			}
			return want{output: tools.EscalationRefused(granularRustName(g))}
		}},
		{"escalation with full access", escalate, "", agent.SandboxDangerFullAccess, false, func(g agent.GranularApproval) want {
			if g.SandboxApproval {
				return runs
			}
			return want{output: tools.EscalationRefused(granularRustName(g))}
		}},
		// Codex proposes the command for good only with sandbox_approval.
		{"dangerous", exec("rm -rf gone"), "", agent.SandboxWorkspaceWrite, false, func(g agent.GranularApproval) want {
			if g.SandboxApproval {
				return want{ask: "exec", amend: "rm -rf gone"}
			}
			return asked("exec", "")
		}},
		{"dangerous with full access", exec("rm -rf gone"), "", agent.SandboxDangerFullAccess, false, func(g agent.GranularApproval) want {
			if g.SandboxApproval {
				return want{ask: "exec", amend: "rm -rf gone"}
			}
			return asked("exec", "")
		}},
		{"prompt rule", exec("touch asked-file"), "", agent.SandboxWorkspaceWrite, false, func(g agent.GranularApproval) want {
			if g.Rules {
				return asked("exec", "`/bin/bash -c 'touch asked-file'` requires approval by policy")
			}
			return refusedExec(rulesReason)
		}},
		{"prompt rule with full access", exec("touch asked-file"), "", agent.SandboxDangerFullAccess, false, func(g agent.GranularApproval) want {
			if g.Rules {
				return asked("exec", "`/bin/bash -c 'touch asked-file'` requires approval by policy")
			}
			return refusedExec(rulesReason)
		}},
		{"sandbox denial", exec("touch denied"), "", agent.SandboxWorkspaceWrite, true, func(g agent.GranularApproval) want {
			if g.SandboxApproval {
				return want{ask: "retry", reason: "command failed; retry without sandbox?", amend: "touch denied"}
			}
			return want{output: "Chunk ID: ", has: "Read-only file system"}
		}},
		{"plain command", exec("touch plain"), "", agent.SandboxWorkspaceWrite, false, func(agent.GranularApproval) want { return runs }},
		{"patch inside", nil, "inside.txt", agent.SandboxWorkspaceWrite, false, func(agent.GranularApproval) want {
			return want{output: "Exit code: 0\n"}
		}},
		{"patch outside", nil, "$OUT", agent.SandboxWorkspaceWrite, false, func(g agent.GranularApproval) want {
			if g.SandboxApproval {
				return asked("patch", "")
			}
			return want{output: outsideReason}
		}},
		{"patch under read-only", nil, "inside.txt", agent.SandboxReadOnly, false, func(g agent.GranularApproval) want {
			if g.SandboxApproval {
				return asked("patch", "")
			}
			return want{output: readOnlyText}
		}},
	}
	others := agent.GranularApproval{SkillApproval: true, RequestPermissions: true, MCPElicitations: true}
	var flags []agent.GranularApproval
	for _, base := range []agent.GranularApproval{{}, others} {
		for _, s := range []bool{false, true} {
			for _, r := range []bool{false, true} {
				g := base
				g.SandboxApproval, g.Rules = s, r
				flags = append(flags, g)
			}
		}
	}
	for _, g := range flags {
		for _, sc := range scenarios {
			name := fmt.Sprintf("sandbox_approval=%v,rules=%v,others=%v/%s", g.SandboxApproval, g.Rules, g.SkillApproval, sc.name)
			t.Run(name, func(t *testing.T) {
				w := sc.want(g)
				outside := t.TempDir()
				args := sc.args
				if args == nil {
					path := strings.ReplaceAll(sc.patch, "$OUT", filepath.Join(outside, "out.txt"))
					args = map[string]any{"input": "*** Begin Patch\n*** Add File: " + path + "\n+x\n*** End Patch"}
				}
				tool := "exec_command"
				if sc.args == nil {
					tool = "apply_patch"
				}
				m := newFakeModel(callResponse("call_1", tool, args), textResponse("msg_2", "done"))
				sb := &recSandbox{deny: sc.deny}
				h := newHarness(t, m, func(c *Config) {
					c.Sandbox = sb
					if err := os.MkdirAll(filepath.Join(c.CodexHome, "rules"), 0o755); err != nil {
						t.Fatal(err)
					}
					writeFile(t, filepath.Join(c.CodexHome, "rules", "granular.rules"),
						"prefix_rule(pattern=[\"touch\", \"asked-file\"], decision=\"prompt\")\n")
				})
				flags := g
				th := h.start(agent.Overrides{
					Approval: policy(agent.ApprovalGranular), Granular: &flags,
					Sandbox: &agent.SandboxPolicy{Mode: sc.sandbox, ExcludeSlashTmp: true, ExcludeTmpdirEnvVar: true},
				})
				h.submit(th, agent.UserInput{Input: text("go")})
				evs := until(t, th, func(ev agent.Event) bool {
					switch ev.Msg.(type) {
					case agent.ExecApprovalRequest, agent.PatchApprovalRequest, agent.TurnCompleted:
						return true
					}
					return false
				})
				switch req := evs[len(evs)-1].Msg.(type) {
				case agent.ExecApprovalRequest:
					kind := "exec"
					if req.SandboxRetry {
						kind = "retry"
					}
					if w.ask != kind || req.Reason != w.reason || strings.Join(req.ProposedAmendment, " ") != w.amend {
						t.Fatalf("asked %s (%q, amendment %q), want %+v", kind, req.Reason, req.ProposedAmendment, w)
					}
					// The item starts with the question, as Codex's
					// does: a sandboxed run that was denied shows nothing.
					var sources []string
					for _, st := range msgs[agent.ItemStarted](evs) {
						if c, ok := st.Item.(*agent.CommandExecution); ok {
							sources = append(sources, c.Source)
						}
					}
					if len(sources) != 1 || sources[0] != "agent" {
						t.Fatalf("command items started before the question: %v", sources)
					}
					h.submit(th, agent.ExecDecision{CallID: "call_1", Decision: agent.Decline})
				case agent.PatchApprovalRequest:
					if w.ask != "patch" || req.Reason != w.reason {
						t.Fatalf("asked for the patch (%q), want %+v", req.Reason, w)
					}
					h.submit(th, agent.PatchDecision{CallID: "call_1", Decision: agent.Decline})
				default:
					if w.ask != "" {
						t.Fatalf("did not ask, want %+v: %s", w, describe(evs))
					}
					m.request(t)
					got := lastOutput(t, m.request(t), "call_1")
					switch {
					case w.output == "" && !strings.Contains(got, "Process exited with code 0\n"):
						t.Fatalf("the command did not run: the model got %q", got)
					case w.output != "" && !strings.HasPrefix(got, w.output), !strings.Contains(got, w.has):
						t.Fatalf("the model got %q, want %+v", got, w)
					}
					if _, err := os.Stat(filepath.Join(outside, "out.txt")); err == nil {
						t.Fatal("the patch wrote outside the writable roots")
					}
					// A patch refused without asking shows no file change.
					for _, st := range msgs[agent.ItemStarted](evs) {
						if _, ok := st.Item.(*agent.FileChange); ok && strings.HasPrefix(w.output, "patch rejected") {
							t.Fatalf("a refused patch started an item: %s", describe(evs))
						}
					}
					return
				}
				until(t, th, isTurnCompleted)
				for _, f := range []string{"escalated", "asked-file", "inside.txt"} {
					if _, err := os.Stat(filepath.Join(h.dir, f)); err == nil {
						t.Fatalf("%s was written after a decline", f)
					}
				}
			})
		}
	}
}

// TestGranularRustName: the policy as Codex's messages print it, its
// flags in the order of Codex's GranularApprovalConfig.
func TestGranularRustName(t *testing.T) {
	got := granularRustName(agent.GranularApproval{SandboxApproval: true, MCPElicitations: true})
	want := "Granular(GranularApprovalConfig { sandbox_approval: true, rules: false, skill_approval: false, request_permissions: false, mcp_elicitations: true })"
	if got != want {
		t.Fatalf("%s\nwant %s", got, want)
	}
}

// TestNeverRefusesPatchesWithCodexsReasons: under never, a patch the
// sandbox would not let a command write is refused, with Codex's reason:
// read-only blocks every write; otherwise the patch writes outside the
// project. It used to say "outside of the project" under read-only too.
func TestNeverRefusesPatchesWithCodexsReasons(t *testing.T) {
	for _, c := range []struct {
		mode agent.SandboxMode
		want string
	}{
		{agent.SandboxReadOnly, "patch rejected: writing is blocked by read-only sandbox; rejected by user approval settings"},
		{agent.SandboxWorkspaceWrite, "patch rejected: writing outside of the project; rejected by user approval settings"},
	} {
		t.Run(string(c.mode), func(t *testing.T) {
			path := "in.txt"
			if c.mode == agent.SandboxWorkspaceWrite {
				path = filepath.Join(t.TempDir(), "out.txt")
			}
			m := newFakeModel(callResponse("call_1", "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: " + path + "\n+x\n*** End Patch"}), textResponse("msg_2", "done"))
			h := newHarness(t, m, nil)
			th := h.start(agent.Overrides{Approval: policy(agent.ApprovalNever), Sandbox: &agent.SandboxPolicy{Mode: c.mode, ExcludeSlashTmp: true, ExcludeTmpdirEnvVar: true}})
			h.submit(th, agent.UserInput{Input: text("patch")})
			evs := until(t, th, isTurnCompleted)
			if fc := itemsCompleted[*agent.FileChange](evs); len(fc) != 0 {
				t.Fatalf("a refused patch has a file change: %s", describe(evs))
			}
			m.request(t)
			if got := lastOutput(t, m.request(t), "call_1"); got != c.want {
				t.Fatalf("the model got %q, want %q", got, c.want)
			}
		})
	}
}

// TestGranularPermissionsText: the model is told what a granular policy
// lets it ask for: escalation as under on-request only with
// sandbox_approval; without rules, that a rule's question is refused.
// Before, every granular policy got on-request's text.
func TestGranularPermissionsText(t *testing.T) {
	for _, c := range []struct {
		g                    agent.GranularApproval
		escalation, refusals bool
	}{
		{agent.GranularApproval{SandboxApproval: true, Rules: true}, true, false},
		{agent.GranularApproval{SandboxApproval: true}, true, true},
		{agent.GranularApproval{Rules: true}, false, false},
		{agent.GranularApproval{}, false, true},
	} {
		g := c.g
		text := permissionsText(agent.Settings{Approval: agent.ApprovalGranular, Granular: &g, Sandbox: agent.SandboxPolicy{Mode: agent.SandboxWorkspaceWrite}}, false)
		if got := strings.Contains(text, escalationText); got != c.escalation {
			t.Errorf("%+v: escalation text %v, want %v:\n%s", g, got, c.escalation, text)
		}
		if got := strings.Contains(text, "Never set `sandbox_permissions`"); got == c.escalation {
			t.Errorf("%+v: says never to escalate %v:\n%s", g, got, text)
		}
		if got := strings.Contains(text, "a rule says to ask about is refused"); got != c.refusals {
			t.Errorf("%+v: rule refusals %v, want %v:\n%s", g, got, c.refusals, text)
		}
	}
}
