//go:build !execonly

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/auth"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appserver"
	"github.com/codexd/codexd/config"
	"github.com/codexd/codexd/environment"
	"github.com/codexd/codexd/execenv"
	"github.com/codexd/codexd/execserver/fsops"
	"github.com/codexd/codexd/jsonrpc"
	"github.com/codexd/codexd/mcp"
	"github.com/codexd/codexd/rpcserve"
	"github.com/codexd/codexd/skills"
)

const appServerUsage = `usage: codexd app-server [flags]

Serves Codex's app-server protocol (v2) in front of the agent core: stdio://
by default (one client), ws://IP:PORT or unix://PATH for many. The Codex TUI
connects with: codex --remote ws://IP:PORT

The core reads $CODEX_HOME/config.toml (default ~/.codex) as Codex does;
the flags below win over it.

flags:`

func runAppServer(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("app-server", flag.ContinueOnError)
	listen := fs.String("listen", "stdio://", "where to listen: stdio://, ws://IP:PORT, unix://PATH or off")
	var roots multiFlag
	fs.Var(&roots, "root", "confine fs/* paths and command/exec cwd to `DIR` (repeatable)")
	tokenFile := fs.String("auth-token-file", "", "require the bearer token in `FILE` on WebSocket upgrades")
	insecureNoAuth := fs.Bool("insecure-no-auth", false, "allow a ws:// listener on an address other than loopback without --auth-token-file")
	maxMessage := fs.Int64("max-message", jsonrpc.DefaultMaxMessage, "largest inbound message, in `bytes`")
	var cf coreFlags
	cf.register(fs, true)
	// Hidden: serve a scripted core that completes every turn at once, its
	// answer in N deltas, so that benchmarks measure the app-server itself.
	// Never for real use.
	benchCore := fs.Int("bench-instant-core", 0, "")
	fs.Usage = flagUsage(fs, appServerUsage)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "codexd app-server: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	addr, err := jsonrpc.ParseListenURL(*listen)
	if err == nil {
		err = cf.validate()
	}
	if err != nil {
		fmt.Fprintln(stderr, "codexd app-server:", err)
		return 2
	}
	opts := rpcserve.Options{InsecureNoAuth: *insecureNoAuth, MaxMessage: *maxMessage}
	if *tokenFile != "" {
		if opts.AuthToken, err = rpcserve.ReadAuthToken(*tokenFile); err != nil {
			fmt.Fprintln(stderr, "codexd app-server:", err)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var core agent.Core
	var installationID string
	var signIn *auth.Manager
	requiresOpenAIAuth := false
	var warnings []appproto.ConfigWarningNotification
	var commandEnv func() map[string]string
	var listSkills func(string) ([]skills.Skill, []skills.LoadError)
	var envs *environment.Registry
	var mcpServers *mcp.Registry
	if *benchCore > 0 {
		core = agenttest.New(agenttest.Options{Instant: true, InstantDeltas: *benchCore})
		defer core.Close()
	} else {
		rt, err := cf.open(ctx, "codexd_app_server", log)
		if err != nil {
			fmt.Fprintln(stderr, "codexd app-server:", err)
			return 1
		}
		defer rt.Close()
		core, envs = rt.Core, rt.Environments
		mcpServers = rt.MCP
		signIn, requiresOpenAIAuth = rt.Auth, rt.Config.Provider.RequiresOpenAIAuth
		for _, w := range rt.Config.Warnings {
			n := appproto.ConfigWarningNotification{Summary: w.Summary, Details: &w.Details}
			if rt.Config.File != "" {
				n.Path = &rt.Config.File
			}
			warnings = append(warnings, n)
		}
		// command/exec gets the environment the agent's commands get.
		policy, secrets := rt.Config.ShellEnvironment, rt.Config.SecretEnvVars()
		commandEnv = func() map[string]string { return execenv.Build(os.Environ(), policy, secrets) }
		codexHome := rt.Config.CodexHome
		listSkills = func(cwd string) ([]skills.Skill, []skills.LoadError) {
			home, _ := os.UserHomeDir()
			return skills.Discover(skills.Roots(skills.Locations{CodexHome: codexHome, Home: home, Cwd: cwd}))
		}
		// As Codex: the id kept in $CODEX_HOME, or (unwritable) one per run.
		if installationID, err = config.InstallationID(rt.Config.CodexHome); err != nil {
			log.Warn("codexd app-server: no installation id", "err", err)
		}
	}
	srv, err := appserver.New(appserver.Config{Core: core, MaxMessage: *maxMessage, FS: fsops.Config{Roots: roots},
		InstallationID: installationID, CommandEnv: commandEnv, Auth: signIn, RequiresOpenAIAuth: requiresOpenAIAuth, ConfigWarnings: warnings, Skills: listSkills, Environments: envs, MCP: mcpServers, Logger: log})
	if err != nil {
		fmt.Fprintln(stderr, "codexd app-server:", err)
		return 2
	}
	defer srv.Close()
	if err := rpcserve.Run(ctx, srv, addr, opts, stdin, stdout); err != nil {
		fmt.Fprintln(stderr, "codexd app-server:", err)
		if errors.Is(err, rpcserve.ErrNoAuth) {
			return 2
		}
		return 1
	}
	return 0
}
