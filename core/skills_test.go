package core

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
)

func contextShape(req *prompt.Request) string { return strings.Join(blockShape(req), " | ") }

func mkWrite(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, text)
}

func TestSkillsReachTheModel(t *testing.T) {
	m := newFakeModel(textResponse("msg_1", "ok"), textResponse("msg_2", "ok"))
	var home string
	h := newHarness(t, m, func(c *Config) { home = c.CodexHome })
	mkWrite(t, filepath.Join(home, "skills", "demo", "SKILL.md"), "---\nname: demo\ndescription: Demo skill.\n---\nDo the demo.\n")
	proj := filepath.Join(h.dir, ".agents", "skills", "proj", "SKILL.md")
	mkWrite(t, proj, "---\nname: proj\ndescription: Project skill.\n---\nProject body.\n")

	th := h.start(agent.Overrides{Model: strp("gpt-5.5")})
	h.submit(th, agent.UserInput{Input: []agent.Input{
		{Type: "text", Text: "use $demo and $nosuch"},
		{Type: "skill", Name: "proj", Path: proj},
	}})
	until(t, th, isTurnCompleted)
	req := m.request(t)
	got := contextShape(req)
	want := "developer:base | developer:skills+permissions | user:env | user:use $demo and $nosuch | user:skill:proj | user:skill:demo"
	if got != want {
		t.Fatalf("first turn\n%s\nwant\n%s", got, want)
	}
	list := req.Input[1].Content[0].Text
	for _, s := range []string{"- proj: Project skill. (file: r0/proj/SKILL.md)", "- demo: Demo skill. (file: r1/demo/SKILL.md)"} {
		if !strings.Contains(list, s) {
			t.Errorf("skills block lacks %q:\n%s", s, list)
		}
	}
	n := len(req.Input)
	if body := req.Input[n-1].Text(); !strings.Contains(body, "<path>"+filepath.Join(home, "skills", "demo", "SKILL.md")+"</path>\n---\nname: demo") || !strings.HasSuffix(body, "Do the demo.\n\n</skill>") {
		t.Fatalf("injected skill %q", body)
	}

	// The list is sent once; a later turn names a skill again.
	h.submit(th, agent.UserInput{Input: text("again $demo")})
	until(t, th, isTurnCompleted)
	got = contextShape(m.request(t))
	if want := want + " | assistant:ok | user:again $demo | user:skill:demo"; got != want {
		t.Fatalf("second turn\n%s\nwant\n%s", got, want)
	}
}

// TestDisabledSkills: a skill that [[skills.config]] in $CODEX_HOME's
// config.toml disables is not listed to the model, and neither a `$name`
// mention nor a skill input brings it in; the file is read at each turn,
// so a rule written between turns applies to the next one.
func TestDisabledSkills(t *testing.T) {
	m := newFakeModel(textResponse("msg_1", "ok"), textResponse("msg_2", "ok"))
	var home string
	h := newHarness(t, m, func(c *Config) { home = c.CodexHome })
	demo := filepath.Join(home, "skills", "demo", "SKILL.md")
	mkWrite(t, demo, "---\nname: demo\ndescription: Demo skill.\n---\nDo the demo.\n")
	mkWrite(t, filepath.Join(home, "skills", "other", "SKILL.md"), "---\nname: other\ndescription: Other skill.\n---\nOther body.\n")
	cfg := filepath.Join(home, "config.toml")
	old, _ := os.ReadFile(cfg)
	writeFile(t, cfg, string(old)+"\n[[skills.config]]\nname = \"other\"\nenabled = false\n")

	th := h.start(agent.Overrides{Model: strp("gpt-5.5")})
	h.submit(th, agent.UserInput{Input: []agent.Input{{Type: "text", Text: "use $demo and $other"}}})
	until(t, th, isTurnCompleted)
	req := m.request(t)
	if got, want := contextShape(req), "developer:base | developer:skills+permissions | user:env | user:use $demo and $other | user:skill:demo"; got != want {
		t.Fatalf("with other disabled\n%s\nwant\n%s", got, want)
	}
	if list := req.Input[1].Content[0].Text; strings.Contains(list, "other") {
		t.Fatalf("a disabled skill is listed:\n%s", list)
	}

	writeFile(t, cfg, string(old)+"\n[[skills.config]]\npath = \""+demo+"\"\nenabled = false\n")
	h.submit(th, agent.UserInput{Input: []agent.Input{{Type: "text", Text: "again $demo"}, {Type: "skill", Name: "demo", Path: demo}}})
	until(t, th, isTurnCompleted)
	first := "developer:base | developer:skills+permissions | user:env | user:use $demo and $other | user:skill:demo"
	if got, want := contextShape(m.request(t)), first+" | assistant:ok | user:again $demo"; got != want {
		t.Fatalf("a skill disabled between turns\n%s\nwant\n%s", got, want)
	}
}

func TestSkillInputMustBeASkillFile(t *testing.T) {
	m := newFakeModel(textResponse("msg_1", "ok"))
	h := newHarness(t, m, func(c *Config) { c.NoSkills = true })
	secret := filepath.Join(h.dir, "secret.txt")
	writeFile(t, secret, "do not send\n")
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: []agent.Input{{Type: "text", Text: "hi"}, {Type: "skill", Name: "x", Path: secret}}})
	until(t, th, isTurnCompleted)
	for _, it := range m.request(t).Input {
		if strings.Contains(it.Text(), "do not send") {
			t.Fatalf("a file that is not a SKILL.md reached the model: %q", it.Text())
		}
	}
}

func TestCollaborationModeBlocks(t *testing.T) {
	m := newFakeModel(textResponse("msg_1", "ok"), textResponse("msg_2", "ok"), textResponse("msg_3", "ok"), textResponse("msg_4", "ok"))
	h := newHarness(t, m, func(c *Config) { c.NoSkills = true })
	plan, def := "plan", "default"
	th := h.start(agent.Overrides{Model: strp("gpt-5.5"), CollaborationMode: &plan})
	h.submit(th, agent.UserInput{Input: text("one")})
	until(t, th, isTurnCompleted)
	first := contextShape(m.request(t))
	if want := "developer:base | developer:permissions+plan | user:env | user:one"; first != want {
		t.Fatalf("a thread started in Plan mode\n%s\nwant\n%s", first, want)
	}
	h.submit(th, agent.UserInput{Input: text("two"), Overrides: agent.Overrides{CollaborationMode: &plan}})
	until(t, th, isTurnCompleted)
	second := contextShape(m.request(t))
	if want := first + " | assistant:ok | user:two"; second != want {
		t.Fatalf("the same mode again\n%s\nwant\n%s", second, want)
	}
	h.submit(th, agent.UserInput{Input: text("three"), Overrides: agent.Overrides{CollaborationMode: &def}})
	until(t, th, isTurnCompleted)
	third := contextShape(m.request(t))
	if want := second + " | assistant:ok | developer:default | user:three"; third != want {
		t.Fatalf("back to Default\n%s\nwant\n%s", third, want)
	}
	h.submit(th, agent.UserInput{Input: text("four"), Overrides: agent.Overrides{CollaborationMode: &plan}})
	until(t, th, isTurnCompleted)
	if want := third + " | assistant:ok | developer:plan | user:four"; contextShape(m.request(t)) != want {
		t.Fatalf("to Plan again\n%s\nwant\n%s", contextShape(m.request(t)), want)
	}
}
