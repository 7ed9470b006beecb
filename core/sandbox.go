package core

import (
	"errors"
	"fmt"
	"strings"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/execclient"
)

// Sandbox confines commands. The core wraps every sandboxed command line
// with it before handing it to the exec-server.
type Sandbox interface {
	// Available reports why the sandbox cannot confine commands here (nil
	// when it can).
	Available() error
	// Wrap returns the argv that runs argv under policy, with workspace
	// (the thread's cwd) as the directory workspace-write may write under.
	Wrap(policy agent.SandboxPolicy, workspace string, argv []string) ([]string, error)
	// Denied guesses whether a failed command failed because the sandbox
	// denied it.
	Denied(exitCode int, output string) bool
}

// ErrSandboxUnavailable: read-only and workspace-write cannot be enforced
// on this machine.
var ErrSandboxUnavailable = errors.New("sandbox unavailable")

// noSandbox is the sandbox of a machine without one: it refuses to run
// anything that should be confined, rather than pretend.
type noSandbox struct{ why error }

func (n noSandbox) Available() error { return n.why }

func (n noSandbox) Wrap(p agent.SandboxPolicy, cwd string, argv []string) ([]string, error) {
	switch p.Mode {
	case agent.SandboxDangerFullAccess, agent.SandboxExternal:
		return argv, nil
	}
	return nil, fmt.Errorf("%w: sandbox_mode %q cannot be enforced (%v); run with sandbox_mode \"danger-full-access\" to allow unconfined commands", ErrSandboxUnavailable, p.Mode, n.why)
}

func (noSandbox) Denied(code int, out string) bool { return deniedHeuristic(code, out) }

// deniedHeuristic is Codex's is_likely_sandbox_denied: a non-zero exit
// whose output names a permission failure.
func deniedHeuristic(code int, out string) bool {
	if code == 0 {
		return false
	}
	lower := strings.ToLower(out)
	for _, k := range []string{"operation not permitted", "permission denied", "read-only file system", "seccomp", "sandbox", "landlock", "failed to write file"} {
		if strings.Contains(lower, k) {
			return true
		}
	}
	return false
}

// serverSandbox is policy as an exec-server applies it (nil when the
// command runs unconfined), with workspace as the directory
// workspace-write may write under.
func serverSandbox(p agent.SandboxPolicy, workspace string) *execclient.Sandbox {
	switch p.Mode {
	case agent.SandboxReadOnly, agent.SandboxWorkspaceWrite:
	default: // danger-full-access, external: nothing to confine
		return nil
	}
	return &execclient.Sandbox{
		WorkspaceWrite: p.Mode == agent.SandboxWorkspaceWrite, Workspace: workspace,
		WritableRoots: p.WritableRoots, Network: p.NetworkAccess,
		ExcludeSlashTmp: p.ExcludeSlashTmp, ExcludeTmpdir: p.ExcludeTmpdirEnvVar,
	}
}

// commandSandbox is the sandbox policy of s as commands and patches are
// confined by it: under workspace-write, the workspace roots (the ones the
// client asked for, or the derived ones) are writable besides the cwd and
// the configured roots, as the model is told (writablePaths) and as
// Codex 0.169 reports them in the thread's sandbox policy. A root that
// does not exist is skipped by the sandbox, the cwd never.
func commandSandbox(s agent.Settings) agent.SandboxPolicy {
	p := s.Sandbox
	if p.Mode == agent.SandboxWorkspaceWrite {
		p.WritableRoots = writablePaths(s)
	}
	return p
}
