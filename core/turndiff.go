package core

import (
	"context"
	"crypto/sha1"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/codexd/codexd/applypatch"
)

// turnDiff is every file a turn changed: its content before the turn first
// touched it, and now, and where a moved file came from. It renders as
// Codex 0.169's turn diff does: git-style, paths relative to the display
// root (the turn cwd's git root, or the cwd), with blob ids, a file moved
// (and not replaced) as one rename.
type turnDiff struct {
	before map[string]*string // nil: did not exist
	after  map[string]*string // nil: deleted
	origin map[string]string  // a moved file's path now -> its path before the turn
	root   string             // display root; "" until the first record
}

func newTurnDiff() *turnDiff {
	return &turnDiff{before: map[string]*string{}, after: map[string]*string{}, origin: map[string]string{}}
}

func strp(s string) *string { return &s }

// displayRoot is what the turn diff's paths are relative to, as Codex
// takes it: the nearest ancestor of cwd (or cwd) holding a .git, else cwd.
func displayRoot(ctx context.Context, fsys applypatch.FS, cwd string) string {
	for d := cwd; ; {
		if _, err := fsys.Stat(ctx, filepath.Join(d, ".git")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return cwd
		}
		d = up
	}
}

// record notes the plan's changes (only those whose paths are in written,
// when it is not nil: a plan that failed midway).
func (d *turnDiff) record(plan *applypatch.Plan, written []string) {
	if d.root == "" {
		d.root = plan.Cwd
	}
	done := map[string]bool{}
	for _, w := range written {
		done[w] = true
	}
	wrote := func(path string) bool { return written == nil || done[path] }
	note := func(path string, old, new *string) {
		if _, seen := d.before[path]; !seen {
			d.before[path] = old
		}
		d.after[path] = new
	}
	for _, c := range plan.Changes {
		switch c.Kind {
		case applypatch.KindAdd:
			if !wrote(c.Path) {
				continue
			}
			var old *string
			if c.Overwrites {
				old = strp(c.OldContent)
			}
			note(c.Path, old, strp(c.NewContent))
			delete(d.origin, c.Path)
		case applypatch.KindDelete:
			if !wrote(c.Path) {
				continue
			}
			note(c.Path, strp(c.OldContent), nil)
			delete(d.origin, c.Path)
		case applypatch.KindUpdate:
			if c.MovePath == "" || c.MovePath == c.Path {
				if wrote(c.Path) {
					note(c.Path, strp(c.OldContent), strp(c.NewContent))
				}
				continue
			}
			from, to := wrote(c.Path), wrote(c.MovePath)
			if from {
				note(c.Path, strp(c.OldContent), nil)
			}
			if to {
				note(c.MovePath, c.OverwrittenMove, strp(c.NewContent))
			}
			if from && to {
				o, ok := d.origin[c.Path]
				if !ok {
					o = c.Path
				}
				delete(d.origin, c.Path)
				delete(d.origin, c.MovePath)
				if o != c.MovePath {
					d.origin[c.MovePath] = o
				}
			}
		}
	}
}

// renames pairs each moved file's path before the turn with its path now,
// when the file is no longer at the first and nothing was at the second.
func (d *turnDiff) renames() map[string]string {
	out := map[string]string{}
	for dest, orig := range d.origin {
		if dest == orig || d.after[orig] != nil || d.after[dest] == nil || d.before[orig] == nil || d.before[dest] != nil {
			continue
		}
		out[orig] = dest
	}
	return out
}

func (d *turnDiff) display(p string) string {
	name := p
	if rel, err := filepath.Rel(d.root, p); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		name = rel
	}
	return filepath.ToSlash(name)
}

// unified renders the turn's changes; "" when the files are as they were.
func (d *turnDiff) unified() string {
	pairs := d.renames()
	dests := map[string]bool{}
	for _, dest := range pairs {
		dests[dest] = true
	}
	paths := make([]string, 0, len(d.after))
	for p := range d.after {
		paths = append(paths, p)
	}
	sort.Slice(paths, func(i, j int) bool { return d.display(paths[i]) < d.display(paths[j]) })
	var b strings.Builder
	for _, p := range paths {
		if dests[p] {
			continue
		}
		if dest, ok := pairs[p]; ok {
			d.render(&b, p, d.before[p], dest, d.after[dest])
		} else {
			d.render(&b, p, d.before[p], p, d.after[p])
		}
	}
	return b.String()
}

func (d *turnDiff) render(b *strings.Builder, left string, old *string, right string, new *string) {
	if old == nil && new == nil || old != nil && new != nil && *old == *new {
		return
	}
	l, r := d.display(left), d.display(right)
	fmt.Fprintf(b, "diff --git a/%s b/%s\n", l, r)
	from, to := "a/"+l, "b/"+r
	var o, n string
	lo, ro := zeroOID, zeroOID
	switch {
	case old == nil:
		b.WriteString("new file mode 100644\n")
	case new == nil:
		b.WriteString("deleted file mode 100644\n")
	}
	if old == nil {
		from = "/dev/null"
	} else {
		o, lo = *old, blobOID(*old)
	}
	if new == nil {
		to = "/dev/null"
	} else {
		n, ro = *new, blobOID(*new)
	}
	fmt.Fprintf(b, "index %s..%s\n--- %s\n+++ %s\n", lo, ro, from, to)
	u := applypatch.UnifiedDiff(o, n, 3)
	b.WriteString(u)
	if !strings.HasSuffix(u, "\n") {
		b.WriteByte('\n')
	}
}

const zeroOID = "0000000000000000000000000000000000000000"

// blobOID is content's git blob id.
func blobOID(content string) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write([]byte(content))
	return fmt.Sprintf("%x", h.Sum(nil))
}
