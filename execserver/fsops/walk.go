package fsops

import (
	"context"
	"io/fs"
	"sort"
	"strings"

	"github.com/codexd/codexd/execproto"
)

// Codex's fs/walk bounds.
const (
	MaxWalkDepth       = 64
	MaxWalkDirectories = 10_000
	MaxWalkEntries     = 50_000
	// maxWalkResponseBytes caps the reply; each item costs its path (and
	// message) plus walkItemOverhead, as in Codex.
	maxWalkResponseBytes = 4 * 1024 * 1024
	walkItemOverhead     = 64
)

type walkDir struct {
	shown string // path as reported: the given root joined with names
	real  place  // resolved directory that is read
	depth uint64
}

// Walk implements fs/walk: a breadth-first listing, each directory's
// entries sorted by name, of regular files and directories (symlinks to
// files, dangling symlinks and special files are left out, as Codex 0.169
// does). Followed directory symlinks are visited once per target and, with
// roots, only when the target is inside them.
func (s *Service) Walk(ctx context.Context, p execproto.FsWalkParams) (execproto.FsWalkResponse, error) {
	o := p.Options
	out := execproto.FsWalkResponse{Entries: []execproto.WalkEntry{}, Errors: []execproto.WalkError{}}
	if o.MaxDirectories == 0 || o.MaxEntries == 0 {
		return out, invalidRequest("filesystem walk limits must be greater than zero")
	}
	if o.MaxDepth > MaxWalkDepth || o.MaxDirectories > MaxWalkDirectories || o.MaxEntries > MaxWalkEntries {
		return out, invalidRequest("filesystem walk limits exceed maximums: depth=%d, directories=%d, entries=%d",
			MaxWalkDepth, MaxWalkDirectories, MaxWalkEntries)
	}
	t, err := s.locate(p.Path, true, true)
	if err != nil {
		return out, err
	}
	lfi, err := t.link.lstat()
	if err != nil {
		return out, placeError(err, t.given)
	}
	if lfi.Mode()&fs.ModeSymlink != 0 && !o.FollowDirectorySymlinks {
		return out, nil
	}
	fi, err := t.path.stat()
	if err != nil {
		return out, placeError(err, t.given)
	}
	if !fi.IsDir() {
		return out, nil
	}

	shownRoot := t.given
	if len(shownRoot) > 1 {
		shownRoot = strings.TrimSuffix(shownRoot, "/")
	}
	queue := []walkDir{{shown: shownRoot, real: t.path}}
	visited := map[string]bool{t.path.abs: true}
	dirs, entries, bytes := uint64(1), uint64(0), 0
	reserve := func(n int) bool {
		if bytes+n+walkItemOverhead > maxWalkResponseBytes {
			out.Truncated = true
			return false
		}
		bytes += n + walkItemOverhead
		return true
	}

	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return out, internal("filesystem walk cancelled")
		}
		dir := queue[0]
		queue = queue[1:]
		des, err := dir.real.readDir()
		if err != nil {
			uri := execproto.PathURI(dir.shown)
			msg := placeError(err, dir.shown).Error()
			if !reserve(len(uri) + len(msg)) {
				return out, nil
			}
			out.Errors = append(out.Errors, execproto.WalkError{Path: uri, Message: msg})
			continue
		}
		sort.Slice(des, func(i, j int) bool { return des[i].Name() < des[j].Name() })
		for _, de := range des {
			if de.Type()&fs.ModeSymlink != 0 && !resolves(dir.real.child(de.Name())) {
				// Codex reads each entry's metadata through its links and
				// passes over one it cannot read without counting it.
				continue
			}
			if entries == o.MaxEntries {
				out.Truncated = true
				return out, nil
			}
			entries++
			shown := joinShown(dir.shown, de.Name())
			kind, next, ok := s.walkKind(de, dir.real.child(de.Name()), o.FollowDirectorySymlinks)
			if !ok {
				continue
			}
			uri := execproto.PathURI(shown)
			if !reserve(len(uri)) {
				return out, nil
			}
			out.Entries = append(out.Entries, execproto.WalkEntry{Path: uri, Kind: kind})
			if kind != execproto.WalkEntryDirectory || dir.depth >= o.MaxDepth {
				continue
			}
			if o.PruneHiddenDirectories && strings.HasPrefix(de.Name(), ".") {
				continue
			}
			if visited[next.abs] {
				continue
			}
			visited[next.abs] = true
			if dirs == o.MaxDirectories {
				out.Truncated = true
				continue
			}
			dirs++
			queue = append(queue, walkDir{shown: shown, real: next, depth: dir.depth + 1})
		}
	}
	return out, nil
}

// resolves reports whether a symlink's target can be reached (inside the
// roots, when there are any).
func resolves(pl place) bool {
	_, err := pl.stat()
	return err == nil
}

func joinShown(dir, name string) string {
	if strings.HasSuffix(dir, "/") {
		return dir + name
	}
	return dir + "/" + name
}

// walkKind classifies an entry; next is the directory to descend into.
func (s *Service) walkKind(de fs.DirEntry, real place, follow bool) (execproto.WalkEntryKind, place, bool) {
	switch t := de.Type(); {
	case t.IsDir():
		return execproto.WalkEntryDirectory, real, true
	case t.IsRegular():
		return execproto.WalkEntryFile, place{}, true
	case t&fs.ModeSymlink != 0 && follow:
		resolved, err := resolvePath(real.abs, true)
		if err != nil || s.confine(real.abs, resolved) != nil {
			return "", place{}, false
		}
		pl, err := s.placeOf(resolved)
		if err != nil {
			return "", place{}, false
		}
		fi, err := pl.stat()
		if err != nil || !fi.IsDir() {
			return "", place{}, false
		}
		return execproto.WalkEntryDirectory, pl, true
	}
	return "", place{}, false
}
