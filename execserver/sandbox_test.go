//go:build linux

package execserver

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexd/codexd/execproto"
	"github.com/codexd/codexd/jsonrpc"
	"github.com/codexd/codexd/sandbox"
)

// codexSandbox is the sandbox member Codex 0.169's app-server sends for a
// turn under read-only (no write entry) or workspace-write (the project
// root writable, its .git and .codex read-only), as captured from it.
func codexSandbox(work string, writable bool) map[string]any {
	entries := []any{map[string]any{"path": map[string]any{"type": "special", "value": map[string]any{"kind": "root"}}, "access": "read"}}
	if writable {
		entries = append(entries,
			map[string]any{"path": map[string]any{"type": "special", "value": map[string]any{"kind": "project_roots"}}, "access": "write"},
			map[string]any{"path": map[string]any{"type": "special", "value": map[string]any{"kind": "project_roots", "subpath": ".git"}}, "access": "read", "missing_path_behavior": "skip"},
			map[string]any{"path": map[string]any{"type": "special", "value": map[string]any{"kind": "project_roots", "subpath": ".aws"}}, "access": "read", "missing_path_behavior": "skip"})
	}
	return map[string]any{
		"permissions": map[string]any{"type": "managed", "file_system": map[string]any{"type": "restricted", "entries": entries}, "network": "restricted"},
		"cwd":         execproto.PathURI(work), "workspaceRoots": []string{execproto.PathURI(work)},
		"windowsSandboxLevel": "disabled", "windowsSandboxProxySettingsMode": "reconcile", "useLegacyLandlock": false,
	}
}

func needLandlock(t *testing.T) {
	t.Helper()
	if _, err := sandbox.Available(); err != nil {
		t.Skipf("this kernel cannot confine commands, so there is nothing to enforce: %v", err)
	}
}

func call(c *client, method string, params any) (json.RawMessage, error) {
	var res json.RawMessage
	err := c.conn.Call(context.Background(), method, params, &res)
	return res, err
}

func rpcErr(t *testing.T, err error) *jsonrpc.Error {
	t.Helper()
	var e *jsonrpc.Error
	if !errors.As(err, &e) {
		t.Fatalf("want a JSON-RPC error, got %v", err)
	}
	return e
}

func existsPath(p string) bool { _, err := os.Lstat(p); return err == nil }

// runConfined starts sh -c script under sb and waits for it to close.
func runConfined(t *testing.T, c *client, id, cwd, script string, sb any) json.RawMessage {
	t.Helper()
	res, err := call(c, execproto.MethodProcessStart, map[string]any{"processId": id, "argv": []string{"sh", "-c", script},
		"cwd": execproto.PathURI(cwd), "env": map[string]string{"PATH": os.Getenv("PATH")}, "tty": false, "sandbox": sb})
	if err != nil {
		t.Fatalf("start %s: %v", id, err)
	}
	for {
		n := within(t, c.closed, id+" closed")
		if n.ProcessID == id {
			return res
		}
	}
}

// TestProcessStartEnforcesTheSandboxMember: a process/start carrying
// Codex's sandbox runs confined by it, and says so (sandboxType
// linuxSeccomp, as Codex's own exec-server answers). codexd ignored the
// member and ran the command unconfined.
func TestProcessStartEnforcesTheSandboxMember(t *testing.T) {
	needLandlock(t)
	_, url := newTestServer(t, Config{})
	c := connect(t, url, "")
	work, outside := t.TempDir(), t.TempDir()
	res := runConfined(t, c, "ro", work, "touch "+filepath.Join(work, "ro"), codexSandbox(work, false))
	if existsPath(filepath.Join(work, "ro")) {
		t.Fatal("a read-only sandbox let the command write its cwd")
	}
	if !strings.Contains(string(res), `"sandboxType":"linuxSeccomp"`) {
		t.Errorf("confined start answered %s", res)
	}
	runConfined(t, c, "ww", work, "touch "+filepath.Join(work, "ww")+" "+filepath.Join(outside, "ww"), codexSandbox(work, true))
	if !existsPath(filepath.Join(work, "ww")) || existsPath(filepath.Join(outside, "ww")) {
		t.Fatalf("workspace-write: in the project root %v (want true), outside it %v (want false)",
			existsPath(filepath.Join(work, "ww")), existsPath(filepath.Join(outside, "ww")))
	}
	// No sandbox, or a disabled one: unconfined, as before.
	res = runConfined(t, c, "none", work, "touch "+filepath.Join(outside, "none"), nil)
	if !existsPath(filepath.Join(outside, "none")) || !strings.Contains(string(res), `"sandboxType":"none"`) {
		t.Fatalf("no sandbox: %s", res)
	}
	runConfined(t, c, "off", work, "touch "+filepath.Join(outside, "off"), map[string]any{"permissions": map[string]any{"type": "disabled"}, "windowsSandboxLevel": "disabled"})
	if !existsPath(filepath.Join(outside, "off")) {
		t.Fatal("a disabled sandbox did not run unconfined")
	}
}

// TestFsMethodsEnforceTheSandboxMember: fs requests are checked against
// their sandbox with the errors Codex's sandboxed file access gives.
func TestFsMethodsEnforceTheSandboxMember(t *testing.T) {
	_, url := newTestServer(t, Config{})
	c := connect(t, url, "")
	work := t.TempDir()
	if err := os.Mkdir(filepath.Join(work, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	ro, ww := codexSandbox(work, false), codexSandbox(work, true)
	write := func(name string, sb any) error {
		_, err := call(c, execproto.MethodFsWriteFile, map[string]any{"path": execproto.PathURI(filepath.Join(work, name)), "dataBase64": "eA==", "sandbox": sb})
		return err
	}
	if err := write("a", ro); rpcErr(t, err).Code != -32603 || rpcErr(t, err).Message != "Read-only file system (os error 30)" || existsPath(filepath.Join(work, "a")) {
		t.Fatalf("write under read-only: %v", err)
	}
	if err := write("b", ww); err != nil || !existsPath(filepath.Join(work, "b")) {
		t.Fatalf("write in the project root under workspace-write: %v", err)
	}
	if err := write(".git/hook", ww); err == nil || existsPath(filepath.Join(work, ".git/hook")) {
		t.Fatalf("write into .git under workspace-write: %v", err)
	}
	if _, err := call(c, execproto.MethodFsCopy, map[string]any{"sourcePath": execproto.PathURI(filepath.Join(work, "b")),
		"destinationPath": execproto.PathURI(filepath.Join(work, "c")), "recursive": false, "sandbox": ro}); err == nil || existsPath(filepath.Join(work, "c")) {
		t.Fatalf("copy under read-only: %v", err)
	}
	if _, err := call(c, execproto.MethodFsRemove, map[string]any{"path": execproto.PathURI(filepath.Join(work, "b")), "sandbox": ro}); err == nil || !existsPath(filepath.Join(work, "b")) {
		t.Fatalf("remove under read-only: %v", err)
	}
	// Reads: allowed under root read; a path a "none" entry covers is
	// refused, one no entry covers is missing.
	if _, err := call(c, execproto.MethodFsReadFile, map[string]any{"path": execproto.PathURI(filepath.Join(work, "b")), "sandbox": ro}); err != nil {
		t.Fatalf("read under read-only: %v", err)
	}
	deny := codexSandbox(work, false)
	perms := deny["permissions"].(map[string]any)["file_system"].(map[string]any)
	perms["entries"] = append(perms["entries"].([]any), map[string]any{"path": map[string]any{"type": "path", "path": execproto.PathURI(filepath.Join(work, "b"))}, "access": "none"})
	if _, err := call(c, execproto.MethodFsReadFile, map[string]any{"path": execproto.PathURI(filepath.Join(work, "b")), "sandbox": deny}); rpcErr(t, err).Code != -32600 || rpcErr(t, err).Message != "Permission denied (os error 13)" {
		t.Fatalf("read of a denied path: %v", err)
	}
	hidden := map[string]any{"permissions": map[string]any{"type": "managed", "file_system": map[string]any{"type": "restricted", "entries": []any{}}, "network": "restricted"}, "windowsSandboxLevel": "disabled"}
	if _, err := call(c, execproto.MethodFsGetMetadata, map[string]any{"path": execproto.PathURI(filepath.Join(work, "b")), "sandbox": hidden}); rpcErr(t, err).Code != -32004 {
		t.Fatalf("metadata of a path no entry covers: %v", err)
	}
	// Codex's decoding refusals.
	for _, tc := range []struct {
		sb   any
		want string
	}{
		{map[string]any{}, "missing field `permissions`"},
		{map[string]any{"permissions": map[string]any{"type": "disabled"}}, "missing field `windowsSandboxLevel`"},
		{map[string]any{"permissions": map[string]any{"type": "bogus"}, "windowsSandboxLevel": "disabled"}, "unknown variant `bogus`, expected one of `managed`, `disabled`, `external`"},
	} {
		_, err := call(c, execproto.MethodFsReadFile, map[string]any{"path": execproto.PathURI(filepath.Join(work, "b")), "sandbox": tc.sb})
		if e := rpcErr(t, err); e.Code != -32602 || e.Message != tc.want {
			t.Errorf("sandbox %v: %d %s, want -32602 %s", tc.sb, e.Code, e.Message, tc.want)
		}
	}
}

// TestProcessStartRefusesAnUnenforceableSandbox: what Landlock cannot
// express, or a kernel without Landlock, is refused; nothing runs.
func TestProcessStartRefusesAnUnenforceableSandbox(t *testing.T) {
	_, url := newTestServer(t, Config{})
	c := connect(t, url, "")
	work := t.TempDir()
	start := func(id string, sb any) error {
		_, err := call(c, execproto.MethodProcessStart, map[string]any{"processId": id, "argv": []string{"touch", filepath.Join(work, id)},
			"cwd": execproto.PathURI(work), "env": map[string]string{"PATH": os.Getenv("PATH")}, "tty": false, "sandbox": sb})
		return err
	}
	noRoot := map[string]any{"permissions": map[string]any{"type": "managed", "file_system": map[string]any{"type": "restricted", "entries": []any{
		map[string]any{"path": map[string]any{"type": "special", "value": map[string]any{"kind": "project_roots"}}, "access": "write"}}}, "network": "restricted"},
		"cwd": execproto.PathURI(work), "windowsSandboxLevel": "disabled"}
	if err := start("noroot", noRoot); rpcErr(t, err).Code != -32600 || !strings.Contains(err.Error(), "cannot enforce the requested sandbox") || existsPath(filepath.Join(work, "noroot")) {
		t.Fatalf("a sandbox that limits reads: %v", err)
	}
	old := sandboxCheck
	sandboxCheck = func(m sandbox.Mode) error {
		return errors.New("the read-only sandbox cannot be enforced: no Landlock here")
	}
	t.Cleanup(func() { sandboxCheck = old })
	if err := start("nolandlock", codexSandbox(work, false)); rpcErr(t, err).Code != -32603 || !strings.Contains(err.Error(), "cannot be enforced") || existsPath(filepath.Join(work, "nolandlock")) {
		t.Fatalf("no Landlock: %v", err)
	}
}
