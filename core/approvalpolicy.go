package core

import (
	"fmt"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/safety"
	"github.com/codexd/codexd/core/tools"
)

// What the approval policy lets a command or a patch ask for, beyond
// safety.Assess's decision.

// retriesUnsandboxed reports whether a command the sandbox denied may run
// again without it, after an approval: under on-failure, untrusted and a
// granular policy with sandbox_approval, as Codex's
// wants_no_sandbox_approval says; never and on-request hand the denial to
// the model.
func retriesUnsandboxed(s agent.Settings) bool {
	switch s.Approval {
	case agent.ApprovalOnFailure, agent.ApprovalUntrusted:
		return true
	case agent.ApprovalGranular:
		return granularFlags(s).SandboxApproval
	}
	return false
}

// Under a granular policy (Codex 0.169, observed side by side):
// sandbox_approval lets an escalation be asked for (as under on-request),
// a patch outside the writable roots, and a retry without the sandbox of a
// command it denied (as under on-failure); rules lets a prompt rule ask.
// A possibly dangerous command asks whatever the flags, as under
// on-request. skill_approval, request_permissions and mcp_elicitations
// are about other prompts (mcp_elicitation.go).

// granularFlags are the flags of s's granular policy (none when it has
// none).
func granularFlags(s agent.Settings) agent.GranularApproval {
	if s.Granular == nil {
		return agent.GranularApproval{}
	}
	return *s.Granular
}

// escalationAllowed reports whether a command may ask to run outside the
// sandbox (sandbox_permissions = "require_escalated"): under on-request,
// and under a granular policy with sandbox_approval; any other policy
// refuses it before anything runs.
func escalationAllowed(s agent.Settings) bool {
	return s.Approval == agent.ApprovalOnRequest ||
		s.Approval == agent.ApprovalGranular && granularFlags(s).SandboxApproval
}

// rulePromptRefused is Codex's reason for refusing, without asking, a
// command a prompt rule asks about ("" when the user may be asked).
func rulePromptRefused(s agent.Settings) string {
	switch {
	case s.Approval == agent.ApprovalNever:
		return tools.ReasonNeverAsk
	case s.Approval == agent.ApprovalGranular && !granularFlags(s).Rules:
		return tools.ReasonGranularRules
	}
	return ""
}

// rustPolicyName is s's approval policy as Codex's messages print it.
func rustPolicyName(s agent.Settings) string {
	if s.Approval == agent.ApprovalGranular {
		return granularRustName(granularFlags(s))
	}
	return safety.Policy(s.Approval).RustName()
}

// granularRustName is a granular policy as Codex's messages print it
// (AskForApproval's Debug form, the flags in GranularApprovalConfig's order).
func granularRustName(g agent.GranularApproval) string {
	return fmt.Sprintf("Granular(GranularApprovalConfig { sandbox_approval: %t, rules: %t, skill_approval: %t, request_permissions: %t, mcp_elicitations: %t })",
		g.SandboxApproval, g.Rules, g.SkillApproval, g.RequestPermissions, g.MCPElicitations)
}
