package core

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/applypatch"
	"github.com/codexd/codexd/sandbox"
)

// writeRoots are where the thread's sandbox lets a command write, as the
// sandbox package resolves them on the machine that runs the commands: a
// patch is applied without asking exactly where a command could have
// written it, as Codex decides.
type writeRoots struct {
	all   bool // danger-full-access, or a sandbox the caller provides
	roots []sandbox.WritableRoot
}

// allows reports whether a command could write path (absolute, clean).
func (w writeRoots) allows(path string) bool {
	if w.all {
		return true
	}
	for _, r := range w.roots {
		if r.IsPathWritable(path) {
			return true
		}
	}
	return false
}

// sandboxRoots resolves the writable roots of s through fsys (the
// exec-server's filesystem), with the commands' $TMPDIR (env is their
// environment). Read-only (or an unknown mode) writes nowhere.
func sandboxRoots(ctx context.Context, fsys execFS, s agent.Settings, env map[string]string) writeRoots {
	switch s.Sandbox.Mode {
	case agent.SandboxDangerFullAccess, agent.SandboxExternal:
		return writeRoots{all: true}
	case agent.SandboxWorkspaceWrite:
	default:
		return writeRoots{}
	}
	p := sandbox.Policy{
		Mode: sandbox.WorkspaceWrite, Cwd: s.Cwd, WritableRoots: commandSandbox(s).WritableRoots,
		ExcludeTmpdirEnvVar: s.Sandbox.ExcludeTmpdirEnvVar, ExcludeSlashTmp: s.Sandbox.ExcludeSlashTmp,
	}
	return writeRoots{roots: p.ResolveWritableRootsOn(sandbox.Host{
		Getenv: func(k string) string { return env[k] },
		Stat: func(path string) (fs.FileMode, error) {
			m, err := fsys.metadata(ctx, path, true)
			switch {
			case err != nil:
				return 0, err
			case m.IsDirectory:
				return fs.ModeDir, nil
			case m.IsFile:
				return 0, nil
			}
			return fs.ModeIrregular, nil
		},
		ReadFile: func(path string) ([]byte, error) { return fsys.ReadFile(ctx, path) },
	})}
}

// A patch is verified through the exec-server's filesystem, decided on, and
// then written by the core through that server's fs methods, which no
// sandbox confines. A path inside the workspace can lead elsewhere: a
// sandboxed `ln -s ~/.bashrc notes.txt` makes notes.txt write ~/.bashrc.
// Codex avoids this by applying its patches inside its sandbox. codexd
// resolves where every write and removal lands (fs/canonicalize of the path,
// or of its nearest existing ancestor) before deciding, decides on those
// real paths, and then writes exactly those paths with followSymlinks:
// false, which the exec-server refuses if any component has become a
// symlink since (the last one atomically, through O_NOFOLLOW). A path
// swapped for a link between the decision and the write fails to write; it
// never leads elsewhere.

// landing is where each operation of a verified plan lands on the
// exec-server's machine.
type landing struct {
	writes  map[string]string // written file (as the plan names it) -> its real path
	removes map[string]string // removed file -> the real path of the entry itself
	dirs    map[string]string // a parent a write may have to create -> its real path
}

// reals returns every real path the plan writes or removes, once each,
// sorted.
func (l *landing) reals() []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]string{l.writes, l.removes} {
		for _, r := range m {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	sort.Strings(out)
	return out
}

// redirected describes the plan's paths whose real path is not one w
// allows and differs from the path itself: the writes a symlink leads out
// of the writable roots, which the user should see before approving.
func (l *landing) redirected(w writeRoots) string {
	var lines []string
	for _, m := range []map[string]string{l.writes, l.removes} {
		for p, r := range m {
			if r != p && !w.allows(r) {
				lines = append(lines, fmt.Sprintf("%s leads to %s", p, r))
			}
		}
	}
	if len(lines) == 0 {
		return ""
	}
	sort.Strings(lines)
	return "writes outside the writable roots through a symbolic link: " + strings.Join(lines, "; ")
}

// errSymlinkPath refuses what a patch cannot do through a symlink without
// leaving the place that was decided on.
type errSymlinkPath struct{ path, why string }

func (e *errSymlinkPath) Error() string { return e.path + " " + e.why }

// resolveLanding finds where each operation of plan lands.
func resolveLanding(ctx context.Context, fsys execFS, plan *applypatch.Plan) (*landing, error) {
	l := &landing{writes: map[string]string{}, removes: map[string]string{}, dirs: map[string]string{}}
	write := func(p string) error {
		if _, done := l.writes[p]; done {
			return nil
		}
		r, err := realPath(ctx, fsys, p)
		if err != nil {
			return err
		}
		l.writes[p] = r
		if _, ok := l.dirs[filepath.Dir(p)]; !ok {
			l.dirs[filepath.Dir(p)] = filepath.Dir(r)
		}
		return nil
	}
	remove := func(p string) error {
		dir, err := realPath(ctx, fsys, filepath.Dir(p))
		if err != nil {
			return err
		}
		r := filepath.Join(dir, filepath.Base(p))
		if _, err := fsys.metadata(ctx, r, false); errors.Is(err, syscall.ELOOP) {
			// Removing the link itself is safe only if its directory is
			// still the one decided on when the server unlinks it, which
			// no fs call guarantees; a command can remove it.
			return &errSymlinkPath{p, "is a symbolic link; apply_patch does not delete symbolic links (remove it with a command)"}
		}
		l.removes[p] = r
		return nil
	}
	for _, c := range plan.Changes {
		var err error
		switch {
		case c.Kind == applypatch.KindAdd:
			err = write(c.Path)
		case c.Kind == applypatch.KindDelete:
			err = remove(c.Path)
		case c.MovePath != "" && c.MovePath != c.Path:
			if err = write(c.MovePath); err == nil {
				err = remove(c.Path)
			}
		default:
			err = write(c.Path)
		}
		if err != nil {
			return nil, err
		}
	}
	return l, nil
}

// realPath is where a write to p lands: p canonicalized, or, when p does
// not exist, its parent's real path joined with p's name. A missing p that
// is a symlink (to a missing target) is refused: where it leads cannot be
// known before writing through it.
func realPath(ctx context.Context, fsys execFS, p string) (string, error) {
	r, err := fsys.canonicalize(ctx, p)
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		return "", err
	}
	parent := filepath.Dir(p)
	if parent == p {
		return p, nil
	}
	dir, err := realPath(ctx, fsys, parent)
	if err != nil {
		return "", err
	}
	r = filepath.Join(dir, filepath.Base(p))
	if _, err := fsys.metadata(ctx, r, false); errors.Is(err, syscall.ELOOP) {
		return "", &errSymlinkPath{p, "is a symbolic link to a path that does not exist; apply_patch does not create files through symbolic links"}
	}
	return r, nil
}

// realRoots returns w with its roots and read-only subpaths resolved as
// realPath resolves a patch's paths (the sandbox grants a root by opening
// it, symlinks followed). A path that cannot be resolved is kept as it is.
func realRoots(ctx context.Context, fsys execFS, w writeRoots) writeRoots {
	real := func(p string) string {
		if r, err := realPath(ctx, fsys, p); err == nil {
			return r
		}
		return p
	}
	out := writeRoots{all: w.all}
	for _, r := range w.roots {
		rr := sandbox.WritableRoot{Root: real(r.Root)}
		for _, s := range r.ReadOnlySubpaths {
			rr.ReadOnlySubpaths = append(rr.ReadOnlySubpaths, real(s))
		}
		out.roots = append(out.roots, rr)
	}
	return out
}

// landedFS applies a plan where its landing says, never following a
// symlink: each write and removal goes to the real path that was decided
// on, with followSymlinks: false.
type landedFS struct {
	execFS
	l *landing
}

var errNotDecided = errors.New("the path was not part of the approved patch")

func (f landedFS) WriteFile(ctx context.Context, path string, data []byte) error {
	r, ok := f.l.writes[path]
	if !ok {
		return &fs.PathError{Op: "write", Path: path, Err: errNotDecided}
	}
	return f.writeNoFollow(ctx, r, data)
}

func (f landedFS) Remove(ctx context.Context, path string) error {
	r, ok := f.l.removes[path]
	if !ok {
		return &fs.PathError{Op: "remove", Path: path, Err: errNotDecided}
	}
	return f.removeNoFollow(ctx, r)
}

func (f landedFS) MkdirAll(ctx context.Context, path string) error {
	r, ok := f.l.dirs[path]
	if !ok {
		return &fs.PathError{Op: "mkdir", Path: path, Err: errNotDecided}
	}
	return f.mkdirAllNoFollow(ctx, r)
}
