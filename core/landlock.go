package core

import (
	"errors"
	"fmt"
	"os"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/sandbox"
)

// LandlockSandbox confines commands with the sandbox package (Landlock
// through a re-exec helper of this program).
type LandlockSandbox struct {
	// Self is the path of the codexd binary the in-process exec-server's
	// commands are wrapped with (default: os.Executable). The program must
	// call sandbox.RunHelperIfRequested first thing in main. Commands for
	// any other exec-server are not wrapped: they carry the sandbox to it
	// (process/start's sandbox member), which confines them with its own
	// helper, on its own machine.
	Self string
	// Remote skips the local Landlock check (the default exec-server is
	// not in this process): the exec-server checks where the command
	// runs, and refuses there.
	Remote bool
}

func (l LandlockSandbox) self() (string, error) {
	if l.Self != "" {
		return l.Self, nil
	}
	return os.Executable()
}

// Available reports whether Landlock works on this machine.
func (l LandlockSandbox) Available() error {
	if l.Remote {
		return nil
	}
	_, err := sandbox.Available()
	return err
}

// Wrap returns argv confined by p, with workspace as the directory
// workspace-write may write under.
func (l LandlockSandbox) Wrap(p agent.SandboxPolicy, workspace string, argv []string) ([]string, error) {
	mode := sandbox.Mode(p.Mode)
	if p.Mode == agent.SandboxExternal {
		return argv, nil
	}
	if !l.Remote {
		if err := sandbox.Check(mode); err != nil {
			if errors.Is(err, sandbox.ErrUnavailable) {
				return nil, fmt.Errorf("%w: sandbox_mode %q cannot be enforced: %v; run with sandbox_mode \"danger-full-access\" to allow unconfined commands", ErrSandboxUnavailable, p.Mode, err)
			}
			return nil, err
		}
	}
	self, err := l.self()
	if err != nil {
		return nil, fmt.Errorf("finding the sandbox helper: %w", err)
	}
	return sandbox.Wrap(sandbox.Policy{
		Mode: mode, Cwd: workspace, WritableRoots: p.WritableRoots, NetworkAccess: p.NetworkAccess,
		ExcludeTmpdirEnvVar: p.ExcludeTmpdirEnvVar, ExcludeSlashTmp: p.ExcludeSlashTmp,
	}, argv, self)
}

// Denied guesses whether a failure was the sandbox's doing.
func (l LandlockSandbox) Denied(code int, output string) bool {
	return sandbox.LikelyDenied(sandbox.ReadOnly, code, output)
}
