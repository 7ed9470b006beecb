package core

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/config"
	"github.com/codexd/codexd/core/compaction"
	"github.com/codexd/codexd/core/review"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/modelclient"
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
		ReasoningSummary:  string(c.ReasoningSummary),
		CollaborationMode: "default",
	}
	if s.Model == "" {
		s.Model = DefaultModel
		if c.Provider.Builtin == config.BuiltinMock {
			s.Model = MockModel
		}
	}
	return s
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
	// ExecDialer connects to the exec-server (package execdial).
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
	MockURL    string
	CliVersion string
	Originator string
	Logger     *slog.Logger
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
	var secrets []string
	for id, p := range c.Providers {
		// Every provider's credentials, not only the selected one's: a
		// thread can switch provider, and a command must not read any.
		if p.EnvKey != "" {
			secrets = append(secrets, p.EnvKey)
		}
		for _, v := range p.EnvHTTPHeaders {
			secrets = append(secrets, v)
		}
		if p.Builtin == config.BuiltinMock && p.BaseURL == "" {
			p.BaseURL = s.MockURL
		}
		providers[id] = ProviderFromConfig(p, s.ModelOptions)
	}
	docs := c.ProjectDocMaxBytes
	if docs == 0 {
		docs = -1 // project_doc_max_bytes = 0 turns AGENTS.md off
	}
	comp, err := compaction.FromConfig(c.Raw, c.CodexHome)
	if err != nil {
		return Config{}, err
	}
	reviewModel, err := review.ModelFromConfig(c.Raw)
	if err != nil {
		return Config{}, err
	}
	sb := s.Sandbox
	if sb == nil {
		sb = LandlockSandbox{}
	}
	return Config{
		Settings: SettingsFromConfig(c, cwd), CodexHome: c.CodexHome, Providers: providers,
		ExecDialer: s.ExecDialer, Sandbox: sb, Store: s.Store, ApplyPatchTool: true,
		BaseInstructions: base, DeveloperInstructions: dev, ProjectDocMaxBytes: docs,
		Originator: s.Originator, CliVersion: s.CliVersion, ConfigFile: c.File, Logger: s.Logger,
		Compaction: comp, ReviewModel: reviewModel,
		ShellEnvironment: c.ShellEnvironment, SecretEnvVars: secrets,
	}, nil
}
