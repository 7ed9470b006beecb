package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Mode is a sandbox mode, spelled as Codex's sandbox_mode.
type Mode string

// The sandbox modes.
const (
	ReadOnly         Mode = "read-only"
	WorkspaceWrite   Mode = "workspace-write"
	DangerFullAccess Mode = "danger-full-access"
)

// Policy says what a command may do. Its fields follow Codex's
// SandboxPolicy (protocol.rs); the JSON form is what the helper receives.
type Policy struct {
	Mode Mode `json:"mode"`
	// Cwd is the workspace: the absolute directory a workspace-write
	// command may write under. It is the session's cwd, not necessarily
	// the command's working directory.
	Cwd string `json:"cwd,omitempty"`
	// WritableRoots are more absolute directories a workspace-write
	// command may write under.
	WritableRoots []string `json:"writableRoots,omitempty"`
	// NetworkAccess allows network access under read-only and
	// workspace-write.
	NetworkAccess bool `json:"networkAccess,omitempty"`
	// ExcludeTmpdirEnvVar and ExcludeSlashTmp take $TMPDIR and /tmp out of
	// workspace-write's default writable roots.
	ExcludeTmpdirEnvVar bool `json:"excludeTmpdirEnvVar,omitempty"`
	ExcludeSlashTmp     bool `json:"excludeSlashTmp,omitempty"`
}

// ErrUnknownMode is a mode other than the three.
var ErrUnknownMode = errors.New("sandbox: unknown mode")

// Confined reports whether the mode confines commands.
func (m Mode) Confined() bool { return m == ReadOnly || m == WorkspaceWrite }

// Validate checks the mode and that the paths are absolute.
func (p Policy) Validate() error {
	switch p.Mode {
	case ReadOnly, DangerFullAccess:
	case WorkspaceWrite:
		if !filepath.IsAbs(p.Cwd) {
			return fmt.Errorf("sandbox: workspace-write needs an absolute cwd, got %q", p.Cwd)
		}
	default:
		return fmt.Errorf("%w %q (want read-only, workspace-write or danger-full-access)", ErrUnknownMode, p.Mode)
	}
	for _, r := range p.WritableRoots {
		if !filepath.IsAbs(r) {
			return fmt.Errorf("sandbox: writable root %q is not absolute", r)
		}
	}
	return nil
}

// HasFullNetworkAccess reports whether commands may use the network.
func (p Policy) HasFullNetworkAccess() bool { return p.Mode == DangerFullAccess || p.NetworkAccess }

// WritableRoot is a directory a command may write under, with the subpaths
// Codex keeps read-only inside it.
type WritableRoot struct {
	Root string
	// ReadOnlySubpaths are the root's .git (and, for a .git file that
	// points elsewhere, the directory it points to), .agents, and .codex
	// (always for the workspace itself, else when it exists). The helper
	// keeps those that exist read-only (see the package doc); the approval
	// layer refuses to auto-approve writes into any of them.
	ReadOnlySubpaths []string
}

// IsPathWritable reports whether path is under the root and outside its
// read-only subpaths.
func (w WritableRoot) IsPathWritable(path string) bool {
	if !within(path, w.Root) {
		return false
	}
	for _, s := range w.ReadOnlySubpaths {
		if within(path, s) {
			return false
		}
	}
	return true
}

func within(path, dir string) bool {
	path, dir = filepath.Clean(path), filepath.Clean(dir)
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+"/")
}

// ResolveWritableRoots returns where a command may write under p, evaluated on
// this machine with getenv for $TMPDIR (nil: os.Getenv): none for
// read-only and danger-full-access (which writes everywhere); for
// workspace-write the extra roots, the cwd, /tmp if it is a directory, and
// $TMPDIR, in Codex's order and unless excluded.
func (p Policy) ResolveWritableRoots(getenv func(string) string) []WritableRoot {
	return p.ResolveWritableRootsOn(Host{Getenv: getenv})
}

// Host is the machine whose filesystem and environment writable roots are
// resolved on: the one that runs the commands, which need not be this one
// (a remote exec-server). Nil fields are this machine's.
type Host struct {
	// Getenv reads the commands' environment ($TMPDIR).
	Getenv func(key string) string
	// Stat reports the type of what path leads to, symlinks followed:
	// fs.ModeDir for a directory, 0 for a regular file, another type bit
	// for anything else.
	Stat func(path string) (fs.FileMode, error)
	// ReadFile reads a file (the gitdir pointer of a worktree's .git).
	ReadFile func(path string) ([]byte, error)
}

func (h Host) orLocal() Host {
	if h.Getenv == nil {
		h.Getenv = os.Getenv
	}
	if h.Stat == nil {
		h.Stat = func(path string) (fs.FileMode, error) {
			info, err := os.Stat(path)
			if err != nil {
				return 0, err
			}
			return info.Mode().Type(), nil
		}
	}
	if h.ReadFile == nil {
		h.ReadFile = os.ReadFile
	}
	return h
}

// ResolveWritableRootsOn is ResolveWritableRoots evaluated on h.
func (p Policy) ResolveWritableRootsOn(h Host) []WritableRoot {
	if p.Mode != WorkspaceWrite {
		return nil
	}
	h = h.orLocal()
	var roots []string
	roots = append(roots, p.WritableRoots...)
	roots = append(roots, p.Cwd)
	if !p.ExcludeSlashTmp {
		if m, err := h.Stat("/tmp"); err == nil && m.IsDir() {
			roots = append(roots, "/tmp")
		}
	}
	if tmp := h.Getenv("TMPDIR"); !p.ExcludeTmpdirEnvVar && tmp != "" && filepath.IsAbs(tmp) {
		roots = append(roots, tmp)
	}
	cwd := filepath.Clean(p.Cwd)
	out := make([]WritableRoot, 0, len(roots))
	for _, r := range roots {
		r = filepath.Clean(r)
		out = append(out, WritableRoot{Root: r, ReadOnlySubpaths: readOnlySubpaths(h, r, r == cwd)})
	}
	return out
}

// readOnlySubpaths is Codex's default_read_only_subpaths_for_writable_root.
func readOnlySubpaths(h Host, root string, isCwd bool) []string {
	var out []string
	dotGit := filepath.Join(root, ".git")
	if m, err := h.Stat(dotGit); err == nil {
		if m.IsRegular() {
			if gitdir := gitdirFromFile(h, dotGit); gitdir != "" {
				out = append(out, gitdir)
			}
		}
		if m.IsDir() || m.IsRegular() {
			out = append(out, dotGit)
		}
	}
	if isDir(h, filepath.Join(root, ".agents")) {
		out = append(out, filepath.Join(root, ".agents"))
	}
	if dotCodex := filepath.Join(root, ".codex"); isCwd || isDir(h, dotCodex) {
		out = append(out, dotCodex)
	}
	return out
}

// gitdirFromFile resolves the "gitdir: PATH" of a worktree's or
// submodule's .git file, or returns "".
func gitdirFromFile(h Host, dotGit string) string {
	data, err := h.ReadFile(dotGit)
	if err != nil {
		return ""
	}
	_, raw, ok := strings.Cut(strings.TrimSpace(string(data)), ":")
	raw = strings.TrimSpace(raw)
	if !ok || raw == "" {
		return ""
	}
	if !filepath.IsAbs(raw) {
		raw = filepath.Join(filepath.Dir(dotGit), raw)
	}
	if _, err := h.Stat(raw); err != nil {
		return ""
	}
	return filepath.Clean(raw)
}

func isDir(h Host, p string) bool {
	m, err := h.Stat(p)
	return err == nil && m.IsDir()
}

func encodePolicy(p Policy) (string, error) {
	b, err := json.Marshal(p)
	return string(b), err
}

func decodePolicy(s string) (Policy, error) {
	var p Policy
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Policy{}, fmt.Errorf("bad policy: %w", err)
	}
	if dec.More() {
		return Policy{}, errors.New("bad policy: trailing data")
	}
	if len(p.WritableRoots) == 0 {
		p.WritableRoots = nil
	}
	return p, p.Validate()
}
