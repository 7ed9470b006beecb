package skills

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// Rule is one [[skills.config]] entry of a user's config.toml: it enables
// or disables the skills it selects, by the path of their SKILL.md or by
// their name (exactly one of the two).
type Rule struct {
	Name    string
	Path    string
	Enabled bool
}

// NormalizePath is the form a rule's path is compared in: the path with
// its links resolved when it exists, else cleaned, as Codex canonicalizes
// it.
func NormalizePath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// RulesOf returns the rules of a decoded config.toml (its "skills" table),
// in file order, a later rule for the same selector replacing an earlier
// one. Entries that select by neither or by both, or by a blank name, are
// skipped, as Codex skips them.
func RulesOf(cfg map[string]any) []Rule {
	tbl, _ := cfg["skills"].(map[string]any)
	var entries []map[string]any
	switch list := tbl["config"].(type) {
	case []map[string]any:
		entries = list
	case []any:
		for _, e := range list {
			if m, ok := e.(map[string]any); ok {
				entries = append(entries, m)
			}
		}
	}
	var out []Rule
	for _, e := range entries {
		enabled, ok := e["enabled"].(bool)
		if !ok {
			continue
		}
		path, hasPath := e["path"].(string)
		name, hasName := e["name"].(string)
		var r Rule
		switch {
		case hasPath && !hasName && filepath.IsAbs(path):
			r = Rule{Path: NormalizePath(path), Enabled: enabled}
		case hasName && !hasPath && strings.TrimSpace(name) != "":
			r = Rule{Name: strings.TrimSpace(name), Enabled: enabled}
		default:
			continue
		}
		kept := out[:0]
		for _, o := range out {
			if o.Name != r.Name || o.Path != r.Path {
				kept = append(kept, o)
			}
		}
		out = append(kept, r)
	}
	return out
}

// ReadRules reads the rules of the config.toml at path; a missing file
// has none, and so has one that does not parse (the config loader reports
// that).
func ReadRules(path string) []Rule {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || err != nil {
		return nil
	}
	cfg := map[string]any{}
	if _, err := toml.Decode(string(data), &cfg); err != nil {
		return nil
	}
	return RulesOf(cfg)
}

// Disabled returns the SKILL.md paths of list that rules disable: each
// rule in turn disables or enables what it selects, so a later rule wins.
func Disabled(list []Skill, rules []Rule) map[string]bool {
	off := map[string]bool{}
	for _, r := range rules {
		for _, s := range list {
			if r.Path != "" && NormalizePath(s.Path) != r.Path || r.Name != "" && s.Name != r.Name {
				continue
			}
			if r.Enabled {
				delete(off, s.Path)
			} else {
				off[s.Path] = true
			}
		}
	}
	return off
}

// Enabled returns the skills of list that rules leave enabled.
func Enabled(list []Skill, rules []Rule) []Skill {
	off := Disabled(list, rules)
	if len(off) == 0 {
		return list
	}
	var out []Skill
	for _, s := range list {
		if !off[s.Path] {
			out = append(out, s)
		}
	}
	return out
}
