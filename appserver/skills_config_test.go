package appserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/skills"
)

func init() {
	responseSchema[appproto.MethodSkillsConfigWrite] = "v2/SkillsConfigWriteResponse"
}

// TestSkillsConfigWrite replays what Codex 0.169's skills/config/write did
// to a config.toml, step by step (the expected texts are Codex's), and
// checks skills/list's enabled flags after each step and Codex's errors.
func TestSkillsConfigWrite(t *testing.T) {
	work := t.TempDir()
	for _, n := range []string{"greeter", "helper"} {
		p := filepath.Join(work, ".agents", "skills", n, "SKILL.md")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("---\nname: "+n+"\ndescription: D\n---\nx\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, c, cfg := configEnv(t, "# my comment\nmodel = \"mock-model\"\n\n[features]\nplugins = false\n", Config{
		Skills: func(cwd string) ([]skills.Skill, []skills.LoadError) {
			return skills.Discover(skills.Roots(skills.Locations{Cwd: cwd, AdminDir: filepath.Join(work, "none")}))
		},
	})
	greeter := filepath.Join(work, ".agents/skills/greeter/SKILL.md")
	helper := filepath.Join(work, ".agents/skills/helper/SKILL.md")
	const head = "# my comment\nmodel = \"mock-model\"\n\n[features]\nplugins = false\n"
	pathRule := func(p string) string { return "\n[[skills.config]]\npath = \"" + p + "\"\nenabled = false\n" }
	const nameRule = "\n[[skills.config]]\nname = \"helper\"\nenabled = false\n"
	steps := []struct {
		params map[string]any
		file   string
		list   string // greeter's and helper's enabled flags
	}{
		{map[string]any{"path": greeter, "enabled": false}, head + pathRule(greeter), "false true"},
		{map[string]any{"path": greeter, "enabled": false}, head + pathRule(greeter), "false true"},
		{map[string]any{"name": "helper", "enabled": false}, head + pathRule(greeter) + nameRule, "false false"},
		{map[string]any{"name": " helper ", "enabled": true}, head + pathRule(greeter), "false true"},
		{map[string]any{"name": "helper", "enabled": false}, head + pathRule(greeter) + nameRule, "false false"},
		// Enabling by path leaves the name's rule.
		{map[string]any{"path": helper, "enabled": true}, head + pathRule(greeter) + nameRule, "false false"},
		{map[string]any{"path": greeter, "enabled": true}, head + nameRule, "true false"},
		{map[string]any{"path": filepath.Join(work, ".", ".agents/skills/helper/../helper/SKILL.md"), "enabled": false}, head + nameRule + pathRule(helper), "true false"},
	}
	for i, st := range steps {
		r := c.call(appproto.MethodSkillsConfigWrite, st.params)
		if got, want := string(r.Result), fmt.Sprintf(`{"effectiveEnabled":%v}`, st.params["enabled"]); got != want {
			t.Fatalf("step %d: %s, want %s", i, got, want)
		}
		if got := readFile(t, cfg); got != st.file {
			t.Fatalf("step %d: config.toml\n%s\nwant\n%s", i, got, st.file)
		}
		l := c.call("skills/list", map[string]any{"cwds": []string{work}, "forceReload": true})
		var flags []string
		for j := 0; j < 2; j++ {
			var on bool
			if err := pointer(l.Result, fmt.Sprintf("/data/0/skills/%d/enabled", j), &on); err != nil {
				t.Fatal(err)
			}
			flags = append(flags, fmt.Sprint(on))
		}
		if got := strings.Join(flags, " "); got != st.list {
			t.Fatalf("step %d: enabled %s, want %s", i, got, st.list)
		}
	}
	for _, bad := range []struct {
		params map[string]any
		code   int64
		msg    string
	}{
		{map[string]any{"name": "helper", "path": helper, "enabled": false}, -32602, "skills/config/write requires exactly one of path or name"},
		{map[string]any{"enabled": false}, -32602, "skills/config/write requires exactly one of path or name"},
		{map[string]any{"name": "  ", "enabled": false}, -32602, "skills/config/write requires exactly one of path or name"},
		{map[string]any{"path": "relative/SKILL.md", "enabled": false}, -32600, "Invalid request: AbsolutePathBuf deserialized without a base path"},
	} {
		if e := c.callErr(appproto.MethodSkillsConfigWrite, bad.params); e.Code != bad.code || e.Message != bad.msg {
			t.Errorf("%v: %d %s", bad.params, e.Code, e.Message)
		}
	}
	// A path that names no skill is written all the same.
	missing := filepath.Join(work, "nowhere", "SKILL.md")
	c.call(appproto.MethodSkillsConfigWrite, map[string]any{"path": missing, "enabled": false})
	if got := readFile(t, cfg); !strings.HasSuffix(got, pathRule(missing)) {
		t.Fatalf("config.toml after a path with no skill:\n%s", got)
	}
}
