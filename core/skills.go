package core

import (
	"os"
	"path/filepath"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/skills"
)

// Skills, as Codex 0.169 gives them to the model: the list of the skills
// found for the turn's cwd in the first turn's developer context, and the
// whole SKILL.md of each skill a turn names (a skill input, or `$name` in
// its text) in a user message of its own after the user's.

// turnSkills discovers the skills of the turn's cwd, once per turn.
func (tr *turn) turnSkills() []skills.Skill {
	tr.skillsOnce.Do(func() {
		if tr.t.core.cfg.NoSkills {
			return
		}
		home, _ := os.UserHomeDir()
		found, _ := skills.Discover(skills.Roots(skills.Locations{
			CodexHome:   tr.t.core.cfg.CodexHome,
			Home:        home,
			Cwd:         tr.settings.Cwd,
			RootMarkers: tr.t.core.cfg.ProjectRootMarkers,
			AdminDir:    tr.t.core.cfg.SkillsAdminDir,
		}))
		// The [[skills.config]] rules are read at each turn, so that one
		// skills/config/write wrote applies to the next turn.
		if tr.t.core.cfg.CodexHome != "" {
			tr.skillRules = skills.ReadRules(filepath.Join(tr.t.core.cfg.CodexHome, "config.toml"))
		}
		tr.skills = skills.Enabled(found, tr.skillRules)
	})
	return tr.skills
}

// skillItems returns the messages that bring the skills an input names
// into the history: skill inputs first, then `$name` mentions, each skill
// once. A skill input must name a SKILL.md; one that cannot be read is
// skipped with a warning (the model still sees the user's words).
func (tr *turn) skillItems(in []agent.Input) []prompt.Item {
	var out []prompt.Item
	seen := map[string]bool{}
	add := func(name, path string) {
		if seen[path] {
			return
		}
		seen[path] = true
		if filepath.Base(path) != skills.FileName || !filepath.IsAbs(path) {
			tr.t.log.Warn("skill input is not an absolute path to a SKILL.md", "path", path)
			return
		}
		tr.turnSkills() // reads the rules
		if skills.Disabled([]skills.Skill{{Name: name, Path: path}}, tr.skillRules)[path] {
			tr.t.log.Info("skill input names a disabled skill", "path", path)
			return
		}
		data, err := skills.ReadFile(path)
		if err != nil {
			tr.t.log.Warn("reading a skill", "path", path, "err", err)
			return
		}
		out = append(out, textMessage("user", skills.Injected(name, path, data)))
	}
	for _, p := range in {
		if p.Type == "skill" {
			add(p.Name, p.Path)
		}
	}
	for _, p := range in {
		if p.Type != "text" && p.Type != "" {
			continue
		}
		for _, s := range skills.Mentions(p.Text, tr.turnSkills()) {
			add(s.Name, s.Path)
		}
	}
	return out
}
