package appserver

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/auth"
	"github.com/codexd/codexd/skills"
)

func (s *Server) modelList(ctx context.Context, c *call, p appproto.ModelListParams) (appproto.ModelListResponse, error) {
	models, err := s.core.Models(ctx)
	if err != nil {
		return appproto.ModelListResponse{}, coreError(err)
	}
	var out []appproto.Model
	for _, m := range models {
		if m.Hidden && !deref(p.IncludeHidden) {
			continue
		}
		out = append(out, wireModel(m))
	}
	start, end, next, err := page(len(out), p.Cursor, p.Limit)
	if err != nil {
		return appproto.ModelListResponse{}, err
	}
	return appproto.ModelListResponse{Data: append([]appproto.Model{}, out[start:end]...), NextCursor: next}, nil
}

var effortDescriptions = map[string]string{
	"none":    "No reasoning",
	"minimal": "Fastest responses with minimal reasoning",
	"low":     "Fast responses with lighter reasoning",
	"medium":  "Balances speed and reasoning depth for everyday tasks",
	"high":    "Greater reasoning depth for complex problems",
	"xhigh":   "Extra high reasoning depth for complex problems",
	"max":     "The deepest reasoning, for the hardest problems",
	"ultra":   "The deepest reasoning, delegating parts of the task on its own",
}

// wireModel is a model/list entry, as Codex 0.169 reports its catalog's
// models; the prose Codex carries (model and service-tier descriptions,
// migration copy, availability notices) is left empty (README,
// [model-list-copy]).
func wireModel(m agent.ModelInfo) appproto.Model {
	efforts := make([]appproto.ReasoningEffortOption, 0, len(m.SupportedEfforts))
	for _, e := range m.SupportedEfforts {
		efforts = append(efforts, appproto.ReasoningEffortOption{ReasoningEffort: e, Description: effortDescriptions[e]})
	}
	def := m.DefaultReasoningEffort
	if def == "" {
		def = "medium"
	}
	name := m.DisplayName
	if name == "" {
		name = m.ID
	}
	out := appproto.Model{ID: m.ID, Model: m.ID, DisplayName: name, Description: m.Description, Hidden: m.Hidden,
		SupportedReasoningEfforts: efforts, DefaultReasoningEffort: def, InputModalities: m.InputModalities,
		AdditionalSpeedTiers: m.AdditionalSpeedTiers, ServiceTiers: []jsontextValue{}, IsDefault: m.IsDefault,
		ModelSpecialty: optString(m.ModelSpecialty), MultiAgentVersion: optString(m.MultiAgentVersion),
		DefaultServiceTier: optString(m.DefaultServiceTier)}
	if out.InputModalities == nil {
		out.InputModalities = []string{"text", "image"}
	}
	if out.AdditionalSpeedTiers == nil {
		out.AdditionalSpeedTiers = []string{}
	}
	if m.Upgrade != "" {
		out.Upgrade = &m.Upgrade
		out.UpgradeInfo = mustJSON(map[string]any{"model": m.Upgrade, "upgradeCopy": nil, "modelLink": nil, "migrationMarkdown": nil, "retirementAt": nil})
	}
	for _, st := range m.ServiceTiers {
		out.ServiceTiers = append(out.ServiceTiers, mustJSON(map[string]string{"id": st.ID, "name": st.Name, "description": ""}))
	}
	return out
}

func (s *Server) accountRead(ctx context.Context, c *call, p appproto.GetAccountParams) (appproto.GetAccountResponse, error) {
	resp := appproto.GetAccountResponse{RequiresOpenaiAuth: s.cfg.RequiresOpenAIAuth}
	if s.cfg.Auth == nil {
		return resp, nil
	}
	a, err := s.cfg.Auth.Account()
	if err != nil {
		// Not signed in (or an unreadable auth.json): no account, as Codex.
		return resp, nil
	}
	var acct any
	switch a.Mode {
	case auth.ModeAPIKey:
		acct = struct {
			Type string `json:"type"`
		}{"apiKey"}
	case auth.ModeChatGPT:
		acct = struct {
			Type     string  `json:"type"`
			Email    *string `json:"email"`
			PlanType string  `json:"planType"`
		}{"chatgpt", optString(a.Email), a.PlanType}
		resp.UserID = optString(a.UserID)
	}
	resp.Account = mustJSON(acct)
	return resp, nil
}

func (s *Server) configRead(ctx context.Context, c *call, p appproto.ConfigReadParams) (appproto.ConfigReadResponse, error) {
	cfg := s.core.Config()
	cfg.Settings = s.writtenSettings(cfg.Settings)
	approval := wireApprovalOf(cfg.Approval, cfg.Granular)
	mode := string(cfg.Sandbox.Mode)
	if cfg.Sandbox.Mode == agent.SandboxExternal {
		mode = ""
	}
	return appproto.ConfigReadResponse{
		Config: appproto.Config{Model: optString(cfg.Model), ModelProvider: optString(cfg.ModelProvider), ApprovalPolicy: &approval,
			ApprovalsReviewer: optString(cfg.ApprovalsReviewer), SandboxMode: optString(mode),
			ModelReasoningEffort: optString(cfg.ReasoningEffort), ModelReasoningSummary: optString(cfg.ReasoningSummary),
			ServiceTier: optString(cfg.ServiceTier)},
		Origins: map[string]jsontextValue{},
	}, nil
}

func (s *Server) configRequirementsRead(ctx context.Context, c *call, p appproto.NoParams) (appproto.ConfigRequirementsReadResponse, error) {
	resp := appproto.ConfigRequirementsReadResponse{SupportsIndependentSpeedModes: ptr(true)}
	if r := s.cfg.Requirements; r != nil {
		req := map[string]any{}
		if len(r.AllowedApprovalPolicies) > 0 {
			req["allowedApprovalPolicies"] = r.AllowedApprovalPolicies
		}
		if len(r.AllowedSandboxModes) > 0 {
			req["allowedSandboxModes"] = r.AllowedSandboxModes
		}
		resp.Requirements = mustJSON(req)
	}
	return resp, nil
}

func (s *Server) skillsList(ctx context.Context, c *call, p appproto.SkillsListParams) (appproto.SkillsListResponse, error) {
	cwds := p.Cwds
	if len(cwds) == 0 {
		cwds = []string{s.core.Config().Cwd}
	}
	out := appproto.SkillsListResponse{Data: []appproto.SkillsListEntry{}}
	for _, cwd := range cwds {
		if strings.ContainsRune(cwd, 0) {
			return out, invalidParams(fmt.Sprintf("cwds: %q holds a NUL byte", cwd))
		}
		// As Codex: a relative cwd is taken from the server's own.
		dir, err := filepath.Abs(cwd)
		if err != nil {
			return out, invalidParams(fmt.Sprintf("cwds: %q: %v", cwd, err))
		}
		e := appproto.SkillsListEntry{Cwd: cwd, Skills: []appproto.SkillMetadata{}, Errors: []appproto.SkillErrorInfo{}}
		if s.cfg.Skills != nil {
			// Discovery is a bounded scan of a few directories, so every
			// call reads the disk afresh and forceReload has nothing to
			// bypass.
			list, errs := s.cfg.Skills(dir)
			off := skills.Disabled(list, s.skillRules())
			for _, sk := range list {
				e.Skills = append(e.Skills, appproto.SkillMetadata{Name: sk.Name, Description: sk.Description,
					ShortDescription: sk.ShortDescription, Path: sk.Path, Scope: string(sk.Scope), Enabled: !off[sk.Path]})
			}
			for _, le := range errs {
				e.Errors = append(e.Errors, appproto.SkillErrorInfo{Path: le.Path, Message: le.Message})
			}
		}
		out.Data = append(out.Data, e)
	}
	return out, nil
}

func (s *Server) permissionProfileList(ctx context.Context, c *call, p appproto.PermissionProfileListParams) (appproto.PermissionProfileListResponse, error) {
	out := appproto.PermissionProfileListResponse{Data: []appproto.PermissionProfileSummary{}}
	var allowed []string
	if s.cfg.Requirements != nil {
		allowed = s.cfg.Requirements.AllowedSandboxModes
	}
	for _, id := range builtinProfiles {
		sb, _ := profileSandbox(id)
		ok := len(allowed) == 0
		for _, m := range allowed {
			ok = ok || m == string(sb.Mode)
		}
		out.Data = append(out.Data, appproto.PermissionProfileSummary{ID: id, Allowed: ok})
	}
	return out, nil
}

func (s *Server) collaborationModeList(ctx context.Context, c *call, p appproto.CollaborationModeListParams) (appproto.CollaborationModeListResponse, error) {
	return appproto.CollaborationModeListResponse{Data: []appproto.CollaborationModeMask{
		{Name: "Plan", Mode: ptr("plan"), ReasoningEffort: ptr("medium")},
		{Name: "Default", Mode: ptr("default")},
	}}, nil
}
