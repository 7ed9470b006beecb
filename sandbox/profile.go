package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Access is what a Rule grants under its path.
type Access string

// The accesses of Codex's filesystem permission entries.
const (
	AccessNone  Access = "none"
	AccessRead  Access = "read"
	AccessWrite Access = "write"
)

// Rule grants Access under an absolute path. Under Codex's rules the most
// specific rule containing a path decides, and among rules for the same
// path the most restrictive one.
type Rule struct {
	Path   string
	Access Access
	// SkipMissing: a path that does not exist is ignored (Codex's
	// missing_path_behavior "skip").
	SkipMissing bool
}

// Profile is a client's sandbox for one request (what Codex's app-server
// sends an exec-server with fs and process requests), its paths already
// resolved on the machine that serves the request.
type Profile struct {
	// Unconfined: the client asks for no sandbox (Codex's "disabled"), or
	// confines the server itself ("external").
	Unconfined bool
	// FullDisk: every path may be read and written ("unrestricted").
	FullDisk bool
	// Rules are a "restricted" file system's entries.
	Rules []Rule
	// Network allows network access ("enabled").
	Network bool
}

// Errors of Profile.Allows, in Codex's terms.
var (
	// ErrHidden: no rule grants the path; Codex's sandbox shows it as
	// missing.
	ErrHidden = errors.New("sandbox: path not visible in the sandbox")
	// ErrNoAccess: a rule denies any access to the path.
	ErrNoAccess = errors.New("sandbox: access to path denied")
	// ErrReadOnly: the path may be read but not written.
	ErrReadOnly = errors.New("sandbox: path is read-only")
)

// Allows checks an access to path (absolute and clean, symlinks resolved
// by the caller) against p: nil, or ErrHidden, ErrNoAccess or ErrReadOnly.
func (p Profile) Allows(path string, write bool) error {
	if p.Unconfined || p.FullDisk {
		return nil
	}
	best, found := Rule{}, false
	for _, r := range p.Rules {
		if !within(path, r.Path) || (r.SkipMissing && !pathExists(r.Path)) {
			continue
		}
		if !found || len(filepath.Clean(r.Path)) > len(filepath.Clean(best.Path)) ||
			(len(filepath.Clean(r.Path)) == len(filepath.Clean(best.Path)) && rank(r.Access) < rank(best.Access)) {
			best, found = r, true
		}
	}
	switch {
	case !found:
		return ErrHidden
	case best.Access == AccessNone:
		return ErrNoAccess
	case write && best.Access != AccessWrite:
		return ErrReadOnly
	}
	return nil
}

func rank(a Access) int {
	switch a {
	case AccessNone:
		return 0
	case AccessRead:
		return 1
	}
	return 2
}

func pathExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// Policy returns the Landlock policy that enforces p for a command, or an
// error saying why p cannot be enforced by this package: Landlock here
// grants reads everywhere, so a profile that hides or denies an existing
// path cannot be; nor can one that keeps an existing path read-only
// inside a writable root, except the .git, .agents and .codex that the
// package itself treats as a writable root's read-only subpaths (see
// [WritableRoot]). Paths that do not exist are no obstacle: there is
// nothing to protect yet.
func (p Profile) Policy() (Policy, error) {
	if p.Unconfined || (p.FullDisk && p.Network) {
		return Policy{Mode: DangerFullAccess}, nil
	}
	var writable, readOnly []string
	rootRead := p.FullDisk
	for _, r := range p.Rules {
		clean := filepath.Clean(r.Path)
		switch r.Access {
		case AccessWrite:
			if pathExists(clean) || !r.SkipMissing {
				writable = append(writable, clean)
			}
			rootRead = rootRead || clean == "/"
		case AccessRead:
			rootRead = rootRead || clean == "/"
			readOnly = append(readOnly, clean)
		case AccessNone:
			if pathExists(clean) {
				return Policy{}, fmt.Errorf("the sandbox denies access to %s, which Landlock cannot enforce here (commands may read everywhere)", clean)
			}
		default:
			return Policy{}, fmt.Errorf("unknown access %q for %s", r.Access, clean)
		}
	}
	if !rootRead {
		return Policy{}, errors.New("the sandbox limits what commands may read, which Landlock cannot enforce here (commands may read everywhere); it needs read access to /")
	}
	if p.FullDisk || slices.Contains(writable, "/") {
		writable = []string{"/"}
	}
	pol := Policy{Mode: ReadOnly, NetworkAccess: p.Network}
	if len(writable) > 0 {
		pol = Policy{Mode: WorkspaceWrite, Cwd: writable[0], WritableRoots: writable[1:], NetworkAccess: p.Network,
			ExcludeSlashTmp: true, ExcludeTmpdirEnvVar: true}
	}
	defaults := map[string]bool{}
	for _, w := range pol.ResolveWritableRoots(nil) {
		for _, s := range w.ReadOnlySubpaths {
			defaults[s] = true
		}
	}
	for _, ro := range readOnly {
		if defaults[ro] || ro == "/" {
			continue
		}
		for _, w := range writable {
			if within(ro, w) && pathExists(ro) {
				return Policy{}, fmt.Errorf("the sandbox keeps %s read-only inside the writable %s, which Landlock cannot enforce here", ro, w)
			}
		}
	}
	return pol, pol.Validate()
}
