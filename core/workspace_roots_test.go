package core

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/sandbox"
)

// Runtime workspace roots, as Codex 0.169 tells the model of them (the
// request differential's turn "with two roots"): the environment context
// lists them as the workspace roots, writable under workspace-write, with
// their protected names listed name by name; a later block whose cwd did
// not change leaves out the cwd and the shell; and commands and patches
// may write in them, as the model is told.
func TestRuntimeWorkspaceRoots(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	base := agent.Settings{Cwd: "/w", Sandbox: agent.SandboxPolicy{Mode: agent.SandboxWorkspaceWrite, WritableRoots: []string{"/cfg"}}}
	roots := base
	roots.RuntimeWorkspaceRoots = []string{"/w/sub", "/w"}

	rest := envRest(roots, now)
	for _, want := range []string{
		"<workspace_roots><root>/w/sub</root><root>/w</root></workspace_roots>",
		`<entry access="write"><path>/w/sub</path></entry><entry access="write"><path>/w</path></entry><entry access="write"><path>/cfg</path></entry>`,
		`<entry access="read"><path>/w/sub/.git</path></entry><entry access="read"><path>/w/.git</path></entry><entry access="read"><path>/cfg/.git</path></entry><entry access="read"><path>/w/sub/.agents</path></entry>`,
	} {
		if !strings.Contains(rest, want) {
			t.Errorf("environment context lacks %s:\n%s", want, rest)
		}
	}
	if got := writableRoots(roots); !slices.Contains(got, "/w/sub") || !slices.Contains(got, "/w") || !slices.Contains(got, "/cfg") {
		t.Errorf("writable roots told: %v", got)
	}
	if got := commandSandbox(roots).WritableRoots; !slices.Equal(got, []string{"/w/sub", "/w", "/cfg"}) {
		t.Errorf("commands may write in %v", got)
	}
	if got := commandSandbox(agent.Settings{Cwd: "/w", Sandbox: agent.SandboxPolicy{Mode: agent.SandboxReadOnly}}).WritableRoots; len(got) != 0 {
		t.Errorf("read-only writes in %v", got)
	}

	blocks := func(s agent.Settings) contextBlocks {
		return contextBlocks{permissions: permissionsText(s, false), envHead: envHead(s, "/bin/bash"), envRest: envRest(s, now)}
	}
	hist := contextItems(nil, blocks(base))
	step := func(s agent.Settings) []prompt.Item {
		items := contextItems(hist, blocks(s))
		hist = append(hist, items...)
		return items
	}
	envOf := func(items []prompt.Item) string {
		for _, it := range items {
			if strings.HasPrefix(it.Content[0].Text, envOpen) {
				return it.Content[0].Text
			}
		}
		return ""
	}
	if env := envOf(step(roots)); env == "" || strings.Contains(env, "<cwd>") || strings.Contains(env, "<shell>") || !strings.Contains(env, "<root>/w/sub</root>") {
		t.Errorf("the roots' change told as:\n%s", env)
	}
	if items := step(roots); len(items) != 0 {
		t.Errorf("nothing changed, yet told %+v", items)
	}
	moved := roots
	moved.Cwd = "/w/sub"
	if env := envOf(step(moved)); !strings.Contains(env, "<cwd>/w/sub</cwd>") || !strings.Contains(env, "<shell>bash</shell>") {
		t.Errorf("the cwd's change told as:\n%s", env)
	}
	if items := step(moved); len(items) != 0 {
		t.Errorf("nothing changed after the move, yet told %+v", items)
	}
}

// In the real Landlock sandbox, a workspace-write command may write in a
// runtime workspace root outside the cwd, and still nowhere else.
func TestWorkspaceWriteCommandWritesInRuntimeRoots(t *testing.T) {
	if _, err := sandbox.Available(); err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	other, elsewhere := t.TempDir(), t.TempDir()
	m := newFakeModel(
		callResponse("call_1", "exec_command", map[string]any{"cmd": "touch " + filepath.Join(other, "in.txt") + " && touch " + filepath.Join(elsewhere, "out.txt")}),
		textResponse("msg_2", "done"),
	)
	h := newHarness(t, m, func(c *Config) { c.Sandbox = LandlockSandbox{} })
	roots := []string{h.dir, other}
	th := h.start(agent.Overrides{
		Approval:              policy(agent.ApprovalNever),
		Sandbox:               &agent.SandboxPolicy{Mode: agent.SandboxWorkspaceWrite, ExcludeSlashTmp: true, ExcludeTmpdirEnvVar: true},
		RuntimeWorkspaceRoots: &roots,
	})
	h.submit(th, agent.UserInput{Input: text("go")})
	evs := until(t, th, isTurnCompleted)
	items := itemsCompleted[*agent.CommandExecution](evs)
	if len(items) != 1 {
		t.Fatalf("items %s", describe(evs))
	}
	if _, err := os.Stat(filepath.Join(other, "in.txt")); err != nil {
		t.Fatalf("the runtime root is not writable: %s", *items[0].Output)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "out.txt")); err == nil {
		t.Fatalf("wrote outside every root: %s", *items[0].Output)
	}
}
