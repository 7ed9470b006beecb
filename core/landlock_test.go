package core

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/sandbox"
)

func TestLandlockWorkspaceWrite(t *testing.T) {
	if _, err := sandbox.Available(); err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	for _, mode := range []agent.SandboxMode{agent.SandboxWorkspaceWrite, agent.SandboxDangerFullAccess} {
		t.Run(string(mode), func(t *testing.T) {
			outside := t.TempDir()
			target := filepath.Join(outside, "escaped.txt")
			m := newFakeModel(
				callResponse("call_1", "exec_command", map[string]any{"cmd": "touch inside.txt && touch " + target}),
				textResponse("msg_2", "done"),
			)
			h := newHarness(t, m, func(c *Config) { c.Sandbox = LandlockSandbox{} })
			// t.TempDir lives under /tmp, which workspace-write allows unless
			// excluded.
			th := h.start(agent.Overrides{
				Approval: policy(agent.ApprovalNever),
				Sandbox:  &agent.SandboxPolicy{Mode: mode, ExcludeSlashTmp: true, ExcludeTmpdirEnvVar: true},
			})
			h.submit(th, agent.UserInput{Input: text("go")})
			evs := until(t, th, isTurnCompleted)
			items := itemsCompleted[*agent.CommandExecution](evs)
			if len(items) != 1 {
				t.Fatalf("items %s", describe(evs))
			}
			if _, err := os.Stat(filepath.Join(h.dir, "inside.txt")); err != nil {
				t.Fatalf("the write inside the workspace failed: %s", *items[0].Output)
			}
			_, err := os.Stat(target)
			if mode == agent.SandboxWorkspaceWrite {
				if err == nil {
					t.Fatal("the write outside the workspace was allowed")
				}
				if items[0].Status != agent.ItemStatusFailed || !items[0].SandboxDenied {
					t.Fatalf("item %+v output %q", items[0], *items[0].Output)
				}
				m.request(t)
				if out := lastOutput(t, m.request(t), "call_1"); !strings.Contains(out, "Permission denied") && !strings.Contains(out, "Read-only") {
					t.Fatalf("model got %q", out)
				}
			} else if err != nil || items[0].Status != agent.ItemStatusCompleted || items[0].SandboxDenied {
				t.Fatalf("danger-full-access: %v %+v", err, items[0])
			}
		})
	}
}
