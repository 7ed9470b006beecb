package filesearch

import (
	"bufio"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// entry is one path a walk found under a root.
type entry struct {
	root  int    // index of the root it was found under
	path  string // relative to that root, '/'-separated
	isDir bool
}

// ignoreFiles are read in every directory walked, as ripgrep's walker
// (which Codex's file search uses) reads them: .gitignore whether or not
// the tree is a git repository, and .ignore beside it, later lines winning.
var ignoreFiles = []string{".gitignore", ".ignore"}

// maxIgnoreFileBytes bounds what one ignore file may cost: a longer one is
// read up to here (a hostile tree can hold a huge one).
const maxIgnoreFileBytes = 1 << 20

// walk lists every file and directory under roots (the roots themselves
// excepted) that no ignore file excludes, hidden ones included, following
// symbolic links to directories once each. It calls emit in walk order
// and stops early when ctx is done or emit returns false.
func walk(ctx context.Context, roots []string, emit func(entry) bool) {
	for i, root := range roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			continue
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			continue
		}
		w := &walker{ctx: ctx, root: i, emit: emit, seen: map[devIno]bool{}}
		w.patterns = parentPatterns(abs)
		if !w.dir(abs, "") {
			return
		}
	}
}

type devIno struct{ dev, ino uint64 }

type walker struct {
	ctx      context.Context
	root     int
	emit     func(entry) bool
	patterns []gitignore.Pattern
	seen     map[devIno]bool // directories entered, so a link cycle ends
	n        int
}

// dir walks the directory abs (rel below the root); false means stop.
func (w *walker) dir(abs, rel string) bool {
	if st, err := os.Stat(abs); err == nil {
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			k := devIno{uint64(sys.Dev), uint64(sys.Ino)} //nolint:unconvert // widths differ by platform
			if w.seen[k] {
				return true
			}
			w.seen[k] = true
		}
	}
	saved := len(w.patterns)
	domain := splitPath(abs)
	for _, name := range ignoreFiles {
		w.patterns = append(w.patterns, readPatterns(filepath.Join(abs, name), domain)...)
	}
	if rel == "" {
		// A repository's own excludes, when the root is its top.
		w.patterns = append(w.patterns, readPatterns(filepath.Join(abs, ".git", "info", "exclude"), domain)...)
	}
	defer func() { w.patterns = w.patterns[:saved] }()
	ents, err := os.ReadDir(abs)
	if err != nil {
		return true
	}
	m := gitignore.NewMatcher(w.patterns)
	for _, de := range ents {
		w.n++
		if w.n%1024 == 0 && w.ctx.Err() != nil {
			return false
		}
		name := de.Name()
		childAbs := filepath.Join(abs, name)
		isDir := de.IsDir()
		if de.Type()&fs.ModeSymlink != 0 {
			st, err := os.Stat(childAbs)
			if err != nil {
				continue // a dangling link is no file
			}
			isDir = st.IsDir()
		}
		if m.Match(append(domain[:len(domain):len(domain)], name), isDir) {
			continue
		}
		childRel := name
		if rel != "" {
			childRel = rel + "/" + name
		}
		if !w.emit(entry{root: w.root, path: childRel, isDir: isDir}) {
			return false
		}
		if isDir && !w.dir(childAbs, childRel) {
			return false
		}
	}
	return true
}

// parentPatterns reads the ignore files of the directories above root, up
// to the top of the git repository holding it, as ripgrep's walker does:
// a root inside a repository keeps the repository's ignores.
func parentPatterns(root string) []gitignore.Pattern {
	var dirs []string
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if st, err := os.Stat(filepath.Join(d, ".git")); err == nil && st.IsDir() {
			break
		}
		if filepath.Dir(d) == d {
			if _, err := os.Stat(filepath.Join(root, ".git")); err == nil {
				return nil // root is its own repository: nothing above counts
			}
			dirs = nil // in no repository: nothing above counts either
			break
		}
	}
	var ps []gitignore.Pattern
	for i := len(dirs) - 1; i >= 0; i-- {
		domain := splitPath(dirs[i])
		for _, name := range ignoreFiles {
			ps = append(ps, readPatterns(filepath.Join(dirs[i], name), domain)...)
		}
		if i == len(dirs)-1 {
			ps = append(ps, readPatterns(filepath.Join(dirs[i], ".git", "info", "exclude"), domain)...)
		}
	}
	return ps
}

func readPatterns(path string, domain []string) []gitignore.Pattern {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(io.LimitReader(f, maxIgnoreFileBytes))
	sc.Buffer(make([]byte, 0, 4096), maxIgnoreFileBytes)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

func splitPath(abs string) []string {
	var out []string
	for _, p := range strings.Split(filepath.ToSlash(abs), "/") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}
