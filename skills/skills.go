// Package skills finds the skills a thread can use: the SKILL.md files
// under the roots Codex 0.169 searches, with their metadata, ranked and
// deduplicated as Codex ranks them.
//
// A skill is a directory holding a SKILL.md whose YAML front matter names
// it and says what it is for; its body is instructions that a turn brings
// into the conversation when the user names the skill. This package only
// reads: it never writes, runs or follows anything a skill says, and a
// skill file that does not parse is reported as an error of its own
// without hiding the others. Everything on disk is untrusted: sizes,
// depths and counts are bounded.
package skills

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Scope says where a skill was found, in Codex's words.
type Scope string

const (
	ScopeRepo   Scope = "repo"
	ScopeUser   Scope = "user"
	ScopeSystem Scope = "system"
	ScopeAdmin  Scope = "admin"
)

// rank orders scopes: a skill of a higher-ranked scope hides one of the
// same name below it, and lists first.
func (s Scope) rank() int {
	switch s {
	case ScopeRepo:
		return 0
	case ScopeUser:
		return 1
	case ScopeSystem:
		return 2
	default:
		return 3
	}
}

// Skill is one discovered skill.
type Skill struct {
	Name             string
	Description      string
	ShortDescription string // "" when the front matter has none
	Path             string // absolute path of its SKILL.md
	Scope            Scope
}

// LoadError is a SKILL.md that was found and could not be used.
type LoadError struct {
	Path    string
	Message string
}

// Root is a directory searched for skills.
type Root struct {
	Path  string
	Scope Scope
}

// The limits Codex applies, and ours on what it leaves open.
const (
	FileName          = "SKILL.md"
	MaxNameLen        = 64
	MaxDescriptionLen = 1024
	// maxScanDepth is how deep below a root a SKILL.md may be.
	maxScanDepth = 6
	// maxDirsPerRoot bounds the directories visited under one root.
	maxDirsPerRoot = 2000
	// MaxFileBytes bounds a SKILL.md: a skill's instructions are meant to
	// be read whole by the model, and a bigger file is refused.
	MaxFileBytes = 256 << 10
)

// Locations are the inputs of Roots.
type Locations struct {
	CodexHome string // $CODEX_HOME
	Home      string // the user's home directory; "" skips $HOME/.agents/skills
	Cwd       string
	// RootMarkers name the files or directories that mark a project's
	// root (Codex's project_root_markers); nil means [".git"].
	RootMarkers []string
	// AdminDir is the system-wide skills directory; "" means
	// /etc/codex/skills.
	AdminDir string
}

// Roots returns the directories searched for skills, in Codex 0.169's
// order of precedence: each directory's .codex/skills from the cwd up to
// the project root, $CODEX_HOME/skills, $HOME/.agents/skills,
// $CODEX_HOME/skills/.system, the admin directory, then each directory's
// .agents/skills from the project root down to the cwd. Duplicates are
// dropped.
func Roots(loc Locations) []Root {
	var roots []Root
	cwd := filepath.Clean(loc.Cwd)
	var between []string // project root .. cwd
	if loc.Cwd != "" && filepath.IsAbs(cwd) {
		between = dirsFromProjectRoot(cwd, loc.RootMarkers)
	}
	for i := len(between) - 1; i >= 0; i-- {
		roots = append(roots, Root{filepath.Join(between[i], ".codex", "skills"), ScopeRepo})
	}
	if loc.CodexHome != "" {
		roots = append(roots, Root{filepath.Join(loc.CodexHome, "skills"), ScopeUser})
	}
	if loc.Home != "" {
		roots = append(roots, Root{filepath.Join(loc.Home, ".agents", "skills"), ScopeUser})
	}
	if loc.CodexHome != "" {
		roots = append(roots, Root{filepath.Join(loc.CodexHome, "skills", ".system"), ScopeSystem})
	}
	admin := loc.AdminDir
	if admin == "" {
		admin = "/etc/codex/skills"
	}
	roots = append(roots, Root{admin, ScopeAdmin})
	for _, d := range between {
		roots = append(roots, Root{filepath.Join(d, ".agents", "skills"), ScopeRepo})
	}
	seen := make(map[string]bool, len(roots))
	out := roots[:0]
	for _, r := range roots {
		if !seen[r.Path] {
			seen[r.Path] = true
			out = append(out, r)
		}
	}
	return out
}

// dirsFromProjectRoot lists the directories from the project root down to
// cwd. The project root is the nearest ancestor holding a marker; with
// none, it is cwd itself.
func dirsFromProjectRoot(cwd string, markers []string) []string {
	if markers == nil {
		markers = []string{".git"}
	}
	root := cwd
	if len(markers) > 0 {
	search:
		for d := cwd; ; {
			for _, m := range markers {
				if m == "" || strings.ContainsRune(m, filepath.Separator) {
					continue
				}
				if _, err := os.Lstat(filepath.Join(d, m)); err == nil {
					root = d
					break search
				}
			}
			parent := filepath.Dir(d)
			if parent == d {
				break
			}
			d = parent
		}
	}
	var dirs []string
	for d := cwd; ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if d == root || filepath.Dir(d) == d {
			break
		}
	}
	for i, j := 0, len(dirs)-1; i < j; i, j = i+1, j-1 {
		dirs[i], dirs[j] = dirs[j], dirs[i]
	}
	return dirs
}

// Discover loads the skills under roots. A name found twice keeps its
// first, highest-precedence skill; the result is ordered by scope, then
// name, then path, as Codex lists it.
func Discover(roots []Root) ([]Skill, []LoadError) {
	var found []Skill
	var errs []LoadError
	for _, r := range roots {
		s, e := scanRoot(r)
		found = append(found, s...)
		errs = append(errs, e...)
	}
	seen := make(map[string]bool, len(found))
	out := found[:0]
	for _, s := range found {
		if !seen[s.Name] {
			seen[s.Name] = true
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Scope.rank() != b.Scope.rank() {
			return a.Scope.rank() < b.Scope.rank()
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Path < b.Path
	})
	return out, errs
}

// scanRoot walks one root breadth-first, skipping hidden directories
// (the system skills live in .system under the user root and are a root
// of their own), to the depth and directory count Codex allows.
func scanRoot(r Root) ([]Skill, []LoadError) {
	var skills []Skill
	var errs []LoadError
	type dir struct {
		path  string
		depth int
	}
	if fi, err := os.Stat(r.Path); err != nil || !fi.IsDir() {
		return nil, nil
	}
	queue := []dir{{r.Path, 0}}
	visited := 0
	for len(queue) > 0 && visited < maxDirsPerRoot {
		d := queue[0]
		queue = queue[1:]
		visited++
		entries, err := os.ReadDir(d.path)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := e.Name()
			p := filepath.Join(d.path, name)
			if name == FileName && e.Type().IsRegular() {
				s, err := Load(p, r.Scope)
				if err != nil {
					errs = append(errs, LoadError{Path: p, Message: err.Error()})
					continue
				}
				skills = append(skills, s)
				continue
			}
			if strings.HasPrefix(name, ".") || d.depth+1 > maxScanDepth {
				continue
			}
			isDir := e.IsDir()
			if e.Type()&fs.ModeSymlink != 0 {
				// A linked skill directory counts; the depth bound stops
				// a link that loops.
				if fi, err := os.Stat(p); err == nil && fi.IsDir() {
					isDir = true
				}
			}
			if isDir {
				queue = append(queue, dir{p, d.depth + 1})
			}
		}
	}
	return skills, errs
}

// frontMatter is the part of a SKILL.md header this package reads.
type frontMatter struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Metadata    struct {
		ShortDescription string `yaml:"short-description"`
	} `yaml:"metadata"`
}

// Load reads one SKILL.md.
func Load(path string, scope Scope) (Skill, error) {
	data, err := ReadFile(path)
	if err != nil {
		return Skill{}, err
	}
	fm, err := ParseFrontMatter(data)
	if err != nil {
		return Skill{}, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return Skill{Name: fm.Name, Description: fm.Description, ShortDescription: fm.ShortDescription, Path: abs, Scope: scope}, nil
}

// ReadFile reads a SKILL.md, refusing one over MaxFileBytes.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s is over %d bytes", FileName, MaxFileBytes)
	}
	return data, nil
}

// Metadata is what a SKILL.md's front matter says of its skill.
type Metadata struct {
	Name             string
	Description      string
	ShortDescription string
}

// ParseFrontMatter reads the YAML header of a SKILL.md: the text between
// a first line "---" and the next line "---". It requires a name and a
// description within Codex's lengths, each on one line.
func ParseFrontMatter(data []byte) (Metadata, error) {
	if !utf8.Valid(data) {
		return Metadata{}, errors.New("not UTF-8")
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return Metadata{}, errors.New("missing YAML front matter delimited by ---")
	}
	var header string
	if strings.HasPrefix(rest, "---\n") || rest == "---" {
		header = ""
	} else if i := strings.Index(rest, "\n---\n"); i >= 0 {
		header = rest[:i]
	} else if strings.HasSuffix(rest, "\n---") {
		header = strings.TrimSuffix(rest, "\n---")
	} else {
		return Metadata{}, errors.New("missing YAML front matter delimited by ---")
	}
	var fm frontMatter
	dec := yaml.NewDecoder(bytes.NewReader([]byte(header)))
	if err := dec.Decode(&fm); err != nil && header != "" {
		return Metadata{}, fmt.Errorf("invalid YAML: %v", err)
	}
	m := Metadata{
		Name:             singleLine(fm.Name),
		Description:      singleLine(fm.Description),
		ShortDescription: singleLine(fm.Metadata.ShortDescription),
	}
	switch {
	case m.Name == "":
		return Metadata{}, errors.New("missing field `name`")
	case m.Description == "":
		return Metadata{}, errors.New("missing field `description`")
	case utf8.RuneCountInString(m.Name) > MaxNameLen:
		return Metadata{}, fmt.Errorf("invalid name: exceeds maximum length of %d characters", MaxNameLen)
	case utf8.RuneCountInString(m.Description) > MaxDescriptionLen:
		return Metadata{}, fmt.Errorf("invalid description: exceeds maximum length of %d characters", MaxDescriptionLen)
	case utf8.RuneCountInString(m.ShortDescription) > MaxDescriptionLen:
		return Metadata{}, fmt.Errorf("invalid metadata.short-description: exceeds maximum length of %d characters", MaxDescriptionLen)
	}
	return m, nil
}

// singleLine folds whitespace runs, newlines included, into one space:
// the model sees each skill on one line of a list.
func singleLine(s string) string { return strings.Join(strings.Fields(s), " ") }
