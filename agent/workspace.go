package agent

import "path"

// WorkspaceRoots are the runtime workspace roots of a thread that names
// no environment, as Codex 0.169 derives them: the roots the client asked
// for (Settings.RuntimeWorkspaceRoots), when it did; otherwise the
// thread's cwd, then the configured writable roots
// (sandbox_workspace_write.writable_roots, of config.toml or the request),
// whatever the sandbox. Each is cleaned (a relative one against the cwd)
// and listed once.
func WorkspaceRoots(s Settings) []string {
	var roots, from []string
	if s.RuntimeWorkspaceRoots != nil {
		roots, from = []string{}, s.RuntimeWorkspaceRoots
	} else {
		roots, from = []string{path.Clean(s.Cwd)}, s.Sandbox.WritableRoots
	}
	for _, r := range from {
		if !path.IsAbs(r) {
			r = path.Join(s.Cwd, r)
		}
		if r = path.Clean(r); !contains(roots, r) {
			roots = append(roots, r)
		}
	}
	return roots
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
