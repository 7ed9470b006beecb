package core

import (
	"context"
	"fmt"
	"github.com/codexd/codexd/auth"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/config"
	"github.com/codexd/codexd/core/compaction"
	"github.com/codexd/codexd/core/review"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/modelclient"
	"github.com/codexd/codexd/modelinfo"
	"github.com/codexd/codexd/store"
)

// DefaultModel is the model of a config that names none (Codex picks one
// from its catalog; we have none to pick from).
const DefaultModel = "gpt-5-codex"

// MockModel is the model the built-in mock provider answers as.
const MockModel = "mock-model"

// SettingsFromConfig returns the thread defaults a loaded config.toml gives,
// for commands run in cwd.
func SettingsFromConfig(c *config.Config, cwd string) agent.Settings {
	s := agent.Settings{
		Model: c.Model, ModelProvider: c.ModelProvider, Cwd: cwd,
		Approval:          agent.ApprovalPolicy(c.ApprovalPolicy),
		ApprovalsReviewer: "user",
		Sandbox: agent.SandboxPolicy{
			Mode:                agent.SandboxMode(c.SandboxMode),
			WritableRoots:       append([]string(nil), c.SandboxWorkspaceWrite.WritableRoots...),
			NetworkAccess:       c.SandboxWorkspaceWrite.NetworkAccess,
			ExcludeTmpdirEnvVar: c.SandboxWorkspaceWrite.ExcludeTmpdirEnvVar,
			ExcludeSlashTmp:     c.SandboxWorkspaceWrite.ExcludeSlashTmp,
		},
		ReasoningEffort:   string(c.ReasoningEffort),
		ServiceTier:       c.ServiceTier,
		CollaborationMode: "default",
	}
	if s.Approval == agent.ApprovalGranular {
		s.Granular = GranularFromConfig(c.GranularApproval)
	}
	// Unset, the summary is the model's default (Codex's models mostly
	// default to none); config.Load's "auto" is only its fallback's.
	if _, ok := rawSetting(c, "model_reasoning_summary"); ok {
		s.ReasoningSummary = string(c.ReasoningSummary)
	}
	if s.Model == "" {
		s.Model = DefaultModel
		if c.Provider.Builtin == config.BuiltinMock {
			s.Model = MockModel
		}
	}
	return s
}

// GranularFromConfig reads the flags of approval_policy = { granular =
// { ... } } (a flag that is missing or not a boolean is false).
func GranularFromConfig(t map[string]any) *agent.GranularApproval {
	flag := func(k string) bool { b, _ := t[k].(bool); return b }
	return &agent.GranularApproval{SandboxApproval: flag("sandbox_approval"), Rules: flag("rules"),
		SkillApproval: flag("skill_approval"), RequestPermissions: flag("request_permissions"), MCPElicitations: flag("mcp_elicitations")}
}

// InstructionsFromConfig returns the base instructions that replace the
// built-in ones (instructions, or model_instructions_file), if any, and
// the developer instructions.
func InstructionsFromConfig(c *config.Config) (base, developer string, err error) {
	base = c.Instructions
	if c.ModelInstructionsFile != "" {
		p := c.ModelInstructionsFile
		if !filepath.IsAbs(p) {
			p = filepath.Join(c.CodexHome, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return "", "", err
		}
		base = string(b)
	}
	return base, c.DeveloperInstructions, nil
}

// Setup is what ConfigFrom needs besides config.toml.
type Setup struct {
	// Config is the loaded config.toml (config.Load).
	Config *config.Config
	// Cwd is where commands run; empty means the process's directory.
	Cwd string
	// ExecDialer connects to the exec-server (an execclient.Connector's Connect).
	ExecDialer func(ctx context.Context) (*execclient.Client, error)
	// Sandbox confines commands; nil means LandlockSandbox{} (this
	// program as the helper).
	Sandbox Sandbox
	// Store keeps threads; nil keeps nothing.
	Store store.Store
	// ModelOptions tune the model clients (HTTP client, retry hook...).
	ModelOptions modelclient.Options
	// MockURL is the base URL of a running mock model (mockmodel), given to
	// providers that are the built-in mock and have no base_url.
	MockURL string
	// Auth is the stored sign-in (auth.json), used by the providers that
	// RequiresOpenAIAuth; nil reads only their env_key.
	Auth *auth.Manager
	// ChatGPTBaseURL replaces ChatGPTCodexBaseURL (tests' mock backend).
	ChatGPTBaseURL string
	CliVersion     string
	Originator     string
	Logger         *slog.Logger
}

// ConfigFrom builds the core's Config from a loaded config.toml: thread
// defaults, instructions, and one Provider per configured model provider.
func ConfigFrom(s Setup) (Config, error) {
	c := s.Config
	cwd := s.Cwd
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return Config{}, err
		}
		cwd = wd
	}
	base, dev, err := InstructionsFromConfig(c)
	if err != nil {
		return Config{}, err
	}
	providers := map[string]*Provider{}
	for id, p := range c.Providers {
		if p.Builtin == config.BuiltinMock && p.BaseURL == "" {
			p.BaseURL = s.MockURL
		}
		providers[id] = providerFromConfig(p, s.ModelOptions, s.Auth, s.ChatGPTBaseURL)
	}
	docs := c.ProjectDocMaxBytes
	if docs == 0 {
		docs = -1 // project_doc_max_bytes = 0 turns AGENTS.md off
	}
	// Read as every other key is, so that a profile can set them.
	setting := func(key string) (any, bool) { return rawSetting(c, key) }
	comp, err := compaction.FromConfig(setting, c.CodexHome)
	if err != nil {
		return Config{}, err
	}
	reviewModel, err := review.ModelFromConfig(setting)
	if err != nil {
		return Config{}, err
	}
	sb := s.Sandbox
	if sb == nil {
		sb = LandlockSandbox{}
	}
	meta, err := ModelMetadataFromConfig(c)
	if err != nil {
		return Config{}, err
	}
	return Config{
		Catalog: meta.Catalog, ModelOverrides: meta.Overrides, WebSearch: meta.WebSearch, Verbosity: string(c.Verbosity),
		Settings: SettingsFromConfig(c, cwd), CodexHome: c.CodexHome, Providers: providers,
		ExecDialer: s.ExecDialer, Sandbox: sb, Store: s.Store, ApplyPatchTool: true,
		BaseInstructions: base, DeveloperInstructions: dev, ProjectDocMaxBytes: docs,
		ProjectDocFallbackFilenames: c.ProjectDocFallbackFilenames, ProjectRootMarkers: rootMarkers(c),
		NoLoginShell: c.NoLoginShell, Notify: c.Notify, Originator: s.Originator, CliVersion: s.CliVersion, ConfigFile: c.File, Logger: s.Logger,
		Compaction: comp, ReviewModel: reviewModel,
		ShellEnvironment: c.ShellEnvironment, SecretEnvVars: c.SecretEnvVars(),
	}, nil
}

// ModelMetadata is what config.toml says of the models' metadata.
type ModelMetadata struct {
	// Catalog is model_catalog_json's catalog; nil for the built-in one.
	Catalog   *modelinfo.Catalog
	Overrides modelinfo.Overrides
	// WebSearch is web_search: "cached", "live" or "disabled" ("" for the
	// default, cached).
	WebSearch string
}

// ModelMetadataFromConfig reads model_catalog_json (a path, relative to
// CODEX_HOME), model_context_window, model_auto_compact_token_limit,
// tool_output_token_limit and web_search, from the top level or the
// profile in use.
func ModelMetadataFromConfig(c *config.Config) (ModelMetadata, error) {
	var m ModelMetadata
	if v, ok := rawSetting(c, "model_catalog_json"); ok {
		p, isStr := v.(string)
		if !isStr || p == "" {
			return m, fmt.Errorf("model_catalog_json must be a path, not %v", v)
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(c.CodexHome, p)
		}
		cat, err := modelinfo.Load(p)
		if err != nil {
			return m, err
		}
		m.Catalog = cat
	}
	for key, dst := range map[string]**int64{
		"model_context_window":           &m.Overrides.ContextWindow,
		"model_auto_compact_token_limit": &m.Overrides.AutoCompactTokenLimit,
		"tool_output_token_limit":        &m.Overrides.ToolOutputTokenLimit,
	} {
		v, ok := rawSetting(c, key)
		if !ok {
			continue
		}
		n, isInt := v.(int64)
		if !isInt || n < 0 {
			return m, fmt.Errorf("%s must be a non-negative integer, not %v", key, v)
		}
		*dst = &n
	}
	if v, ok := rawSetting(c, "web_search"); ok {
		s, _ := v.(string)
		switch s {
		case "cached", "live", "disabled":
			m.WebSearch = s
		default:
			return m, fmt.Errorf("web_search must be cached, live or disabled, not %v", v)
		}
	}
	return m, nil
}

// rawSetting is key in the profile in use, else at the top level of the
// config (overrides applied).
func rawSetting(c *config.Config, key string) (any, bool) {
	if c.Profile != "" {
		if profiles, ok := c.Raw["profiles"].(map[string]any); ok {
			if p, ok := profiles[c.Profile].(map[string]any); ok {
				if v, ok := p[key]; ok {
					return v, true
				}
			}
		}
	}
	v, ok := c.Raw[key]
	return v, ok
}

// rootMarkers is project_root_markers: nil when unset (Codex's .git), the
// list (possibly empty: no root, cwd alone) when set.
func rootMarkers(c *config.Config) []string {
	v, ok := rawSetting(c, "project_root_markers")
	if !ok {
		return nil
	}
	list, _ := v.([]any)
	out := []string{}
	for _, m := range list {
		if s, ok := m.(string); ok && s != "" {
			out = append(out, s)
		}
	}
	return out
}
