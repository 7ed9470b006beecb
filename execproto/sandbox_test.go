package execproto

import (
	"encoding/json"
	"errors"
	"testing"
)

const codexReadOnlySandbox = `{"permissions":{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"read"},{"path":{"type":"special","value":{"kind":"project_roots","subpath":".git"}},"access":"read","missing_path_behavior":"skip"},{"path":{"type":"path","path":"file:///var/tmp"},"access":"write"}]},"network":"restricted"},"cwd":"file:///w","workspaceRoots":["file:///w"],"windowsSandboxLevel":"disabled","windowsSandboxProxySettingsMode":"reconcile","useLegacyLandlock":false}`

func TestDecodeSandboxContext(t *testing.T) {
	sc, err := DecodeSandboxContext(json.RawMessage(codexReadOnlySandbox))
	if err != nil {
		t.Fatal(err)
	}
	p := sc.Permissions
	if p.Type != PermissionsManaged || p.Network != "restricted" || p.FileSystem.Type != "restricted" || len(p.FileSystem.Entries) != 3 ||
		sc.Cwd != "file:///w" || len(sc.WorkspaceRoots) != 1 {
		t.Fatalf("decoded %+v", sc)
	}
	e := p.FileSystem.Entries
	if e[0].Path.Kind != "root" || e[1].Path.Subpath != ".git" || e[1].MissingPathBehavior != "skip" || e[2].Path.URI != "file:///var/tmp" || e[2].Access != "write" {
		t.Fatalf("entries %+v", e)
	}
	for raw, want := range map[string]string{
		`{}`:                                  "missing field `permissions`",
		`{"permissions":{"type":"disabled"}}`: "missing field `windowsSandboxLevel`",
		`{"permissions":{"type":"x"},"windowsSandboxLevel":"disabled"}`:                              "unknown variant `x`, expected one of `managed`, `disabled`, `external`",
		`{"permissions":{"type":"managed","network":"restricted"},"windowsSandboxLevel":"disabled"}`: "missing field `file_system`",
		`{"permissions":{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"special","value":{"kind":"wat"}},"access":"read"}]},"network":"restricted"},"windowsSandboxLevel":"disabled"}`: "unknown variant `wat`, expected one of `root`, `minimal`, `current_working_directory`, `project_roots`, `tmpdir`, `slash_tmp`, `unknown`",
		`5`: "sandbox: expected struct WireFileSystemSandboxContext",
	} {
		_, err := DecodeSandboxContext(json.RawMessage(raw))
		var pe *ParamsError
		if !errors.As(err, &pe) || pe.Message != want {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
}

// FuzzDecodeSandboxContext: any input decodes or is refused with a
// ParamsError; nothing panics.
func FuzzDecodeSandboxContext(f *testing.F) {
	f.Add([]byte(codexReadOnlySandbox))
	f.Add([]byte(`{"permissions":{"type":"external","network":"enabled"},"windowsSandboxLevel":"disabled","policyContext":{"cwd":"file:///x"}}`))
	f.Add([]byte(`{"permissions":{"type":"managed","file_system":{"type":"unrestricted"},"network":"enabled"},"windowsSandboxLevel":"disabled"}`))
	f.Add([]byte(`{"permissions":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		sc, err := DecodeSandboxContext(json.RawMessage(b))
		var pe *ParamsError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("%q: error %v is not a ParamsError", b, err)
		}
		if err == nil && sc == nil {
			t.Fatalf("%q: no context and no error", b)
		}
	})
}
