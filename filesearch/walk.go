package filesearch

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// entry is one path a walk found under a root.
type entry struct {
	root  int    // index of the root it was found under
	path  string // relative to that root, '/'-separated
	isDir bool

	// For the fast path (fast.go), of an ASCII path only: the path folded,
	// and its characters' mask (all ones for any other path).
	ascii  bool
	lower  string
	nameAt int32 // where the last element starts
	mask   uint64
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
//
// The walk itself is one depth-first pass, so its order and which of two
// ways into a directory counts are as a plain recursive walk has them; on
// a machine with more than one core, readers fetch the directories it has
// decided to enter ahead of it (see prefetcher).
func walk(ctx context.Context, roots []string, emit func(entry) bool) {
	walkReaders(ctx, roots, runtime.GOMAXPROCS(0)-1, emit)
}

// walkReaders is walk with n readers fetching ahead.
func walkReaders(ctx context.Context, roots []string, n int, emit func(entry) bool) {
	pf := newPrefetcher(ctx, n)
	defer pf.stop()
	for i, root := range roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			continue
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			continue
		}
		w := &walker{ctx: ctx, root: i, emit: emit, seen: map[devIno]bool{}, pf: pf}
		w.patterns = parentPatterns(abs)
		if !w.dir(abs, entry{}) {
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
	pf       *prefetcher
	buf      []string // a child's path for the ignore matcher
}

// child is a directory entry the walk keeps, in the second pass of dir.
type child struct {
	name  string
	abs   string // set for a directory
	isDir bool
}

// dir walks the directory abs, the entry parent below the root (the zero
// entry for the root itself); false means stop.
func (w *walker) dir(abs string, parent entry) bool {
	l := w.pf.take(abs, parent.path == "")
	if l.idOK {
		if w.seen[l.id] {
			return true
		}
		w.seen[l.id] = true
	}
	if l.err != nil {
		return true
	}
	saved := len(w.patterns)
	w.patterns = append(w.patterns, l.patterns...)
	defer func() { w.patterns = w.patterns[:saved] }()
	var m gitignore.Matcher
	domain := l.domain
	if len(w.patterns) > 0 {
		m = gitignore.NewMatcher(w.patterns)
	}
	// Decide first, so that the directories to enter can be fetched ahead
	// while the first of them is walked; then emit and descend in order.
	kids := make([]child, 0, len(l.ents))
	var ahead []string
	for _, de := range l.ents {
		if m != nil {
			w.buf = append(append(w.buf[:0], domain...), de.name)
			if m.Match(w.buf, de.isDir) {
				continue
			}
		}
		c := child{name: de.name, isDir: de.isDir}
		if de.isDir {
			c.abs = joinAbs(abs, de.name)
			ahead = append(ahead, c.abs)
		}
		kids = append(kids, c)
	}
	w.pf.want(ahead)
	for _, c := range kids {
		w.n++
		if w.n%1024 == 0 && w.ctx.Err() != nil {
			return false
		}
		e := childEntry(w.root, parent, c.name, c.isDir)
		if !w.emit(e) {
			return false
		}
		if c.isDir && !w.dir(c.abs, e) {
			return false
		}
	}
	return true
}

// joinAbs is filepath.Join for a clean absolute dir and a plain name.
func joinAbs(dir, name string) string {
	if strings.HasSuffix(dir, string(filepath.Separator)) {
		return dir + name
	}
	return dir + string(filepath.Separator) + name
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
