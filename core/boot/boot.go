// Package boot assembles a running agent core from a CODEX_HOME, as
// `codexd app-server` and `codexd exec` start one: it reads config.toml,
// starts the built-in mock model when that is the chosen provider, prepares
// the thread store (opened on its first use), connects the exec-server (in
// this process, or the remote one named by --exec-server or
// CODEX_EXEC_SERVER_URL) and picks the sandbox.
//
// It only wires packages together; it must never hold agent logic, flags
// or protocol code. Everything it starts, Runtime.Close stops.
package boot

import (
	"context"
	"errors"
	"fmt"
	"github.com/codexd/codexd/auth"
	"log/slog"
	"os"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/config"
	"github.com/codexd/codexd/core"
	"github.com/codexd/codexd/environment"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/execserver"
	"github.com/codexd/codexd/mcp"
	"github.com/codexd/codexd/mockmodel"
	"github.com/codexd/codexd/store"
)

// Options say which core to start. Zero values mean Codex's defaults.
type Options struct {
	// Config selects and adjusts config.toml (CODEX_HOME, -c overrides,
	// profile, and the model, provider, approval and sandbox flags).
	Config config.LoadOptions
	// Cwd is where threads run by default; empty means this process's.
	Cwd string
	// ExecServerURL names a remote exec-server; empty means
	// CODEX_EXEC_SERVER_URL, or else one in this process.
	ExecServerURL string
	// NoStore keeps nothing on disk (every thread is ephemeral).
	NoStore bool
	// Originator is the client name sent to the model provider.
	Originator string
	// CliVersion is recorded in thread metadata.
	CliVersion string
	Logger     *slog.Logger
	// CodexItem lets the store keep Codex's history projection up to date
	// (store.Options.CodexItem); the app-server's CodexHistoryItem.
	CodexItem store.CodexItemFunc
}

// Runtime is a running core and what it needs.
type Runtime struct {
	Core   *core.Core
	Config *config.Config
	// MockURL is the base URL of the built-in mock model, when started.
	MockURL string
	// MCP knows the configured MCP servers and each thread's.
	MCP *mcp.Registry
	// Auth is CODEX_HOME's stored sign-in (auth.json), which the core's
	// OpenAI provider uses and account/read reports.
	Auth *auth.Manager
	// Environments are the exec-servers environment/* manage; the
	// registry owns local (the one the core runs on) when it includes it.
	Environments *environment.Registry

	closers []func() error
}

// Open starts a core as opts say.
func Open(ctx context.Context, opts Options) (_ *Runtime, err error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	if opts.Config.Cwd == "" {
		// A trusted project's .codex/config.toml is layered, as in Codex.
		opts.Config.Cwd = opts.Cwd
		if opts.Config.Cwd == "" {
			opts.Config.Cwd, _ = os.Getwd()
		}
	}
	cfg, err := config.Load(opts.Config)
	if err != nil {
		return nil, err
	}
	rt := &Runtime{Config: cfg, Auth: auth.NewManager(cfg.CodexHome, auth.Options{Originator: opts.Originator})}
	defer func() {
		if err != nil {
			_ = rt.Close()
		}
	}()
	if cfg.Provider.Builtin == config.BuiltinMock && cfg.Provider.BaseURL == "" {
		m := mockmodel.New(mockmodel.Options{})
		if rt.MockURL, err = m.Start("127.0.0.1:0"); err != nil {
			return nil, fmt.Errorf("starting the mock model: %w", err)
		}
		rt.closers = append(rt.closers, m.Close)
	}
	local, err := environment.LocalFromFlag(opts.ExecServerURL, execserver.Config{Logger: log}, execclient.Options{})
	if err != nil {
		return nil, err
	}
	// The environments (environment/*): local, unless environments.toml
	// leaves it out, and the file's remote exec-servers.
	envFile, _, err := environment.LoadFile(cfg.CodexHome)
	if err != nil {
		_ = local.Close()
		return nil, err
	}
	if envFile.IncludeLocal {
		rt.Environments, err = environment.FromFile(envFile, local, execclient.Options{})
	} else {
		rt.closers = append(rt.closers, local.Close)
		rt.Environments, err = environment.FromFile(envFile, nil, execclient.Options{})
	}
	if err != nil {
		if envFile.IncludeLocal {
			_ = local.Close()
		}
		return nil, err
	}
	rt.closers = append(rt.closers, rt.Environments.Close)
	var st store.Store
	if !opts.NoStore {
		// The core closes the store. It opens on first use: its SQLite
		// index and the rescan of the rollouts must not delay the
		// server's first answer (initialize).
		if st, err = store.OpenLazy(cfg.CodexHome, store.Options{Logger: log, CodexItem: opts.CodexItem}); err != nil {
			return nil, fmt.Errorf("opening the thread store in %s: %w", cfg.CodexHome, err)
		}
	}
	ccfg, err := core.ConfigFrom(core.Setup{
		Config:     cfg,
		Cwd:        opts.Cwd,
		ExecDialer: local.Connect,
		Sandbox:    core.LandlockSandbox{Remote: local.Remote()},
		Store:      st,
		MockURL:    rt.MockURL,
		Auth:       rt.Auth,
		CliVersion: opts.CliVersion,
		Originator: opts.Originator,
		Logger:     log,
	})
	if err != nil {
		if st != nil {
			_ = st.Close()
		}
		return nil, err
	}
	ccfg.Environments = rt.Environments // turns select among them by id
	switch def := rt.Environments.DefaultID(); def {
	case environment.LocalID:
	case "":
		ccfg.DefaultEnvironment = "none"
	default:
		ccfg.DefaultEnvironment = def
	}
	// Each thread gets its own servers, started in the background; the
	// registry knows them all for the app-server, and re-reads the
	// configuration's table for config/mcpServer/reload.
	loadOpts := opts.Config
	rt.MCP = mcp.NewRegistry(cfg.SortedMCPServers(), mcp.Options{Logger: log.With("component", "mcp"), ClientVersion: opts.CliVersion},
		func() ([]config.MCPServer, error) {
			c, err := config.Load(loadOpts)
			if err != nil {
				return nil, err
			}
			return c.SortedMCPServers(), nil
		})
	ccfg.MCP = func(id string, elicit agent.MCPElicitFunc) agent.MCPConnector { return rt.MCP.NewThread(id, elicit) }
	if rt.Core, err = core.New(ccfg); err != nil {
		if st != nil {
			_ = st.Close()
		}
		return nil, err
	}
	return rt, nil
}

// Close stops the core, then what it used, in reverse order of starting.
func (rt *Runtime) Close() error {
	var errs []error
	if rt.Core != nil {
		errs = append(errs, rt.Core.Close())
	}
	for i := len(rt.closers) - 1; i >= 0; i-- {
		errs = append(errs, rt.closers[i]())
	}
	rt.closers = nil
	return errors.Join(errs...)
}
