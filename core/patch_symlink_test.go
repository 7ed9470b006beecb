package core

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/tools"
)

// Tests of patches whose paths lead out of the workspace through symbolic
// links. Every "home" is a temporary directory; /tmp and $TMPDIR are kept
// out of the writable roots so that only the workspace is writable.

func workspaceOnly(a agent.ApprovalPolicy) agent.Overrides {
	return agent.Overrides{Approval: policy(a), Sandbox: &agent.SandboxPolicy{
		Mode: agent.SandboxWorkspaceWrite, ExcludeSlashTmp: true, ExcludeTmpdirEnvVar: true,
	}}
}

const refusedOutside = "patch rejected: writing outside of the project; rejected by user approval settings"

func updateNotes(path string) string {
	return "*** Begin Patch\n*** Update File: " + path + "\n@@\n-original\n+pwned\n*** End Patch"
}

// TestPatchThroughASymlinkOutOfTheWorkspace: a sandboxed `ln -s
// ~/.bashrc notes.txt`, then a patch of notes.txt. The core used to
// auto-approve it (notes.txt is in the workspace) and write ~/.bashrc
// through the exec-server's unsandboxed fs calls. It writes outside the
// writable roots, so it goes through approval as any such patch: refused
// under never, asked (naming where it leads) under on-request.
func TestPatchThroughASymlinkOutOfTheWorkspace(t *testing.T) {
	for _, p := range []agent.ApprovalPolicy{agent.ApprovalNever, agent.ApprovalOnRequest} {
		t.Run(string(p), func(t *testing.T) {
			home := t.TempDir()
			bashrc := filepath.Join(home, ".bashrc")
			writeFile(t, bashrc, "original\n")
			m := newFakeModel(
				callResponse("call_1", "exec_command", map[string]any{"cmd": "ln -s " + bashrc + " notes.txt"}),
				callResponse("call_2", "apply_patch", map[string]any{"input": updateNotes("notes.txt")}),
				textResponse("msg_3", "done"),
			)
			h := newHarness(t, m, nil)
			th := h.start(workspaceOnly(p))
			h.submit(th, agent.UserInput{Input: text("go")})
			var evs []agent.Event
			if p == agent.ApprovalOnRequest {
				evs = until(t, th, func(ev agent.Event) bool { return isPatchApproval(ev) || isTurnCompleted(ev) })
				req, ok := evs[len(evs)-1].Msg.(agent.PatchApprovalRequest)
				if !ok {
					t.Fatalf("no approval asked: %s", describe(evs))
				}
				if !strings.Contains(req.Reason, bashrc) {
					t.Errorf("the request does not say where the write leads: %q", req.Reason)
				}
				h.submit(th, agent.PatchDecision{CallID: "call_2", Decision: agent.Decline})
			}
			evs = until(t, th, isTurnCompleted)
			if got := readFile(t, bashrc); got != "original\n" {
				t.Fatalf("~/.bashrc is now %q", got)
			}
			m.request(t)
			m.request(t)
			out := lastOutput(t, m.request(t), "call_2")
			want := refusedOutside
			if p == agent.ApprovalOnRequest {
				want = tools.PatchRejectedByUser
			}
			if out != want {
				t.Fatalf("model got %q: %s", out, describe(evs))
			}
		})
	}
}

// TestPatchThroughSymlinkedPathsOutOfTheWorkspace: the other ways a path
// in the workspace leads out of it: a symlinked directory, a symlink to a
// file that does not exist yet (written through, it would create it), a
// move whose destination is a symlink.
func TestPatchThroughSymlinkedPathsOutOfTheWorkspace(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "target.txt"), "original\n")
	cases := []struct {
		name, patch string
		setup       func(ws string)
		want        string // the model's output starts with it
	}{
		{"directory", "*** Begin Patch\n*** Add File: linkdir/new.txt\n+pwned\n*** End Patch",
			func(ws string) { symlink(t, home, filepath.Join(ws, "linkdir")) }, refusedOutside},
		{"dangling", "*** Begin Patch\n*** Add File: dangling.txt\n+pwned\n*** End Patch",
			func(ws string) { symlink(t, filepath.Join(home, "created.txt"), filepath.Join(ws, "dangling.txt")) },
			tools.PatchVerifyFailedText},
		{"move", "*** Begin Patch\n*** Update File: mine.txt\n*** Move to: moved.txt\n@@\n-original\n+pwned\n*** End Patch",
			func(ws string) {
				writeFile(t, filepath.Join(ws, "mine.txt"), "original\n")
				symlink(t, filepath.Join(home, "target.txt"), filepath.Join(ws, "moved.txt"))
			}, refusedOutside},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newFakeModel(
				callResponse("call_1", "apply_patch", map[string]any{"input": c.patch}),
				textResponse("msg_2", "done"),
			)
			h := newHarness(t, m, nil)
			c.setup(h.dir)
			th := h.start(workspaceOnly(agent.ApprovalNever))
			h.submit(th, agent.UserInput{Input: text("go")})
			until(t, th, isTurnCompleted)
			m.request(t)
			if out := lastOutput(t, m.request(t), "call_1"); !strings.HasPrefix(out, c.want) {
				t.Errorf("model got %q", out)
			}
			ents, _ := os.ReadDir(home)
			if len(ents) != 1 || readFile(t, filepath.Join(home, "target.txt")) != "original\n" {
				t.Fatalf("home changed: %v", ents)
			}
		})
	}
}

// TestPatchThroughASymlinkInsideTheWorkspace: a symlink that stays in the
// workspace is written through, as Codex's sandboxed apply_patch does: the
// target changes and the link stays a link.
func TestPatchThroughASymlinkInsideTheWorkspace(t *testing.T) {
	m := newFakeModel(
		callResponse("call_1", "apply_patch", map[string]any{"input": updateNotes("README.md")}),
		textResponse("msg_2", "done"),
	)
	h := newHarness(t, m, nil)
	if err := os.Mkdir(filepath.Join(h.dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(h.dir, "docs/README.md"), "original\n")
	symlink(t, "docs/README.md", filepath.Join(h.dir, "README.md"))
	th := h.start(workspaceOnly(agent.ApprovalNever))
	h.submit(th, agent.UserInput{Input: text("go")})
	evs := until(t, th, isTurnCompleted)
	if got := readFile(t, filepath.Join(h.dir, "docs/README.md")); got != "pwned\n" {
		t.Fatalf("docs/README.md %q: %s", got, describe(evs))
	}
	if fi, err := os.Lstat(filepath.Join(h.dir, "README.md")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("README.md is no longer a link: %v", err)
	}
}

// TestPatchPathSwappedForASymlinkBeforeTheWrite: the decision is taken on
// where the paths led then; a path replaced by a symlink before the write
// (here while the user is asked) fails to write instead of following it.
func TestPatchPathSwappedForASymlinkBeforeTheWrite(t *testing.T) {
	cases := []struct {
		name, patch string
		swap        func(ws, home string)
	}{
		{"file", updateNotes("notes.txt"), func(ws, home string) {
			if err := os.Remove(filepath.Join(ws, "notes.txt")); err != nil {
				t.Error(err)
			}
			symlink(t, filepath.Join(home, "notes.txt"), filepath.Join(ws, "notes.txt"))
		}},
		{"parent", "*** Begin Patch\n*** Add File: sub/notes.txt\n+pwned\n*** End Patch", func(ws, home string) {
			if err := os.Rename(filepath.Join(ws, "sub"), filepath.Join(ws, "sub.old")); err != nil {
				t.Error(err)
			}
			symlink(t, home, filepath.Join(ws, "sub"))
		}},
		{"missing parent", "*** Begin Patch\n*** Add File: sub/deeper/notes.txt\n+pwned\n*** End Patch", func(ws, home string) {
			if err := os.Rename(filepath.Join(ws, "sub"), filepath.Join(ws, "sub.old")); err != nil {
				t.Error(err)
			}
			symlink(t, home, filepath.Join(ws, "sub"))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			writeFile(t, filepath.Join(home, "notes.txt"), "original\n")
			m := newFakeModel(
				callResponse("call_1", "apply_patch", map[string]any{"input": c.patch}),
				textResponse("msg_2", "done"),
			)
			h := newHarness(t, m, nil)
			writeFile(t, filepath.Join(h.dir, "notes.txt"), "original\n")
			if err := os.Mkdir(filepath.Join(h.dir, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			// untrusted asks for every patch, which holds it between the
			// decision and the write.
			th := h.start(workspaceOnly(agent.ApprovalUntrusted))
			h.submit(th, agent.UserInput{Input: text("go")})
			evs := until(t, th, func(ev agent.Event) bool { return isPatchApproval(ev) || isTurnCompleted(ev) })
			if !isPatchApproval(evs[len(evs)-1]) {
				t.Fatalf("not asked: %s", describe(evs))
			}
			c.swap(h.dir, home)
			h.submit(th, agent.PatchDecision{CallID: "call_1", Decision: agent.Accept})
			evs = until(t, th, isTurnCompleted)
			if got := readFile(t, filepath.Join(home, "notes.txt")); got != "original\n" {
				t.Fatalf("home/notes.txt is now %q", got)
			}
			ents, _ := os.ReadDir(home)
			if len(ents) != 1 {
				t.Fatalf("home holds %v", ents)
			}
			fc := itemsCompleted[*agent.FileChange](evs)
			if len(fc) != 1 || fc[0].Status != agent.ItemStatusFailed {
				t.Fatalf("file change %s", describe(evs))
			}
		})
	}
}

// TestPatchDeletingASymlinkIsRefused: a removal goes through the link's
// directory, which no fs call can pin, so a patch does not delete a
// symlink (the model can with a command); nothing is written.
func TestPatchDeletingASymlinkIsRefused(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "target.txt"), "x\n")
	m := newFakeModel(
		callResponse("call_1", "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: new.txt\n+new\n*** Delete File: link.txt\n*** End Patch"}),
		textResponse("msg_2", "done"),
	)
	h := newHarness(t, m, nil)
	symlink(t, filepath.Join(home, "target.txt"), filepath.Join(h.dir, "link.txt"))
	th := h.start(workspaceOnly(agent.ApprovalNever))
	h.submit(th, agent.UserInput{Input: text("go")})
	until(t, th, isTurnCompleted)
	m.request(t)
	if out := lastOutput(t, m.request(t), "call_1"); !strings.HasPrefix(out, tools.PatchVerifyFailedText) || !strings.Contains(out, "symbolic link") {
		t.Fatalf("model got %q", out)
	}
	if _, err := os.Lstat(filepath.Join(h.dir, "link.txt")); err != nil {
		t.Fatal("the link was removed")
	}
	if _, err := os.Stat(filepath.Join(h.dir, "new.txt")); err == nil {
		t.Fatal("part of the patch was written")
	}
	if readFile(t, filepath.Join(home, "target.txt")) != "x\n" {
		t.Fatal("the target changed")
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
