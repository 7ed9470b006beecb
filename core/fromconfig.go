package core

import (
	"os"
	"path/filepath"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/config"
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
