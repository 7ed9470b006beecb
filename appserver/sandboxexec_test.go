//go:build linux

package appserver

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/sandbox"
)

// needLandlock skips a test that runs confined commands on a kernel that
// cannot confine them (the refusal itself is tested with a fake check).
func needLandlock(t *testing.T) {
	t.Helper()
	if _, err := sandbox.Available(); err != nil {
		t.Skipf("this kernel cannot confine commands, so there is nothing to enforce: %v", err)
	}
}

func readOnlyEnv(t *testing.T, work string) *env {
	t.Helper()
	return newEnv(t, agenttest.Options{Config: agent.Config{Settings: agent.Settings{
		Cwd: work, Sandbox: agent.SandboxPolicy{Mode: agent.SandboxReadOnly}}}}, Config{})
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// TestCommandExecRunsUnderTheConfiguredSandbox: with the server's sandbox
// read-only, command/exec may not write outside the writable roots, as in
// Codex (which answers exit code 1 and touch's "Read-only file system";
// Landlock's refusal reads "Permission denied").
func TestCommandExecRunsUnderTheConfiguredSandbox(t *testing.T) {
	needLandlock(t)
	work, outside := t.TempDir(), t.TempDir()
	e := readOnlyEnv(t, work)
	c := e.dial("exec")
	c.initialize(map[string]any{"experimentalApi": true})
	target := filepath.Join(outside, "x")
	r := c.call(appproto.MethodCommandExec, map[string]any{"command": []string{"sh", "-c", "touch " + target}})
	if exists(target) {
		t.Fatalf("a read-only command/exec wrote %s: %s", target, r.raw)
	}
	if !strings.Contains(string(r.Result), `"exitCode":1`) || !strings.Contains(r.str(t, "/stderr"), "touch: cannot touch") {
		t.Fatalf("denied write: %s", r.raw)
	}
	// Reading is allowed.
	if r := c.call(appproto.MethodCommandExec, map[string]any{"command": []string{"sh", "-c", "echo ok"}, "cwd": work}); r.str(t, "/stdout") != "ok\n" {
		t.Fatalf("read-only echo: %s", r.raw)
	}
}

// TestCommandExecRequestSandbox: the request's sandboxPolicy or
// permissionProfile replaces the configured sandbox, and is enforced.
func TestCommandExecRequestSandbox(t *testing.T) {
	needLandlock(t)
	work, outside := t.TempDir(), t.TempDir()
	e := readOnlyEnv(t, work)
	c := e.dial("exec")
	c.initialize(map[string]any{"experimentalApi": true})
	touch := func(name string, extra map[string]any) string {
		target := filepath.Join(outside, name)
		params := map[string]any{"command": []string{"sh", "-c", "touch " + target}}
		for k, v := range extra {
			params[k] = v
		}
		c.call(appproto.MethodCommandExec, params)
		if exists(target) {
			return "written"
		}
		return "denied"
	}
	for _, tc := range []struct {
		name  string
		extra map[string]any
		want  string
	}{
		{"full", map[string]any{"sandboxPolicy": map[string]any{"type": "dangerFullAccess"}}, "written"},
		{"external", map[string]any{"sandboxPolicy": map[string]any{"type": "externalSandbox"}}, "written"},
		{"ro", map[string]any{"sandboxPolicy": map[string]any{"type": "readOnly", "networkAccess": true}}, "denied"},
		{"ww-root", map[string]any{"sandboxPolicy": map[string]any{"type": "workspaceWrite", "writableRoots": []string{outside}}}, "written"},
		// The workspace of a sandboxPolicy is the server's cwd, not the
		// command's (Codex's sandbox_cwd).
		{"ww-cwd", map[string]any{"sandboxPolicy": map[string]any{"type": "workspaceWrite", "excludeSlashTmp": true, "excludeTmpdirEnvVar": true}, "cwd": outside}, "denied"},
		// A permission profile's workspace is the command's cwd.
		{"profile-ws", map[string]any{"permissionProfile": ":workspace", "cwd": outside}, "written"},
		{"profile-ro", map[string]any{"permissionProfile": ":read-only", "cwd": outside}, "denied"},
		{"profile-full", map[string]any{"permissionProfile": ":danger-full-access"}, "written"},
	} {
		if got := touch(tc.name, tc.extra); got != tc.want {
			t.Errorf("%s (%v): %s, want %s", tc.name, tc.extra, got, tc.want)
		}
	}
	// Codex's refusals, with its codes and messages.
	if err := c.callErr(appproto.MethodCommandExec, map[string]any{"command": []string{"true"}, "permissionProfile": ":nope"}); err.Code != -32600 ||
		err.Message != "invalid permission profile: default_permissions refers to unknown built-in profile `:nope`" {
		t.Errorf("unknown profile: %d %s", err.Code, err.Message)
	}
	if err := c.callErr(appproto.MethodCommandExec, map[string]any{"command": []string{"true"}, "permissionProfile": ":read-only",
		"sandboxPolicy": map[string]any{"type": "readOnly"}}); err.Code != -32600 || err.Message != "`permissionProfile` cannot be combined with `sandboxPolicy`" {
		t.Errorf("both: %d %s", err.Code, err.Message)
	}
}

// TestCommandExecRefusesAnUnenforceableSandbox: where the kernel cannot
// confine, a confined command/exec is refused with a message saying so,
// and nothing runs; danger-full-access still runs.
func TestCommandExecRefusesAnUnenforceableSandbox(t *testing.T) {
	work, outside := t.TempDir(), t.TempDir()
	e := readOnlyEnv(t, work)
	e.srv.sandboxCheck = func(m sandbox.Mode) error {
		if m.Confined() {
			return errors.New("the read-only sandbox cannot be enforced: sandbox: Landlock is not available on this kernel")
		}
		return nil
	}
	c := e.dial("exec")
	c.initialize(map[string]any{"experimentalApi": true})
	target := filepath.Join(outside, "x")
	err := c.callErr(appproto.MethodCommandExec, map[string]any{"command": []string{"sh", "-c", "touch " + target}})
	if err.Code != -32603 || !strings.Contains(err.Message, "cannot be enforced") || exists(target) {
		t.Fatalf("unenforceable sandbox: %d %s (written: %v)", err.Code, err.Message, exists(target))
	}
	c.call(appproto.MethodCommandExec, map[string]any{"command": []string{"sh", "-c", "touch " + target}, "sandboxPolicy": map[string]any{"type": "dangerFullAccess"}})
	if !exists(target) {
		t.Fatal("danger-full-access did not run")
	}
}
