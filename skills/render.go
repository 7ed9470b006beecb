package skills

import (
	"fmt"
	"path/filepath"
	"strings"
)

// The tags of the blocks a turn carries, as Codex 0.169 names them.
const (
	InstructionsOpen  = "<skills_instructions>"
	InstructionsClose = "</skills_instructions>"
	SkillOpen         = "<skill>"
	SkillClose        = "</skill>"
)

// Instructions renders the developer block that tells the model which
// skills exist and how to use one: the roots under short aliases (a path
// is long, and repeats for every skill), then a line per skill. It is ""
// when there are no skills.
func Instructions(list []Skill) string {
	if len(list) == 0 {
		return ""
	}
	var roots []string
	alias := map[string]string{}
	rootOf := func(p string) (string, string) {
		// A skill's root is the directory above its own directory.
		dir := filepath.Dir(filepath.Dir(p))
		rel := filepath.Join(filepath.Base(filepath.Dir(p)), filepath.Base(p))
		a, ok := alias[dir]
		if !ok {
			a = fmt.Sprintf("r%d", len(roots))
			alias[dir] = a
			roots = append(roots, dir)
		}
		return a, rel
	}
	var lines []string
	for _, s := range list {
		a, rel := rootOf(s.Path)
		lines = append(lines, fmt.Sprintf("- %s: %s (file: %s/%s)", s.Name, s.Description, a, filepath.ToSlash(rel)))
	}
	var b strings.Builder
	b.WriteString(InstructionsOpen + "\n## Skills\n")
	b.WriteString("Skills are instructions kept on disk, each in a `SKILL.md`. These are the ones available here; a path is written as a root alias from the table below plus the rest of the path.\n")
	b.WriteString("### Skill roots\n")
	for i, r := range roots {
		fmt.Fprintf(&b, "- `r%d` = `%s`\n", i, r)
	}
	b.WriteString("### Available skills\n")
	b.WriteString(strings.Join(lines, "\n"))
	b.WriteString("\n### Using a skill\n")
	b.WriteString("- Use a skill when the user names it (as `$name` or in words) or when the task plainly fits its description. Use every skill named; a skill applies to the turn it is named in, not to later ones unless named again.\n")
	b.WriteString("- Before acting, read the skill's whole `SKILL.md` (expand the alias first). Resolve relative paths it mentions against the directory of that `SKILL.md`, and read only the extra files the task needs.\n")
	b.WriteString("- Prefer the scripts, templates and assets a skill ships over writing your own.\n")
	b.WriteString("- When several apply, use the fewest that cover the request and say in one line which you use and why. If a skill is missing, unreadable or does not fit, say so briefly and carry on with the best alternative.\n")
	b.WriteString(InstructionsClose)
	return b.String()
}

// Injected renders the user message that brings a skill's instructions
// into a turn: its name, its path, and the whole SKILL.md.
func Injected(name, path string, contents []byte) string {
	return fmt.Sprintf("%s\n<name>%s</name>\n<path>%s</path>\n%s\n%s", SkillOpen, name, path, contents, SkillClose)
}

// Mentions returns the skills named in text as `$name`, in the order they
// first appear. A name is matched whole: `$demo` names demo, `$demos`
// does not, and a `$` inside a word (`a$demo`) is no mention.
func Mentions(text string, list []Skill) []Skill {
	if !strings.Contains(text, "$") || len(list) == 0 {
		return nil
	}
	byName := make(map[string]Skill, len(list))
	for _, s := range list {
		byName[s.Name] = s
	}
	var out []Skill
	seen := map[string]bool{}
	for i := 0; i < len(text); i++ {
		if text[i] != '$' || (i > 0 && isNameByte(text[i-1])) {
			continue
		}
		j := i + 1
		for j < len(text) && isNameByte(text[j]) {
			j++
		}
		name := text[i+1 : j]
		if s, ok := byName[name]; ok && !seen[name] {
			seen[name] = true
			out = append(out, s)
		}
		i = j - 1
	}
	return out
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == ':'
}
