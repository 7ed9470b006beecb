package appserver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/skills"
)

func TestSkillsList(t *testing.T) {
	base := t.TempDir()
	home, work := filepath.Join(base, "home"), filepath.Join(base, "work")
	for p, text := range map[string]string{
		filepath.Join(home, "skills/demo/SKILL.md"):         "---\nname: demo\ndescription: Demo.\n---\nbody\n",
		filepath.Join(work, ".agents/skills/proj/SKILL.md"): "---\nname: proj\ndescription: Project.\nmetadata:\n  short-description: short\n---\n",
		filepath.Join(work, ".agents/skills/bad/SKILL.md"):  "no header",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var asked []string
	e := newEnv(t, agenttest.Options{}, Config{Skills: func(cwd string) ([]skills.Skill, []skills.LoadError) {
		asked = append(asked, cwd)
		return skills.Discover(skills.Roots(skills.Locations{CodexHome: home, Cwd: cwd, AdminDir: filepath.Join(base, "none")}))
	}})
	c := e.dial("a")
	c.initialize(nil)
	r := c.call("skills/list", map[string]any{"cwds": []string{work}})
	var got []struct {
		Cwd    string           `json:"cwd"`
		Skills []map[string]any `json:"skills"`
		Errors []map[string]any `json:"errors"`
	}
	if err := pointer(r.Result, "/data", &got); err != nil || len(got) != 1 {
		t.Fatalf("skills/list: %s (%v)", r, err)
	}
	if len(got[0].Skills) != 2 || got[0].Skills[0]["name"] != "proj" || got[0].Skills[0]["scope"] != "repo" ||
		got[0].Skills[0]["shortDescription"] != "short" || got[0].Skills[1]["name"] != "demo" || got[0].Skills[1]["scope"] != "user" {
		t.Fatalf("skills: %s", r)
	}
	if _, has := got[0].Skills[1]["shortDescription"]; has {
		t.Fatalf("a skill without a short description has the member, which Codex leaves out: %s", r)
	}
	if v, has := got[0].Skills[1]["pluginId"]; !has || v != nil || got[0].Skills[1]["enabled"] != true {
		t.Fatalf("pluginId null and enabled true, as Codex: %s", r)
	}
	if len(got[0].Errors) != 1 || got[0].Errors[0]["path"] != filepath.Join(work, ".agents/skills/bad/SKILL.md") {
		t.Fatalf("errors: %s", r)
	}
	if err := c.callErr("skills/list", map[string]any{"cwds": []string{"a\x00b"}}); err == nil || err.Code != -32602 {
		t.Fatalf("a NUL cwd: %+v", err)
	}
	if len(asked) != 1 || asked[0] != work {
		t.Fatalf("discovery asked for %v", asked)
	}
}
