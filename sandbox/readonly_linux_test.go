package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// Under workspace-write, a writable root's .git (the directory, or the one
// a .git file points to), .codex and .agents stay read-only, as in Codex:
// a command that could write .git/hooks would plant a hook that runs
// unconfined at the user's next commit. The rest of the root stays
// writable, new top-level files included. On the main of 2026-12-02 the
// hook was written.
func TestWritableRootsKeepGitCodexAgentsReadOnly(t *testing.T) {
	needLandlock(t)
	t.Run("mount namespace", func(t *testing.T) { testReadOnlySubpaths(t, runWrapped) })
	// The second stage, as a helper without the privilege to mount starts
	// it: in a user namespace of its own.
	t.Run("user namespace", func(t *testing.T) {
		testReadOnlySubpaths(t, func(t *testing.T, p Policy, env []string, argv ...string) (int, string) {
			enc, err := encodePolicy(p)
			if err != nil {
				t.Fatal(err)
			}
			cmd := userNSCommand(self(t), append([]string{enc, "--"}, argv...), []string{"PATH=/usr/local/bin:/usr/bin:/bin", "TMPDIR="})
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Skipf("no user namespace here: %v", err)
			}
			return cmd.ProcessState.ExitCode(), string(out)
		})
	})
}

func testReadOnlySubpaths(t *testing.T, runWrapped func(*testing.T, Policy, []string, ...string) (int, string)) {
	ws, extra, other := t.TempDir(), t.TempDir(), t.TempDir()
	// extra is a worktree whose .git file points into other, which is
	// writable too: only the pointer says that directory is git's.
	gitdir := filepath.Join(other, "repo.git", "worktrees", "wt")
	mkdirs(t, filepath.Join(ws, ".git", "hooks"), filepath.Join(ws, ".codex"), filepath.Join(ws, ".agents"), filepath.Join(gitdir, "hooks"))
	writeTestFile(t, filepath.Join(ws, ".git", "HEAD"), "ref: refs/heads/main\n")
	writeTestFile(t, filepath.Join(ws, ".codex", "config.toml"), "")
	writeTestFile(t, filepath.Join(extra, ".git"), "gitdir: "+gitdir+"\n")
	p := workspacePolicy(ws)
	p.WritableRoots = []string{extra, other}

	for _, attempt := range []string{
		"echo evil > " + ws + "/.git/hooks/pre-commit",
		"echo evil >> " + ws + "/.git/HEAD",
		"rm " + ws + "/.git/HEAD",
		"mkdir " + ws + "/.git/new",
		"mv " + ws + "/.git " + ws + "/moved",
		"echo evil > " + ws + "/.codex/config.toml",
		"echo evil > " + ws + "/.agents/skill.md",
		"echo evil > " + gitdir + "/hooks/pre-commit",
		"echo evil > " + extra + "/.git",
		"rm " + extra + "/.git",
	} {
		code, out := runWrapped(t, p, nil, "sh", "-c", attempt)
		if code == 0 {
			t.Errorf("%q succeeded: %s", attempt, out)
		}
	}
	for _, f := range []string{ws + "/.git/hooks/pre-commit", ws + "/.git/new", ws + "/moved", ws + "/.agents/skill.md", gitdir + "/hooks/pre-commit"} {
		if exists(f) {
			t.Errorf("%s was created", f)
		}
	}
	for f, want := range map[string]string{ws + "/.git/HEAD": "ref: refs/heads/main\n", ws + "/.codex/config.toml": "", extra + "/.git": "gitdir: " + gitdir + "\n"} {
		if b, err := os.ReadFile(f); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v", f, b, err)
		}
	}
	// Everything else in the roots is writable, and .git is readable.
	code, out := runWrapped(t, p, nil, "sh", "-c", fmt.Sprintf(
		"cat %[1]s/.git/HEAD && echo a > %[1]s/new.txt && mkdir %[1]s/dir && echo b > %[1]s/dir/f && mv %[1]s/new.txt %[1]s/dir/ && echo c > %[2]s/in-worktree.txt",
		ws, extra))
	if code != 0 || !strings.Contains(out, "ref: refs/heads/main") || !exists(ws+"/dir/new.txt") || !exists(extra+"/in-worktree.txt") {
		t.Fatalf("writes elsewhere in the roots: exit %d %s", code, out)
	}
}

func writeTestFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
