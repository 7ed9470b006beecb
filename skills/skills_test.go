package skills

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func skillMD(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n\nBody of " + name + ".\n"
}

func TestRootsOrder(t *testing.T) {
	base := t.TempDir()
	repo := filepath.Join(base, "repo")
	cwd := filepath.Join(repo, "a", "b")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	home, ch := filepath.Join(base, "home"), filepath.Join(base, "codexhome")
	got := Roots(Locations{CodexHome: ch, Home: home, Cwd: cwd, AdminDir: filepath.Join(base, "etc")})
	want := []Root{
		{filepath.Join(cwd, ".codex/skills"), ScopeRepo},
		{filepath.Join(repo, "a", ".codex/skills"), ScopeRepo},
		{filepath.Join(repo, ".codex/skills"), ScopeRepo},
		{filepath.Join(ch, "skills"), ScopeUser},
		{filepath.Join(home, ".agents/skills"), ScopeUser},
		{filepath.Join(ch, "skills/.system"), ScopeSystem},
		{filepath.Join(base, "etc"), ScopeAdmin},
		{filepath.Join(repo, ".agents/skills"), ScopeRepo},
		{filepath.Join(repo, "a", ".agents/skills"), ScopeRepo},
		{filepath.Join(cwd, ".agents/skills"), ScopeRepo},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("roots:\n got %v\nwant %v", got, want)
	}
	// Without a marker the project root is the cwd itself.
	got = Roots(Locations{CodexHome: ch, Cwd: cwd, RootMarkers: []string{"nothing-here"}, AdminDir: "/x"})
	if got[0].Path != filepath.Join(cwd, ".codex/skills") || got[1].Scope != ScopeUser || got[len(got)-1].Path != filepath.Join(cwd, ".agents/skills") || len(got) != 5 {
		t.Fatalf("no marker: %v", got)
	}
}

func TestDiscoverRanksAndDedupes(t *testing.T) {
	base := t.TempDir()
	cwd := filepath.Join(base, "work")
	ch := filepath.Join(base, "home")
	write(t, filepath.Join(cwd, ".git", "HEAD"), "")
	write(t, filepath.Join(cwd, ".agents/skills/proj/SKILL.md"), "---\nname: proj\ndescription: Project\n  skill.\nmetadata:\n  short-description: short proj\n---\nx\n")
	write(t, filepath.Join(cwd, ".codex/skills/dup/SKILL.md"), skillMD("dup", "repo one"))
	write(t, filepath.Join(ch, "skills/dup/SKILL.md"), skillMD("dup", "user one"))
	write(t, filepath.Join(ch, "skills/demo/SKILL.md"), skillMD("demo", "Demo"))
	write(t, filepath.Join(ch, "skills/.system/sys/SKILL.md"), skillMD("sys", "System"))
	write(t, filepath.Join(ch, "skills/deep/1/2/3/4/5/6/SKILL.md"), skillMD("toodeep", "x"))
	write(t, filepath.Join(ch, "skills/ok/1/2/3/4/5/SKILL.md"), skillMD("deepok", "x"))
	write(t, filepath.Join(ch, "skills/bad/SKILL.md"), "no front matter\n")
	list, errs := Discover(Roots(Locations{CodexHome: ch, Cwd: cwd, AdminDir: filepath.Join(base, "none")}))
	var names []string
	for _, s := range list {
		names = append(names, string(s.Scope)+":"+s.Name)
	}
	want := []string{"repo:dup", "repo:proj", "user:deepok", "user:demo", "system:sys"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("skills %v, want %v", names, want)
	}
	if list[0].Description != "repo one" || list[1].Description != "Project skill." || list[1].ShortDescription != "short proj" {
		t.Fatalf("metadata: %+v", list[:2])
	}
	if len(errs) != 1 || !strings.HasSuffix(errs[0].Path, "bad/SKILL.md") || !strings.Contains(errs[0].Message, "front matter") {
		t.Fatalf("errors %+v", errs)
	}
}

func TestParseFrontMatter(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{"---\nname: a\ndescription: b\n---\n", ""},
		{"---\r\nname: a\r\ndescription: b\r\n---\r\nbody", ""},
		{"---\nname: a\ndescription: b\n---", ""},
		{"---\nname: a\n---\n", "description"},
		{"---\ndescription: b\n---\n", "name"},
		{"---\nname: [\n---\n", "invalid YAML"},
		{"---\nname: " + strings.Repeat("n", 65) + "\ndescription: b\n---\n", "name: exceeds"},
		{"---\nname: a\ndescription: " + strings.Repeat("d", 1025) + "\n---\n", "description: exceeds"},
		{"name: a\n", "front matter"},
		{"---\nname: a\ndescription: b\n", "front matter"},
		{"\xff", "UTF-8"},
	} {
		_, err := ParseFrontMatter([]byte(tc.in))
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
		}
	}
}

func TestReadFileBound(t *testing.T) {
	p := filepath.Join(t.TempDir(), "SKILL.md")
	write(t, p, skillMD("a", "b")+strings.Repeat("x", MaxFileBytes))
	if _, err := Load(p, ScopeUser); err == nil || !strings.Contains(err.Error(), "over") {
		t.Fatalf("a big SKILL.md loaded: %v", err)
	}
}

func TestMentionsAndRender(t *testing.T) {
	list := []Skill{{Name: "demo", Description: "D", Path: "/r/demo/SKILL.md"}, {Name: "pdf-tools", Description: "P", Path: "/q/pdf-tools/SKILL.md"}}
	got := Mentions("use $pdf-tools, then $demo. not a$demo or $demos; $demo again", list)
	if len(got) != 2 || got[0].Name != "pdf-tools" || got[1].Name != "demo" {
		t.Fatalf("mentions %+v", got)
	}
	if Mentions("no dollar", list) != nil {
		t.Fatal("mention without $")
	}
	block := Instructions(list)
	for _, want := range []string{InstructionsOpen, "- `r0` = `/r`", "- `r1` = `/q`", "- demo: D (file: r0/demo/SKILL.md)", "- pdf-tools: P (file: r1/pdf-tools/SKILL.md)"} {
		if !strings.Contains(block, want) {
			t.Errorf("block lacks %q:\n%s", want, block)
		}
	}
	if !strings.HasSuffix(block, InstructionsClose) || Instructions(nil) != "" {
		t.Fatal("block ends")
	}
	if got := Injected("demo", "/r/demo/SKILL.md", []byte("body\n")); got != "<skill>\n<name>demo</name>\n<path>/r/demo/SKILL.md</path>\nbody\n\n</skill>" {
		t.Fatalf("injected %q", got)
	}
}

func FuzzParseFrontMatter(f *testing.F) {
	for _, s := range []string{"---\nname: a\ndescription: b\n---\n", "---\nname: &a [*a]\n---\n", "---\n---\n", "---\nmetadata: {short-description: x}\nname: a\ndescription: b\n---"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseFrontMatter(data)
		if err != nil {
			return
		}
		if m.Name == "" || m.Description == "" || strings.ContainsAny(m.Name+m.Description+m.ShortDescription, "\n\r\t") {
			t.Fatalf("accepted %+v", m)
		}
	})
}

func FuzzMentions(f *testing.F) {
	f.Add("use $demo and $x-y")
	f.Fuzz(func(t *testing.T, text string) {
		list := []Skill{{Name: "demo"}, {Name: "x-y"}}
		for _, s := range Mentions(text, list) {
			if !strings.Contains(text, "$"+s.Name) {
				t.Fatalf("%q: mention %q not in text", text, s.Name)
			}
		}
	})
}
