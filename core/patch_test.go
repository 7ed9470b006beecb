package core

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/core/tools"
)

const addAndUpdate = `*** Begin Patch
*** Add File: hello.txt
+Hello world
*** Update File: f.txt
@@
 one
-two
+TWO
 three
*** End Patch`

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestApplyPatchTool(t *testing.T) {
	m := newFakeModel(
		callResponse("call_1", "apply_patch", map[string]any{"input": addAndUpdate}),
		textResponse("msg_2", "patched"),
	)
	h := newHarness(t, m, nil)
	writeFile(t, filepath.Join(h.dir, "f.txt"), "one\ntwo\nthree\n")
	// The turn diff's paths are relative to the git root, h.dir.
	if err := os.Mkdir(filepath.Join(h.dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("patch")})
	evs := until(t, th, isTurnCompleted)

	fc := itemsCompleted[*agent.FileChange](evs)
	if len(fc) != 1 || fc[0].ID != "call_1" || fc[0].Status != agent.ItemStatusCompleted || len(fc[0].Changes) != 2 {
		t.Fatalf("file change %s", describe(evs))
	}
	add, upd := fc[0].Changes[0], fc[0].Changes[1]
	if add.Kind != "add" || add.Path != filepath.Join(h.dir, "hello.txt") || add.Diff != "Hello world\n" {
		t.Fatalf("add %+v", add)
	}
	if upd.Kind != "update" || !strings.Contains(upd.Diff, "-two\n+TWO\n") {
		t.Fatalf("update %+v", upd)
	}
	// As Codex 0.169: the turn diff twice after the patch, and once more
	// as the turn ends.
	diffs := msgs[agent.TurnDiff](evs)
	if len(diffs) != 3 || diffs[1] != diffs[0] || diffs[2] != diffs[0] ||
		!strings.Contains(diffs[0].Diff, "diff --git a/f.txt b/f.txt\nindex 4cb29ea38f70d7c61b2a3a25b02e3bdf44905402..ddc897f039f57aa91e16efa6dfde386c4255206f\n--- a/f.txt\n+++ b/f.txt\n") ||
		!strings.Contains(diffs[0].Diff, "--- /dev/null\n+++ b/hello.txt\n") {
		t.Fatalf("turn diff %+v", diffs)
	}
	if got := readFile(t, filepath.Join(h.dir, "f.txt")); got != "one\nTWO\nthree\n" {
		t.Fatalf("f.txt %q", got)
	}
	if got := readFile(t, filepath.Join(h.dir, "hello.txt")); got != "Hello world\n" {
		t.Fatalf("hello.txt %q", got)
	}
	m.request(t)
	out := lastOutput(t, m.request(t), "call_1")
	if !strings.HasPrefix(out, "Exit code: 0\n") || !strings.Contains(out, "Success. Updated the following files:\nA hello.txt\nM f.txt\n") {
		t.Fatalf("model got %q", out)
	}
}

func TestMalformedPatchWritesNothing(t *testing.T) {
	bad := "*** Begin Patch\n*** Add File: new.txt\n+x\n*** Update File: missing.txt\n@@\n-a\n+b\n*** End Patch"
	m := newFakeModel(
		callResponse("call_1", "apply_patch", map[string]any{"input": bad}),
		callResponse("call_2", "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Frobnicate File: x\n*** End Patch"}),
		textResponse("msg_3", "oh"),
	)
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("patch")})
	evs := until(t, th, isTurnCompleted)
	if len(itemsCompleted[*agent.FileChange](evs)) != 0 {
		t.Fatalf("a file change: %s", describe(evs))
	}
	if _, err := os.Stat(filepath.Join(h.dir, "new.txt")); err == nil {
		t.Fatal("partial write")
	}
	m.request(t)
	out := lastOutput(t, m.request(t), "call_1")
	if !strings.HasPrefix(out, tools.PatchVerifyFailedText) || !strings.Contains(out, "missing.txt") {
		t.Fatalf("verify error %q", out)
	}
	out = lastOutput(t, m.request(t), "call_2")
	if !strings.HasPrefix(out, tools.PatchVerifyFailedText) || !strings.Contains(out, "Frobnicate") {
		t.Fatalf("parse error %q", out)
	}
}

func TestPatchThroughTheShellIsAFileChange(t *testing.T) {
	cmd := "apply_patch <<'EOF'\n" + addAndUpdate + "\nEOF\n"
	m := newFakeModel(
		callResponse("call_1", "exec_command", map[string]any{"cmd": cmd}),
		textResponse("msg_2", "patched"),
	)
	h := newHarness(t, m, nil)
	writeFile(t, filepath.Join(h.dir, "f.txt"), "one\ntwo\nthree\n")
	th := h.start(agent.Overrides{Approval: policy(agent.ApprovalUntrusted)})
	h.submit(th, agent.UserInput{Input: text("patch")})
	evs := until(t, th, func(ev agent.Event) bool { _, ok := ev.Msg.(agent.PatchApprovalRequest); return ok })
	req := evs[len(evs)-1].Msg.(agent.PatchApprovalRequest)
	if req.CallID != "call_1" || len(req.Changes) != 2 {
		t.Fatalf("request %+v", req)
	}
	h.submit(th, agent.PatchDecision{CallID: "call_1", Decision: agent.Accept})
	evs = until(t, th, isTurnCompleted)
	if len(itemsCompleted[*agent.CommandExecution](evs)) != 0 {
		t.Fatalf("ran as a command: %s", describe(evs))
	}
	if fc := itemsCompleted[*agent.FileChange](evs); len(fc) != 1 || fc[0].Status != agent.ItemStatusCompleted {
		t.Fatalf("file change %s", describe(evs))
	}
	if got := readFile(t, filepath.Join(h.dir, "f.txt")); got != "one\nTWO\nthree\n" {
		t.Fatalf("f.txt %q", got)
	}
}

func TestPatchApprovalDecisions(t *testing.T) {
	cases := []struct {
		decision agent.Decision
		status   agent.ItemStatus
		applied  bool
		turn     agent.TurnStatus
	}{
		{agent.Accept, agent.ItemStatusCompleted, true, agent.TurnStatusCompleted},
		{agent.AcceptForSession, agent.ItemStatusCompleted, true, agent.TurnStatusCompleted},
		{agent.Decline, agent.ItemStatusDeclined, false, agent.TurnStatusCompleted},
		{agent.RequestFailed, agent.ItemStatusFailed, false, agent.TurnStatusCompleted},
		{agent.Cancel, agent.ItemStatusDeclined, false, agent.TurnStatusInterrupted},
	}
	for _, c := range cases {
		t.Run(string(c.decision), func(t *testing.T) {
			m := newFakeModel(
				callResponse("call_1", "apply_patch", map[string]any{"input": addAndUpdate}),
				textResponse("msg_2", "done"),
			)
			h := newHarness(t, m, nil)
			writeFile(t, filepath.Join(h.dir, "f.txt"), "one\ntwo\nthree\n")
			// on-request with a read-only sandbox: a write needs approval.
			th := h.start(agent.Overrides{Approval: policy(agent.ApprovalOnRequest), Sandbox: sandboxMode(agent.SandboxReadOnly)})
			h.submit(th, agent.UserInput{Input: text("patch")})
			until(t, th, func(ev agent.Event) bool { _, ok := ev.Msg.(agent.PatchApprovalRequest); return ok })
			h.submit(th, agent.PatchDecision{CallID: "call_1", Decision: c.decision})
			evs := until(t, th, isTurnCompleted)
			if done := evs[len(evs)-1].Msg.(agent.TurnCompleted); done.Status != c.turn {
				t.Fatalf("turn %s: %s", done.Status, describe(evs))
			}
			fc := itemsCompleted[*agent.FileChange](evs)
			if len(fc) != 1 || fc[0].Status != c.status {
				t.Fatalf("file change %s", describe(evs))
			}
			_, err := os.Stat(filepath.Join(h.dir, "hello.txt"))
			if (err == nil) != c.applied {
				t.Fatalf("applied=%v", err == nil)
			}
			if c.decision == agent.Decline {
				m.request(t)
				if out := lastOutput(t, m.request(t), "call_1"); out != tools.PatchRejectedByUser {
					t.Fatalf("model got %q", out)
				}
			}
		})
	}
}

func TestPatchInsideWorkspaceNeedsNoApproval(t *testing.T) {
	outside := t.TempDir()
	p := "*** Begin Patch\n*** Add File: in.txt\n+in\n*** End Patch"
	q := "*** Begin Patch\n*** Add File: " + filepath.Join(outside, "out.txt") + "\n+out\n*** End Patch"
	m := newFakeModel(
		callResponse("call_1", "apply_patch", map[string]any{"input": p}),
		callResponse("call_2", "apply_patch", map[string]any{"input": q}),
		textResponse("msg_3", "done"),
	)
	h := newHarness(t, m, nil)
	// t.TempDir is under /tmp, writable under workspace-write unless
	// excluded.
	th := h.start(agent.Overrides{Approval: policy(agent.ApprovalNever), Sandbox: &agent.SandboxPolicy{Mode: agent.SandboxWorkspaceWrite, ExcludeSlashTmp: true, ExcludeTmpdirEnvVar: true}})
	h.submit(th, agent.UserInput{Input: text("patch")})
	evs := until(t, th, isTurnCompleted)
	if len(msgs[agent.PatchApprovalRequest](evs)) != 0 {
		t.Fatal("asked under never")
	}
	if got := readFile(t, filepath.Join(h.dir, "in.txt")); got != "in\n" {
		t.Fatalf("in.txt %q", got)
	}
	if _, err := os.Stat(filepath.Join(outside, "out.txt")); err == nil {
		t.Fatal("wrote outside the workspace under never")
	}
}

// TestPatchAutoApprovalFollowsTheSandboxRoots: a patch is applied without
// asking exactly where the sandbox lets a command write, as Codex decides
// with the sandbox's writable roots: .git, .agents and .codex inside a
// writable root are read-only (the workspace's .codex even before it
// exists), and $TMPDIR is writable unless excluded. writable() used to
// check the cwd, the extra roots and /tmp only.
func TestPatchAutoApprovalFollowsTheSandboxRoots(t *testing.T) {
	add := func(path string) string {
		return "*** Begin Patch\n*** Add File: " + path + "\n+x\n*** End Patch"
	}
	tmpdir := t.TempDir()
	m := newFakeModel(
		callResponse("call_git", "apply_patch", map[string]any{"input": add(".git/hooks/pre-commit")}),
		callResponse("call_codex", "apply_patch", map[string]any{"input": add(".codex/config.toml")}),
		callResponse("call_agents", "apply_patch", map[string]any{"input": add(".agents/skill.md")}),
		callResponse("call_src", "apply_patch", map[string]any{"input": add("src/ok.txt")}),
		callResponse("call_tmp", "apply_patch", map[string]any{"input": add(filepath.Join(tmpdir, "t.txt"))}),
		textResponse("msg_done", "done"),
	)
	h := newHarness(t, m, nil)
	for _, d := range []string{".git/hooks", ".agents"} {
		if err := os.MkdirAll(filepath.Join(h.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TMPDIR", tmpdir)
	th := h.start(agent.Overrides{Approval: policy(agent.ApprovalNever), Sandbox: &agent.SandboxPolicy{Mode: agent.SandboxWorkspaceWrite, ExcludeSlashTmp: true}})
	h.submit(th, agent.UserInput{Input: text("patch")})
	evs := until(t, th, isTurnCompleted)
	if len(msgs[agent.PatchApprovalRequest](evs)) != 0 {
		t.Fatal("asked under never")
	}
	var last *prompt.Request
	for range 6 {
		last = m.request(t)
	}
	refused := "patch rejected: writing outside of the project; rejected by user approval settings"
	for _, c := range []struct{ call, path string }{
		{"call_git", ".git/hooks/pre-commit"}, {"call_codex", ".codex/config.toml"}, {"call_agents", ".agents/skill.md"},
	} {
		if got := lastOutput(t, last, c.call); got != refused {
			t.Errorf("%s: model got %q", c.path, got)
		}
		if _, err := os.Stat(filepath.Join(h.dir, c.path)); err == nil {
			t.Errorf("%s was written", c.path)
		}
	}
	if got := readFile(t, filepath.Join(h.dir, "src/ok.txt")); got != "x\n" {
		t.Errorf("src/ok.txt %q", got)
	}
	if _, err := os.Stat(filepath.Join(tmpdir, "t.txt")); err != nil {
		t.Errorf("the patch under $TMPDIR was not applied: %v; model got %q", err, lastOutput(t, last, "call_tmp"))
	}
}

// TestPatchIntoDotGitAsksUnderOnRequest: where the sandbox would not let a
// command write, on-request asks.
func TestPatchIntoDotGitAsksUnderOnRequest(t *testing.T) {
	m := newFakeModel(
		callResponse("call_1", "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: .git/info/exclude\n+x\n*** End Patch"}),
		textResponse("msg_2", "done"),
	)
	h := newHarness(t, m, nil)
	if err := os.MkdirAll(filepath.Join(h.dir, ".git/info"), 0o755); err != nil {
		t.Fatal(err)
	}
	th := h.start(agent.Overrides{Approval: policy(agent.ApprovalOnRequest), Sandbox: &agent.SandboxPolicy{Mode: agent.SandboxWorkspaceWrite, ExcludeSlashTmp: true, ExcludeTmpdirEnvVar: true}})
	h.submit(th, agent.UserInput{Input: text("patch")})
	evs := until(t, th, func(ev agent.Event) bool { return isPatchApproval(ev) || isTurnCompleted(ev) })
	if _, ok := evs[len(evs)-1].Msg.(agent.PatchApprovalRequest); !ok {
		t.Fatalf("no approval asked: %s", describe(evs))
	}
	h.submit(th, agent.PatchDecision{CallID: "call_1", Decision: agent.Accept})
	until(t, th, isTurnCompleted)
	if got := readFile(t, filepath.Join(h.dir, ".git/info/exclude")); got != "x\n" {
		t.Fatalf("exclude %q", got)
	}
}

func isPatchApproval(ev agent.Event) bool {
	_, ok := ev.Msg.(agent.PatchApprovalRequest)
	return ok
}
