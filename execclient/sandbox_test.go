package execclient

import (
	"strings"
	"testing"

	"github.com/codexd/codexd/execproto"
)

// The sandbox member decodes as Codex's permission profile, with what
// each mode allows.
func TestSandboxWire(t *testing.T) {
	shape := func(s Sandbox) string {
		t.Helper()
		raw, err := s.wire()
		if err != nil {
			t.Fatal(err)
		}
		ctx, err := execproto.DecodeSandboxContext(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		var b strings.Builder
		b.WriteString(ctx.Permissions.Type + " " + ctx.Permissions.Network + " " + ctx.Cwd)
		for _, e := range ctx.Permissions.FileSystem.Entries {
			b.WriteString(" " + e.Path.Kind + e.Path.URI + ":" + e.Access)
		}
		return b.String()
	}
	if got, want := shape(Sandbox{Workspace: "/w"}), "managed restricted file:///w root:read"; got != want {
		t.Fatalf("read-only: %s, want %s", got, want)
	}
	ws := Sandbox{WorkspaceWrite: true, Workspace: "/w", WritableRoots: []string{"/x"}, Network: true}
	if got, want := shape(ws), "managed enabled file:///w root:read project_roots:write file:///x:write slash_tmp:write tmpdir:write"; got != want {
		t.Fatalf("workspace-write: %s, want %s", got, want)
	}
	ws.ExcludeSlashTmp, ws.ExcludeTmpdir = true, true
	if got, want := shape(ws), "managed enabled file:///w root:read project_roots:write file:///x:write"; got != want {
		t.Fatalf("without /tmp and $TMPDIR: %s, want %s", got, want)
	}
	if _, err := (Sandbox{Workspace: "rel"}).wire(); err == nil {
		t.Fatal("a relative workspace was accepted")
	}
}
