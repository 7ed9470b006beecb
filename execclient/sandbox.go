package execclient

import (
	"encoding/json"
	"errors"
	"path/filepath"

	"github.com/codexd/codexd/execproto"
)

// Sandbox asks the exec-server to confine a process itself (process/start's
// sandbox member, Codex's permission profile), with the sandbox helper of
// the machine it runs on. A remote exec-server must be asked so: a command
// wrapped by the caller names the caller's helper path, which means nothing
// on another machine.
type Sandbox struct {
	// WorkspaceWrite allows writes under Workspace, WritableRoots, /tmp
	// (unless ExcludeSlashTmp) and the server's $TMPDIR (unless
	// ExcludeTmpdir); otherwise the process may write nowhere (read-only).
	// Either way it may read everywhere.
	WorkspaceWrite  bool
	Workspace       string // absolute path on the server's machine
	WritableRoots   []string
	Network         bool
	ExcludeSlashTmp bool
	ExcludeTmpdir   bool
}

// wire is s as process/start's sandbox member, in the shape Codex 0.169
// sends (a managed profile of special paths, the workspace as the project
// root).
func (s Sandbox) wire() (json.RawMessage, error) {
	if !filepath.IsAbs(s.Workspace) {
		return nil, errors.New("execclient: the sandbox's workspace must be an absolute path")
	}
	special := func(kind, access string) map[string]any {
		return map[string]any{"path": map[string]any{"type": "special", "value": map[string]any{"kind": kind}}, "access": access}
	}
	entries := []any{special("root", "read")}
	if s.WorkspaceWrite {
		entries = append(entries, special("project_roots", "write"))
		for _, r := range s.WritableRoots {
			if !filepath.IsAbs(r) {
				return nil, errors.New("execclient: a sandbox's writable root must be an absolute path")
			}
			entries = append(entries, map[string]any{"path": map[string]any{"type": "path", "path": execproto.PathURI(r)}, "access": "write"})
		}
		if !s.ExcludeSlashTmp {
			entries = append(entries, special("slash_tmp", "write"))
		}
		if !s.ExcludeTmpdir {
			entries = append(entries, special("tmpdir", "write"))
		}
	}
	network := "restricted"
	if s.Network {
		network = "enabled"
	}
	ws := execproto.PathURI(s.Workspace)
	return json.Marshal(map[string]any{
		"permissions": map[string]any{"type": "managed",
			"file_system": map[string]any{"type": "restricted", "entries": entries}, "network": network},
		"cwd": ws, "workspaceRoots": []string{ws}, "windowsSandboxLevel": "disabled",
	})
}
