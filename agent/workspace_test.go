package agent

import (
	"slices"
	"testing"
)

func TestWorkspaceRoots(t *testing.T) {
	ws := SandboxPolicy{Mode: SandboxWorkspaceWrite, WritableRoots: []string{"/wr5", "rel", "/w/"}}
	for _, c := range []struct {
		name string
		s    Settings
		want []string
	}{
		{"derived: the cwd, then the writable roots", Settings{Cwd: "/w", Sandbox: ws}, []string{"/w", "/wr5", "/w/rel"}},
		// Codex 0.169: thread/start's runtimeWorkspaceRoots replace the
		// cwd and the writable roots.
		{"requested", Settings{Cwd: "/w", Sandbox: ws, RuntimeWorkspaceRoots: []string{"/rw1", "/rw1/", "r"}}, []string{"/rw1", "/w/r"}},
		{"requested none", Settings{Cwd: "/w", Sandbox: ws, RuntimeWorkspaceRoots: []string{}}, []string{}},
	} {
		if got := WorkspaceRoots(c.s); !slices.Equal(got, c.want) {
			t.Errorf("%s: WorkspaceRoots = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestOverridesApplyRuntimeWorkspaceRoots(t *testing.T) {
	roots := []string{"/rw2"}
	s := Overrides{RuntimeWorkspaceRoots: &roots}.Apply(Settings{Cwd: "/w"})
	roots[0] = "/changed"
	if !slices.Equal(s.RuntimeWorkspaceRoots, []string{"/rw2"}) {
		t.Fatalf("RuntimeWorkspaceRoots = %q, want a copy of [/rw2]", s.RuntimeWorkspaceRoots)
	}
	if s = (Overrides{}).Apply(s); !slices.Equal(s.RuntimeWorkspaceRoots, []string{"/rw2"}) {
		t.Fatalf("an override without roots changed them: %q", s.RuntimeWorkspaceRoots)
	}
}
