//go:build !execonly

package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/codexd/codexd/appserver"
	"log/slog"

	"github.com/codexd/codexd/config"
	"github.com/codexd/codexd/core/boot"
)

// coreFlags are the flags that choose the agent core's configuration, as
// Codex's CLI has them: they win over config.toml.
type coreFlags struct {
	overrides     multiFlag
	profile       string
	model         string
	modelProvider string
	sandbox       string
	approval      string
	cwd           string
	execServer    string
}

func (f *coreFlags) register(fs *flag.FlagSet, withApproval bool) {
	fs.Var(&f.overrides, "c", "override a config.toml value: `key=value` (TOML; repeatable), as codex -c")
	fs.Var(&f.overrides, "config", "same as -c")
	fs.StringVar(&f.profile, "profile", "", "layer $CODEX_HOME/`NAME`.config.toml (else config.toml's [profiles.NAME])")
	fs.StringVar(&f.model, "model", "", "the `MODEL` to use")
	fs.StringVar(&f.model, "m", "", "same as --model")
	fs.StringVar(&f.modelProvider, "model-provider", "", "the model provider, by `NAME` ([model_providers.NAME], openai, ollama, lmstudio, or mock: the built-in offline mock)")
	fs.StringVar(&f.sandbox, "sandbox", "", "sandbox `MODE` of commands: read-only, workspace-write or danger-full-access")
	fs.StringVar(&f.sandbox, "s", "", "same as --sandbox")
	if withApproval {
		fs.StringVar(&f.approval, "ask-for-approval", "", "approval `POLICY`: untrusted, on-failure, on-request or never")
		fs.StringVar(&f.approval, "a", "", "same as --ask-for-approval")
	}
	fs.StringVar(&f.cwd, "cd", "", "working `DIR` of new threads (default: the current directory)")
	fs.StringVar(&f.cwd, "C", "", "same as --cd")
	fs.StringVar(&f.execServer, "exec-server", "", "run commands and file operations through the exec-server at `URL` (ws://, unix://); default: $CODEX_EXEC_SERVER_URL, else in this process")
}

// validate refuses values no config could take: a usage error, before
// anything starts.
func (f *coreFlags) validate() error {
	switch f.sandbox {
	case "", "read-only", "workspace-write", "danger-full-access":
	default:
		return fmt.Errorf("--sandbox %q: want read-only, workspace-write or danger-full-access", f.sandbox)
	}
	switch f.approval {
	case "", "untrusted", "on-failure", "on-request", "never":
	default:
		return fmt.Errorf("--ask-for-approval %q: want untrusted, on-failure, on-request or never", f.approval)
	}
	return nil
}

// open starts the core these flags describe.
func (f *coreFlags) open(ctx context.Context, originator string, log *slog.Logger) (*boot.Runtime, error) {
	return boot.Open(ctx, boot.Options{
		Config: config.LoadOptions{
			Overrides:      f.overrides,
			Profile:        f.profile,
			Model:          f.model,
			ModelProvider:  f.modelProvider,
			ApprovalPolicy: config.ApprovalPolicy(f.approval),
			SandboxMode:    config.SandboxMode(f.sandbox),
		},
		Cwd:           f.cwd,
		ExecServerURL: f.execServer,
		Originator:    originator,
		CliVersion:    codexVersion,
		Logger:        log,
		CodexItem:     appserver.CodexHistoryItem,
	})
}
