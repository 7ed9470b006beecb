package core

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/execclient"
)

// Environments are the exec-servers a turn may select by id (package
// environment's Registry is one). The core holds no connection of its own
// to them: every tool of a turn asks for the client of the turn's current
// environment, and the registry shares and resumes it.
type Environments interface {
	// Client returns the client of environment id, connecting if needed;
	// the error of an id that is not configured names it.
	Client(ctx context.Context, id string) (*execclient.Client, error)
}

// errNoEnvironment is why a tool of a turn without environment access
// (environments: []) cannot run.
var errNoEnvironment = errors.New("this turn has no environment: it was started with an empty environments list, so no command, file or patch can run")

// noEnvironmentText is what exec_command, write_stdin and an offered
// apply_patch answer in a turn without environment access, in Codex
// 0.169's words (no command item starts).
const noEnvironmentText = "No usable execution environment is available. Wait for an environment to become available before using this tool."

// hasNoEnvironment: ctx's turn was given no environment access.
func hasNoEnvironment(ctx context.Context) bool {
	sel, _ := ctx.Value(envKey{}).(envSelection)
	return sel.none
}

// envKey carries a turn's environment selection in its context, so that
// every path that reaches an exec-server (exec_command, write_stdin's
// process, apply_patch, the file reads of a request, a user shell command)
// goes to the turn's environment without being told.
type envKey struct{}

type envSelection struct {
	none bool   // environments: [] — no access
	id   string // the current environment
}

// withTurnEnvironment returns ctx carrying the current environment of
// envs (nil: the default, ctx unchanged).
func withTurnEnvironment(ctx context.Context, envs []agent.Environment) context.Context {
	switch {
	case envs == nil:
		return ctx
	case len(envs) == 0:
		return context.WithValue(ctx, envKey{}, envSelection{none: true})
	}
	return context.WithValue(ctx, envKey{}, envSelection{id: envs[0].ID})
}

// turnCwd is the working directory of a turn's tools: the current
// environment's cwd when the turn names one.
func turnCwd(s agent.Settings) string {
	if len(s.Environments) > 0 && s.Environments[0].Cwd != "" {
		return s.Environments[0].Cwd
	}
	return s.Cwd
}

// selectedExec is the client of the environment ctx selects; ok is false
// when it selects none in particular (the default exec-server applies).
func (c *Core) selectedExec(ctx context.Context) (cl *execclient.Client, ok bool, err error) {
	sel, has := ctx.Value(envKey{}).(envSelection)
	switch {
	case !has:
		return nil, false, nil
	case sel.none:
		return nil, true, errNoEnvironment
	case sel.id == "local" && !c.hasEnvironment(sel.id):
		return nil, false, nil
	case c.cfg.Environments == nil:
		return nil, true, fmt.Errorf("environment `%s` is not configured", sel.id)
	}
	cl, err = c.cfg.Environments.Client(ctx, sel.id)
	if err != nil {
		return nil, true, fmt.Errorf("environment `%s`: %w", sel.id, err)
	}
	return cl, true, nil
}

// hasEnvironment: id is configured in the core's environments (the
// core's own exec-server stands for `local` when it is not).
func (c *Core) hasEnvironment(id string) bool {
	if l, ok := c.cfg.Environments.(environmentIDs); ok {
		return l.Has(id)
	}
	return false
}

// turnEnvironmentID is the environment ctx's turn selects ("" for the
// default or none).
func turnEnvironmentID(ctx context.Context) string {
	sel, _ := ctx.Value(envKey{}).(envSelection)
	return sel.id
}

// lostEnvironmentText ends the output of a command whose exec-server
// session was lost, naming the environment.
func lostEnvironmentText(id string, err error) string {
	return fmt.Sprintf("\n[the exec-server of environment `%s` was lost: %v]\n", id, err)
}

// environmentIDs is what package environment's Registry tells of its
// environments beyond selecting one: their ids (local first, the rest by
// id) and whether one is configured.
type environmentIDs interface {
	IDs() []string
	Has(id string) bool
}

// defaultEnvironment gives a thread that names no environment the
// defaults (defaultEnvironments).
func (c *Core) defaultEnvironment(s agent.Settings) agent.Settings {
	if s.Environments == nil {
		s.Environments = c.defaultEnvironments(s)
	}
	return s
}

// defaultEnvironments are the environments of a thread that names none,
// as Codex 0.169 gives them: the configured default (environments.toml's
// `default`; the core's own exec-server, `local`, when none is set) and
// then every other environment configured now, by id (Codex: in no fixed
// order), each in the thread's cwd with its workspace roots. nil when the
// core's own exec-server is the only one (the thread then follows its
// cwd); none for a default of "none".
func (c *Core) defaultEnvironments(s agent.Settings) []agent.Environment {
	d := c.cfg.DefaultEnvironment
	if d == "none" {
		return []agent.Environment{}
	}
	var ids []string
	if l, ok := c.cfg.Environments.(environmentIDs); ok {
		ids = l.IDs()
	}
	if d == "" {
		d = "local"
		if len(ids) == 0 || len(ids) == 1 && ids[0] == d {
			return nil
		}
	}
	roots := agent.WorkspaceRoots(s)
	env := func(id string) agent.Environment {
		return agent.Environment{ID: id, Cwd: s.Cwd, RuntimeWorkspaceRoots: slices.Clone(roots)}
	}
	envs := []agent.Environment{env(d)}
	for _, id := range ids {
		if id != d {
			envs = append(envs, env(id))
		}
	}
	return envs
}

// followCwd gives a thread whose overrides o name a cwd (even the one it
// has) or runtime workspace roots, and no environments, the defaults
// anew, in that cwd with those roots, as Codex 0.169 does, whatever
// environments it had; s is o applied.
func (c *Core) followCwd(o agent.Overrides, s agent.Settings) agent.Settings {
	if o.Cwd == nil && o.RuntimeWorkspaceRoots == nil || o.Environments != nil {
		return s
	}
	s.Environments = nil
	return c.defaultEnvironment(s)
}
