package core

import (
	"regexp"
	"testing"

	"github.com/codexd/codexd/agent"
)

// TestPatchOutputAsCodex: what the model reads of a patch, as Codex 0.169
// sends it (observed side by side): the wall time to a tenth of a second
// with no trailing ".0" ("0", "0.1", "2"); a patch applied through the
// shell comes inside exec_command's own header ("Wall time: 0.0000
// seconds\nOutput:\n"), one that is refused or fails does not. codexd
// used to print "0.0" and no header.
func TestPatchOutputAsCodex(t *testing.T) {
	add := func(path string) string { return "*** Begin Patch\n*** Add File: " + path + "\n+x\n*** End Patch" }
	shell := func(path string) map[string]any {
		return map[string]any{"cmd": "apply_patch <<'EOF'\n" + add(path) + "\nEOF\n"}
	}
	inner := `Exit code: 0\nWall time: (0|[1-9][0-9]*)(\.[1-9])? seconds\nOutput:\nSuccess\. Updated the following files:\nA `
	for _, c := range []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"tool", "apply_patch", map[string]any{"input": add("a.txt")}, `^` + inner + `a\.txt\n$`},
		{"shell", "exec_command", shell("b.txt"), `^Wall time: 0\.0000 seconds\nOutput:\n` + inner + `b\.txt\n$`},
		{"shell refused", "exec_command", shell("/proc/codexd-refused.txt"), `^patch rejected: writing outside of the project; rejected by user approval settings$`},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newFakeModel(callResponse("call_1", c.tool, c.args), textResponse("msg_2", "done"))
			h := newHarness(t, m, nil)
			th := h.start(agent.Overrides{Approval: policy(agent.ApprovalNever), Sandbox: &agent.SandboxPolicy{Mode: agent.SandboxWorkspaceWrite}})
			h.submit(th, agent.UserInput{Input: text("patch")})
			until(t, th, isTurnCompleted)
			m.request(t)
			if got := lastOutput(t, m.request(t), "call_1"); !regexp.MustCompile(c.want).MatchString(got) {
				t.Fatalf("the model got %q, want %s", got, c.want)
			}
		})
	}
}
