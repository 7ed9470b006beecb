package skills

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestRules: [[skills.config]] entries disable and enable skills by path
// or by name, a later rule winning, as Codex 0.169 resolves them; bad
// entries are skipped.
func TestRules(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a", FileName)
	b := filepath.Join(dir, "b", FileName)
	list := []Skill{{Name: "alpha", Path: a}, {Name: "beta", Path: b}}
	cfgPath := filepath.Join(dir, "config.toml")
	names := func(src string) []string {
		t.Helper()
		if err := os.WriteFile(cfgPath, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range Enabled(list, ReadRules(cfgPath)) {
			out = append(out, s.Name)
		}
		return out
	}
	cases := []struct {
		src  string
		want []string
	}{
		{"", []string{"alpha", "beta"}},
		{"[[skills.config]]\npath = \"" + a + "\"\nenabled = false\n", []string{"beta"}},
		// The path is compared cleaned.
		{"[[skills.config]]\npath = \"" + filepath.Join(dir, "a", "..", "a", FileName) + "\"\nenabled = false\n", []string{"beta"}},
		{"[[skills.config]]\nname = \" beta \"\nenabled = false\n", []string{"alpha"}},
		// A later rule wins: the name enables what the path disabled...
		{"[[skills.config]]\npath = \"" + a + "\"\nenabled = false\n[[skills.config]]\nname = \"alpha\"\nenabled = true\n", []string{"alpha", "beta"}},
		// ...and a name rule after a path rule wins over it.
		{"[[skills.config]]\npath = \"" + b + "\"\nenabled = true\n[[skills.config]]\nname = \"beta\"\nenabled = false\n", []string{"alpha"}},
		// Skipped: both selectors, neither, a blank name, no enabled, a
		// relative path.
		{"[[skills.config]]\npath = \"" + a + "\"\nname = \"alpha\"\nenabled = false\n[[skills.config]]\nenabled = false\n[[skills.config]]\nname = \" \"\nenabled = false\n[[skills.config]]\nname = \"alpha\"\n[[skills.config]]\npath = \"a/SKILL.md\"\nenabled = false\n", []string{"alpha", "beta"}},
		// A file that does not parse has no rules.
		{"[[skills.config]\n", []string{"alpha", "beta"}},
	}
	for _, c := range cases {
		if got := names(c.src); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: enabled %v, want %v", c.src, got, c.want)
		}
	}
	if r := ReadRules(filepath.Join(dir, "missing.toml")); r != nil {
		t.Fatalf("rules of a missing file: %v", r)
	}
}
