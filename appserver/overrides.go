package appserver

import (
	"fmt"
	"slices"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
)

// overrideReq gathers the settings a request may override, whichever
// method carries them.
type overrideReq struct {
	model, provider, cwd, reviewer   *string
	approval                         *appproto.AskForApproval
	sandboxMode                      *string
	sandboxPolicy                    *appproto.SandboxPolicy
	permissions                      *string
	personality, serviceTier, effort *string
	summary                          *string
	collab                           *appproto.CollaborationMode
}

// builtinProfiles are the named permission profiles, as Codex lists them.
var builtinProfiles = []string{":read-only", ":workspace", ":danger-full-access"}

func profileSandbox(id string) (agent.SandboxPolicy, bool) {
	switch id {
	case ":read-only":
		return agent.SandboxPolicy{Mode: agent.SandboxReadOnly}, true
	case ":workspace":
		return agent.SandboxPolicy{Mode: agent.SandboxWorkspaceWrite}, true
	case ":danger-full-access":
		return agent.SandboxPolicy{Mode: agent.SandboxDangerFullAccess}, true
	}
	return agent.SandboxPolicy{}, false
}

// overrides turns r into the core's overrides, refusing what the managed
// requirements do not allow.
func (s *Server) overrides(r overrideReq) (agent.Overrides, error) {
	var o agent.Overrides
	cwd, err := s.clientCwd(r.cwd)
	if err != nil {
		return o, err
	}
	o.Model, o.ModelProvider, o.Cwd, o.ApprovalsReviewer = r.model, r.provider, cwd, r.reviewer
	o.Personality, o.ServiceTier, o.ReasoningEffort, o.ReasoningSummary = r.personality, r.serviceTier, r.effort, r.summary
	req := s.cfg.Requirements
	if r.approval != nil && r.approval.IsGranular() {
		g, err := granularFlags(r.approval.Granular)
		if err != nil {
			return o, invalidRequest("Invalid request: " + err.Error())
		}
		o.Approval, o.Granular = ptr(agent.ApprovalGranular), g
	}
	if r.approval != nil && !r.approval.IsGranular() {
		if req != nil && len(req.AllowedApprovalPolicies) > 0 && !slices.Contains(req.AllowedApprovalPolicies, r.approval.Policy) {
			return o, invalidRequest(fmt.Sprintf("approval policy `%s` is not allowed by the managed requirements", r.approval.Policy))
		}
		o.Approval = ptr(agent.ApprovalPolicy(r.approval.Policy))
	}
	mode := ""
	switch {
	case r.permissions != nil:
		sb, ok := profileSandbox(*r.permissions)
		if !ok {
			return o, invalidRequest(fmt.Sprintf("unknown permission profile `%s`", *r.permissions))
		}
		o.Sandbox, o.PermissionProfile, mode = &sb, r.permissions, string(sb.Mode)
	case r.sandboxMode != nil:
		switch *r.sandboxMode {
		case appproto.SandboxModeReadOnly, appproto.SandboxModeWorkspaceWrite, appproto.SandboxModeDangerFullAccess:
		default:
			// serde's text for the enum Codex decodes the member into.
			return o, invalidRequest(fmt.Sprintf("Invalid request: unknown variant `%s`, expected one of `read-only`, `workspace-write`, `danger-full-access`", *r.sandboxMode))
		}
		o.Sandbox, mode = &agent.SandboxPolicy{Mode: agent.SandboxMode(*r.sandboxMode)}, *r.sandboxMode
	case r.sandboxPolicy != nil:
		sb := agentSandbox(*r.sandboxPolicy)
		o.Sandbox, mode = &sb, string(sb.Mode)
	}
	if mode != "" && req != nil && len(req.AllowedSandboxModes) > 0 && !slices.Contains(req.AllowedSandboxModes, mode) {
		return o, invalidRequest(fmt.Sprintf("sandbox mode `%s` is not allowed by the managed requirements", mode))
	}
	if r.collab != nil {
		o.CollaborationMode = &r.collab.Mode
		if r.collab.Settings.Model != "" && o.Model == nil {
			o.Model = &r.collab.Settings.Model
		}
		if r.collab.Settings.ReasoningEffort != nil && o.ReasoningEffort == nil {
			o.ReasoningEffort = r.collab.Settings.ReasoningEffort
		}
	}
	return o, nil
}

// configModel fills the model, provider and effort r leaves unset with
// the configuration's (what config writes changed since the server
// started, else what it started with). Codex 0.169 takes these three
// from the configuration for every thread/fork, and for a thread/resume
// that names a model or a provider; only a resume that names neither
// restores the ones the thread last recorded.
func (s *Server) configModel(r *overrideReq) {
	var w overrideReq
	s.writtenDefaults(&w)
	d := s.core.Config().Settings
	fill := func(dst **string, written *string, def string, empty bool) {
		switch {
		case *dst != nil:
		case written != nil:
			*dst = written
		case def != "" || empty:
			*dst = &def
		}
	}
	fill(&r.model, w.model, d.Model, false)
	fill(&r.provider, w.provider, d.ModelProvider, false)
	fill(&r.effort, w.effort, d.ReasoningEffort, true) // "" is the model's default
}
