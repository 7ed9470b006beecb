package core

import (
	"context"
	"io/fs"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/sandbox"
)

// writeRoots are where the thread's sandbox lets a command write, as the
// sandbox package resolves them on the machine that runs the commands: a
// patch is applied without asking exactly where a command could have
// written it, as Codex decides.
type writeRoots struct {
	all   bool // danger-full-access, or a sandbox the caller provides
	roots []sandbox.WritableRoot
}

// allows reports whether a command could write path (absolute, clean).
func (w writeRoots) allows(path string) bool {
	if w.all {
		return true
	}
	for _, r := range w.roots {
		if r.IsPathWritable(path) {
			return true
		}
	}
	return false
}

// sandboxRoots resolves the writable roots of s through fsys (the
// exec-server's filesystem), with the commands' $TMPDIR. Read-only (or an
// unknown mode) writes nowhere.
func sandboxRoots(ctx context.Context, fsys execFS, s agent.Settings) writeRoots {
	switch s.Sandbox.Mode {
	case agent.SandboxDangerFullAccess, agent.SandboxExternal:
		return writeRoots{all: true}
	case agent.SandboxWorkspaceWrite:
	default:
		return writeRoots{}
	}
	p := sandbox.Policy{
		Mode: sandbox.WorkspaceWrite, Cwd: s.Cwd, WritableRoots: s.Sandbox.WritableRoots,
		ExcludeTmpdirEnvVar: s.Sandbox.ExcludeTmpdirEnvVar, ExcludeSlashTmp: s.Sandbox.ExcludeSlashTmp,
	}
	env := commandEnv()
	return writeRoots{roots: p.ResolveWritableRootsOn(sandbox.Host{
		Getenv: func(k string) string { return env[k] },
		Stat: func(path string) (fs.FileMode, error) {
			m, err := fsys.metadata(ctx, path, true)
			switch {
			case err != nil:
				return 0, err
			case m.IsDirectory:
				return fs.ModeDir, nil
			case m.IsFile:
				return 0, nil
			}
			return fs.ModeIrregular, nil
		},
		ReadFile: func(path string) ([]byte, error) { return fsys.ReadFile(ctx, path) },
	})}
}
