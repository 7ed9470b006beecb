package core

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/skills"
)

// blockShape lists an input's messages as role:[tag of each part]; the
// tags name the context blocks, and an injected skill by its name.
func blockShape(req *prompt.Request) []string {
	var out []string
	for _, it := range req.Input {
		if it.Type != prompt.TypeMessage {
			out = append(out, it.Type)
			continue
		}
		var tags []string
		for _, c := range it.Content {
			tag := c.Text
			switch {
			case strings.HasPrefix(tag, "<permissions instructions>"):
				tag = "permissions"
			case strings.HasPrefix(tag, "<environment_context>"):
				tag = "env"
			case strings.HasPrefix(tag, "# AGENTS.md"):
				tag = "agents"
			case strings.HasPrefix(tag, skills.InstructionsOpen):
				tag = "skills"
			case tag == collabPlan:
				tag = "plan"
			case tag == collabDefault:
				tag = "default"
			case strings.HasPrefix(tag, skills.SkillOpen+"\n<name>"):
				name, _, _ := strings.Cut(strings.TrimPrefix(tag, skills.SkillOpen+"\n<name>"), "<")
				tag = "skill:" + name
			case it.Role == "developer" && strings.Contains(tag, "codexd"):
				tag = "base"
			}
			tags = append(tags, tag)
		}
		out = append(out, it.Role+":"+strings.Join(tags, "+"))
	}
	return out
}

// TestRequestPerModel: the request members follow the model's metadata
// as Codex 0.169's do.
func TestRequestPerModel(t *testing.T) {
	m := newFakeModel(textResponse("msg_1", "ok"), textResponse("msg_2", "ok"), textResponse("msg_3", "ok"))
	h := newHarness(t, m, nil)

	th := h.start(agent.Overrides{Model: strp("gpt-5.5")})
	h.submit(th, agent.UserInput{Input: text("hi")})
	until(t, th, isTurnCompleted)
	req := m.request(t)
	if !req.ParallelToolCalls || req.Reasoning == nil || req.Reasoning.Effort != "medium" || req.Reasoning.Summary != "" || req.Reasoning.Context != "" {
		t.Fatalf("gpt-5.5 reasoning %+v parallel %v", req.Reasoning, req.ParallelToolCalls)
	}
	if req.Text == nil || req.Text.Verbosity != "low" {
		t.Fatalf("gpt-5.5 text %+v", req.Text)
	}
	if names := toolNames(req); names != "exec_command write_stdin request_user_input apply_patch view_image " {
		t.Fatalf("gpt-5.5 tools %q", names)
	}
	for _, k := range []string{"session_id", "thread_id", "turn_id", "root_turn_id", "x-codex-installation-id", "x-codex-window-id", "x-codex-turn-metadata"} {
		if req.ClientMetadata[k] == "" {
			t.Errorf("client_metadata lacks %s: %v", k, req.ClientMetadata)
		}
	}
	var meta map[string]any
	if err := json.Unmarshal([]byte(req.Headers["x-codex-turn-metadata"]), &meta); err != nil || meta["turn_id"] != req.TurnID || meta["model"] != "gpt-5.5" {
		t.Fatalf("turn metadata %v %v", meta, err)
	}

	th = h.start(agent.Overrides{Model: strp("codex-auto-review")})
	h.submit(th, agent.UserInput{Input: text("hi")})
	until(t, th, isTurnCompleted)
	req = m.request(t)
	if req.ParallelToolCalls || len(req.Tools) != 0 || !req.OmitTools || req.Reasoning.Context != "all_turns" || req.Headers["x-openai-internal-codex-responses-lite"] != "true" {
		t.Fatalf("code mode %+v", req)
	}
	if it := req.Input[0]; it.Type != prompt.TypeAdditionalTools || it.Role != "developer" || len(it.Tools) != 1 {
		t.Fatalf("code mode's first item %+v", it)
	}
	// Its permissions leave out the sandbox paragraph and the never line.
	for _, it := range req.Input {
		for _, c := range it.Content {
			if strings.HasPrefix(c.Text, "<permissions instructions>") && c.Text != "<permissions instructions>\n</permissions instructions>" {
				t.Fatalf("code-mode permissions under danger-full-access/never: %q", c.Text)
			}
		}
	}

	th = h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("hi")})
	until(t, th, isTurnCompleted)
	req = m.request(t)
	if !req.ParallelToolCalls || req.Reasoning == nil || req.Reasoning.Effort != "" || req.Reasoning.Summary != "auto" || req.Text != nil {
		t.Fatalf("fallback %+v %+v", req.Reasoning, req.Text)
	}
}

// TestContextBlocksAcrossTurns: the first turn records the whole context;
// a turn without changes adds nothing; a changed cwd and sandbox add the
// AGENTS.md, permissions and environment updates, in Codex's order.
func TestContextBlocksAcrossTurns(t *testing.T) {
	m := newFakeModel(textResponse("msg_1", "ok"), textResponse("msg_2", "ok"), textResponse("msg_3", "ok"))
	h := newHarness(t, m, nil)
	writeFile(t, h.dir+"/AGENTS.md", "be nice\n")
	// h.dir is the project's root (its .git), so a turn in sub reads the
	// root's AGENTS.md too. Without a marker of its own the test would
	// depend on whether some ancestor of the temp dir holds a .git.
	for _, d := range []string{h.dir + "/.git", h.dir + "/sub"} {
		if err := mkdirAll(d); err != nil {
			t.Fatal(err)
		}
	}
	th := h.start(agent.Overrides{Model: strp("gpt-5.5")})
	h.submit(th, agent.UserInput{Input: text("one")})
	until(t, th, isTurnCompleted)
	first := strings.Join(blockShape(m.request(t)), " | ")
	if want := "developer:base | developer:permissions | user:agents+env | user:one"; first != want {
		t.Fatalf("first turn\n%s\nwant\n%s", first, want)
	}
	h.submit(th, agent.UserInput{Input: text("two")})
	until(t, th, isTurnCompleted)
	second := strings.Join(blockShape(m.request(t)), " | ")
	if want := first + " | assistant:ok | user:two"; second != want {
		t.Fatalf("unchanged turn\n%s\nwant\n%s", second, want)
	}
	sub := h.dir + "/sub"
	ro := agent.SandboxPolicy{Mode: agent.SandboxReadOnly}
	onReq := agent.ApprovalOnRequest
	h.submit(th, agent.UserInput{Input: text("three"), Overrides: agent.Overrides{Cwd: &sub, Sandbox: &ro, Approval: &onReq}})
	until(t, th, isTurnCompleted)
	req := m.request(t)
	third := strings.Join(blockShape(req), " | ")
	if want := second + " | assistant:ok | user:agents | developer:permissions | user:env | user:three"; third != want {
		t.Fatalf("changed turn\n%s\nwant\n%s", third, want)
	}
	n := len(req.Input)
	agents, perms := req.Input[n-4].Text(), req.Input[n-3].Text()
	if !strings.Contains(agents, "# AGENTS.md instructions for "+sub+"\n") || !strings.Contains(agents, agentsReplaced) || !strings.Contains(agents, "be nice") {
		t.Fatalf("agents update %q", agents)
	}
	if !strings.Contains(perms, "`read-only`") || !strings.Contains(perms, "require_escalated") {
		t.Fatalf("permissions update %q", perms)
	}
	for _, it := range req.Input {
		if it.Type == prompt.TypeMessage && it.ID == "" {
			t.Fatalf("message without an id: %+v", it)
		}
	}
}

func TestEnvironmentText(t *testing.T) {
	s := agent.Settings{Cwd: "/w<x>", Sandbox: agent.SandboxPolicy{Mode: agent.SandboxWorkspaceWrite}}
	got := environmentText(s, "/bin/zsh", mustTime(t, "2026-03-04T05:06:07Z"))
	for _, want := range []string{"  <cwd>/w&lt;x&gt;</cwd>\n", "  <shell>zsh</shell>\n", "  <current_date>2026-03-04</current_date>\n",
		`<entry access="write"><path>/w&lt;x&gt;</path></entry><entry access="write"><special>:slash_tmp</special></entry>`,
		`<entry access="read"><path>/w&lt;x&gt;/.git</path></entry>`} {
		if !strings.Contains(got, want) {
			t.Fatalf("%q lacks %q", got, want)
		}
	}
	s.Sandbox.Mode = agent.SandboxDangerFullAccess
	if got := environmentText(s, "bash", mustTime(t, "2026-03-04T05:06:07Z")); !strings.Contains(got, `<permission_profile type="disabled"><file_system type="unrestricted" /></permission_profile>`) {
		t.Fatal(got)
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
