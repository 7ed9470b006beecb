package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/codexd/codexd/execenv"
)

// FileName is the config file's name inside CODEX_HOME.
const FileName = "config.toml"

// DefaultProjectDocMaxBytes is Codex's project_doc_max_bytes default.
const DefaultProjectDocMaxBytes = 32 * 1024

// Config is the effective configuration.
type Config struct {
	// CodexHome is the directory the config came from.
	CodexHome string
	// File is the config file read; empty when there was none.
	File string

	// Model is the model name; empty when nothing set one (Codex then
	// picks its default from its model catalog).
	Model string
	// ModelProvider is the id of the provider in use (default "openai").
	ModelProvider string
	// Provider is Providers[ModelProvider].
	Provider Provider
	// Providers holds the built-in providers and the configured ones.
	Providers map[string]Provider

	// Profile is the name of the profile applied, if any.
	Profile string

	// ApprovalPolicy defaults to on-request, as in Codex.
	ApprovalPolicy ApprovalPolicy
	// GranularApproval is the table of approval_policy = { granular = {} }.
	GranularApproval map[string]any
	// SandboxMode defaults to read-only, as in Codex for a directory that
	// is not trusted.
	SandboxMode           SandboxMode
	SandboxWorkspaceWrite WorkspaceWrite

	// ReasoningEffort is empty for the model's default.
	ReasoningEffort ReasoningEffort
	// ReasoningSummary is empty unless set (the model is then asked for
	// "auto"); as in Codex, a thread reports no summary it was not given.
	ReasoningSummary ReasoningSummary
	// Verbosity is empty unless set.
	Verbosity Verbosity
	// ServiceTier is the service tier requested of the provider
	// (service_tier: a thread's default, which a turn may override); empty
	// for none.
	ServiceTier string

	// DeveloperInstructions go to the model as a developer message.
	DeveloperInstructions string
	// Instructions replace the base system instructions.
	Instructions string
	// ModelInstructionsFile is an absolute path (a relative one is taken
	// from CodexHome); the file replaces the built-in instructions.
	ModelInstructionsFile string
	// ProjectDocMaxBytes caps how much of the AGENTS.md files is used.
	ProjectDocMaxBytes int
	// ProjectDocFallbackFilenames are read where AGENTS.md is missing.
	ProjectDocFallbackFilenames []string
	// NoLoginShell is allow_login_shell = false: commands run with `-c`,
	// not `-lc`, as in Codex.
	NoLoginShell bool
	// Notify is notify: a program and its arguments, run at each turn's
	// end with Codex's JSON about the turn as one more argument.
	Notify []string

	// ShellEnvironment is [shell_environment_policy]: the environment the
	// agent's commands get (package execenv builds it). Unset keys keep
	// execenv's zero values: inherit everything, default excludes applied.
	ShellEnvironment execenv.Policy

	// MCPServers is the [mcp_servers.NAME] table, by name (disabled
	// servers included, with Enabled false).
	MCPServers map[string]MCPServer
	// Warnings are keys read and not acted on, for configWarning
	// notifications.
	Warnings []Warning

	// Raw is the whole TOML tree with the -c overrides applied, unknown
	// keys included, for callers that report the config (config/read).
	Raw map[string]any
}

// WorkspaceWrite is the [sandbox_workspace_write] table.
type WorkspaceWrite struct {
	WritableRoots       []string `toml:"writable_roots"`
	NetworkAccess       bool     `toml:"network_access"`
	ExcludeTmpdirEnvVar bool     `toml:"exclude_tmpdir_env_var"`
	ExcludeSlashTmp     bool     `toml:"exclude_slash_tmp"`
}

// LoadOptions select and adjust the config. Its string fields, when set,
// win over everything in the file, profiles included (Codex's CLI flags).
type LoadOptions struct {
	// CodexHome is the directory of config.toml; empty means Home().
	CodexHome string
	// Overrides are `-c key=value` strings, applied in order.
	Overrides []string
	// Profile selects a profile instead of the file's `profile`:
	// $CODEX_HOME/NAME.config.toml, else [profiles.NAME].
	Profile string
	// Cwd is the directory threads start in: a trusted project's
	// .codex/config.toml files are layered (empty: none).
	Cwd string

	Model          string
	ModelProvider  string
	ApprovalPolicy ApprovalPolicy
	SandboxMode    SandboxMode

	// Getenv reads the environment (CODEX_HOME, HOME, CODEX_OSS_*);
	// nil means os.Getenv.
	Getenv func(string) string

	// profileFile: the profile was a NAME.config.toml, already merged.
	profileFile bool
}

// Home returns $CODEX_HOME, which must be an existing directory when set,
// or ~/.codex.
func Home(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if h := getenv("CODEX_HOME"); h != "" {
		st, err := os.Stat(h)
		if err != nil {
			return "", fmt.Errorf("CODEX_HOME %s: %w", h, err)
		}
		if !st.IsDir() {
			return "", fmt.Errorf("CODEX_HOME %s is not a directory", h)
		}
		return filepath.Abs(h)
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("cannot find the home directory for ~/.codex: %w", err)
		}
	}
	return filepath.Join(home, ".codex"), nil
}

// Load reads CodexHome/config.toml (a missing file means all defaults) and
// applies opts.
func Load(opts LoadOptions) (*Config, error) {
	home := opts.CodexHome
	if home == "" {
		var err error
		if home, err = Home(opts.Getenv); err != nil {
			return nil, err
		}
	}
	path := filepath.Join(home, FileName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		path, data = "", nil
	} else if err != nil {
		return nil, err
	}
	data, profileFile, err := layers(home, data, opts)
	if err != nil {
		return nil, err
	}
	opts.profileFile = profileFile
	cfg, err := Parse(data, path, opts)
	if err != nil {
		return nil, err
	}
	cfg.CodexHome = home
	if cfg.ModelInstructionsFile != "" && !filepath.IsAbs(cfg.ModelInstructionsFile) {
		cfg.ModelInstructionsFile = filepath.Join(home, cfg.ModelInstructionsFile)
	}
	return cfg, nil
}

// Parse reads a config.toml's content; file names it in errors. It does
// not resolve CodexHome or relative paths (Load does).
func Parse(data []byte, file string, opts LoadOptions) (*Config, error) {
	name := file
	if name == "" {
		name = FileName
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}

	// First the file alone, so that its errors carry its own lines.
	var fc fileConfig
	if _, err := toml.Decode(string(data), &fc); err != nil {
		return nil, asError(name, err)
	}
	raw := map[string]any{}
	if _, err := toml.Decode(string(data), &raw); err != nil {
		return nil, asError(name, err)
	}
	if len(opts.Overrides) > 0 {
		if err := applyOverrides(raw, &fc, opts.Overrides); err != nil {
			return nil, err
		}
	}

	cfg := &Config{
		File:               file,
		ModelProvider:      BuiltinOpenAI,
		ApprovalPolicy:     ApprovalOnRequest,
		SandboxMode:        SandboxReadOnly,
		ProjectDocMaxBytes: DefaultProjectDocMaxBytes,
		Raw:                raw,
	}
	if err := cfg.apply(&fc, name, opts); err != nil {
		return nil, err
	}
	var err error
	if cfg.MCPServers, cfg.Warnings, err = parseMCPServers(raw, name); err != nil {
		return nil, err
	}
	cfg.Warnings = append(cfg.Warnings, unimplementedWarnings(raw, cfg.Profile)...)
	openAIBaseURL := ""
	if fc.OpenAIBaseURL != nil {
		openAIBaseURL = *fc.OpenAIBaseURL
	}
	cfg.Providers = mergeProviders(builtinProviders(openAIBaseURL, getenv), fc.ModelProviders)
	p, ok := cfg.Providers[cfg.ModelProvider]
	if !ok {
		if cfg.ModelProvider == "amazon-bedrock" {
			return nil, errorf(name, "model_provider", "provider %q (AWS SigV4 auth) is not supported by codexd", cfg.ModelProvider)
		}
		return nil, errorf(name, "model_provider", "model provider %q not found; known providers: %s",
			cfg.ModelProvider, strings.Join(slices.Sorted(maps.Keys(cfg.Providers)), ", "))
	}
	cfg.Provider = p
	return cfg, nil
}

// apply sets cfg from the file, the profile and opts, in that order.
func (cfg *Config) apply(fc *fileConfig, file string, opts LoadOptions) error {
	fc.settings.applyTo(cfg)
	if fc.ApprovalPolicy != nil && *fc.ApprovalPolicy == ApprovalGranular {
		cfg.GranularApproval, _ = granularTable(cfg.Raw)
	}
	if fc.SandboxWorkspaceWrite != nil {
		cfg.SandboxWorkspaceWrite = *fc.SandboxWorkspaceWrite
	}
	setStr := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	setStr(&cfg.DeveloperInstructions, fc.DeveloperInstructions)
	setStr(&cfg.Instructions, fc.Instructions)
	if fc.ProjectDocMaxBytes != nil {
		cfg.ProjectDocMaxBytes = int(*fc.ProjectDocMaxBytes)
	}
	if fc.ProjectDocFallbackFilenames != nil {
		cfg.ProjectDocFallbackFilenames = fc.ProjectDocFallbackFilenames
	}
	if fc.AllowLoginShell != nil {
		cfg.NoLoginShell = !*fc.AllowLoginShell
	}
	if len(fc.Notify) > 0 {
		cfg.Notify = fc.Notify
	}
	if fc.ShellEnvironmentPolicy != nil {
		cfg.ShellEnvironment = fc.ShellEnvironmentPolicy.policy()
	}

	profile := fc.Profile
	if opts.Profile != "" {
		profile = opts.Profile
	}
	if profile != "" && opts.profileFile {
		cfg.Profile = profile
	} else if profile != "" {
		p, ok := fc.Profiles[profile]
		if !ok {
			return errorf(file, "profile", "config profile %q not found", profile)
		}
		p.applyTo(cfg)
		if p.ApprovalPolicy != nil && *p.ApprovalPolicy == ApprovalGranular {
			if profs, ok := cfg.Raw["profiles"].(map[string]any); ok {
				if prof, ok := profs[profile].(map[string]any); ok {
					cfg.GranularApproval, _ = granularTable(prof)
				}
			}
		}
		cfg.Profile = profile
	}

	// Codex 0.169 refuses the policy from its configuration (not from its
	// flag), and will not start.
	if cfg.ApprovalPolicy == ApprovalUntrusted {
		return &Error{File: approvalSource(file, opts.Overrides), Msg: `approval_policy = "untrusted" is no longer supported; remove this setting`}
	}

	if opts.Model != "" {
		cfg.Model = opts.Model
	}
	if opts.ModelProvider != "" {
		cfg.ModelProvider = opts.ModelProvider
	}
	if opts.ApprovalPolicy != "" {
		if !slices.Contains(approvalPolicies, string(opts.ApprovalPolicy)) {
			return &Error{File: "options", Key: "approval_policy", Msg: unknownVariant(string(opts.ApprovalPolicy), approvalPolicies).Error()}
		}
		cfg.ApprovalPolicy = opts.ApprovalPolicy
	}
	if opts.SandboxMode != "" {
		if !slices.Contains(sandboxModes, string(opts.SandboxMode)) {
			return &Error{File: "options", Key: "sandbox_mode", Msg: unknownVariant(string(opts.SandboxMode), sandboxModes).Error()}
		}
		cfg.SandboxMode = opts.SandboxMode
	}
	return nil
}

// approvalSource names where approval_policy came from: the last -c that
// set it, else the file.
func approvalSource(file string, overrides []string) string {
	for i := len(overrides) - 1; i >= 0; i-- {
		if o, err := ParseOverride(overrides[i]); err == nil && len(o.Path) == 1 && o.Path[0] == "approval_policy" {
			return "-c " + o.Text
		}
	}
	return file
}

func granularTable(t map[string]any) (map[string]any, bool) {
	ap, ok := t["approval_policy"].(map[string]any)
	if !ok {
		return nil, false
	}
	g, ok := ap["granular"].(map[string]any)
	return g, ok
}

// settings are the keys a profile can set as well as the top level.
type settings struct {
	Model                 *string           `toml:"model"`
	ModelProvider         *string           `toml:"model_provider"`
	ApprovalPolicy        *ApprovalPolicy   `toml:"approval_policy"`
	SandboxMode           *SandboxMode      `toml:"sandbox_mode"`
	ModelReasoningEffort  *ReasoningEffort  `toml:"model_reasoning_effort"`
	ModelReasoningSummary *ReasoningSummary `toml:"model_reasoning_summary"`
	ModelVerbosity        *Verbosity        `toml:"model_verbosity"`
	ModelInstructionsFile *string           `toml:"model_instructions_file"`
	ServiceTier           *string           `toml:"service_tier"`
}

func (s *settings) applyTo(cfg *Config) {
	if s.Model != nil {
		cfg.Model = *s.Model
	}
	if s.ModelProvider != nil {
		cfg.ModelProvider = *s.ModelProvider
	}
	if s.ApprovalPolicy != nil {
		cfg.ApprovalPolicy = *s.ApprovalPolicy
	}
	if s.SandboxMode != nil {
		cfg.SandboxMode = *s.SandboxMode
	}
	if s.ModelReasoningEffort != nil {
		cfg.ReasoningEffort = *s.ModelReasoningEffort
	}
	if s.ModelReasoningSummary != nil {
		cfg.ReasoningSummary = *s.ModelReasoningSummary
	}
	if s.ModelVerbosity != nil {
		cfg.Verbosity = *s.ModelVerbosity
	}
	if s.ModelInstructionsFile != nil {
		cfg.ModelInstructionsFile = *s.ModelInstructionsFile
	}
	if s.ServiceTier != nil {
		cfg.ServiceTier = *s.ServiceTier
	}
}

// fileConfig is the part of config.toml codexd reads; the rest is ignored.
type fileConfig struct {
	settings
	ModelProviders              map[string]fileProvider `toml:"model_providers"`
	SandboxWorkspaceWrite       *WorkspaceWrite         `toml:"sandbox_workspace_write"`
	Profile                     string                  `toml:"profile"`
	Profiles                    map[string]settings     `toml:"profiles"`
	DeveloperInstructions       *string                 `toml:"developer_instructions"`
	Instructions                *string                 `toml:"instructions"`
	ProjectDocMaxBytes          *count                  `toml:"project_doc_max_bytes"`
	ProjectDocFallbackFilenames []string                `toml:"project_doc_fallback_filenames"`
	AllowLoginShell             *bool                   `toml:"allow_login_shell"`
	Notify                      []string                `toml:"notify"`
	OpenAIBaseURL               *string                 `toml:"openai_base_url"`
	ShellEnvironmentPolicy      *shellEnvironmentPolicy `toml:"shell_environment_policy"`
}

// shellEnvironmentPolicy is the [shell_environment_policy] table as Codex
// 0.169 reads it (its `filters` and experimental_use_profile are not read).
type shellEnvironmentPolicy struct {
	Inherit               *envInherit       `toml:"inherit"`
	IgnoreDefaultExcludes *bool             `toml:"ignore_default_excludes"`
	Exclude               []string          `toml:"exclude"`
	Set                   map[string]string `toml:"set"`
	IncludeOnly           []string          `toml:"include_only"`
}

type envInherit execenv.Inherit

var envInherits = []string{"all", "core", "none"}

// UnmarshalText accepts Codex's three values.
func (i *envInherit) UnmarshalText(b []byte) error {
	return setEnum((*string)(i), string(b), envInherits)
}

func (t *shellEnvironmentPolicy) policy() execenv.Policy {
	p := execenv.Policy{Inherit: execenv.InheritAll, Exclude: t.Exclude, Set: t.Set, IncludeOnly: t.IncludeOnly}
	if t.Inherit != nil {
		p.Inherit = execenv.Inherit(*t.Inherit)
	}
	if t.IgnoreDefaultExcludes != nil {
		p.IgnoreDefaultExcludes = *t.IgnoreDefaultExcludes
	}
	return p
}

// SecretEnvVars names the variables that hold a model provider's
// credentials: every configured provider's env_key and env_http_headers
// variables, not only the selected one's (a thread can switch provider).
// No command may read them, whatever the shell environment policy says.
func (c Config) SecretEnvVars() []string {
	var secrets []string
	for _, p := range c.Providers {
		if p.EnvKey != "" {
			secrets = append(secrets, p.EnvKey)
		}
		for _, v := range p.EnvHTTPHeaders {
			secrets = append(secrets, v)
		}
	}
	return secrets
}
