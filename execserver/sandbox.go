package execserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/codexd/codexd/execproto"
	"github.com/codexd/codexd/execserver/fsops"
	"github.com/codexd/codexd/jsonrpc"
	"github.com/codexd/codexd/sandbox"
)

// A client's sandbox member (Codex's app-server sends one with each fs and
// process request of a sandboxed turn) is enforced or the request refused:
// never ignored, or a client that relies on it would get unconfined file
// access. fs requests are checked path by path against the permissions, as
// Codex's sandboxed file helper would find them; a process runs under
// package sandbox's Landlock helper, or is refused where that cannot
// express the permissions.

// requestSandbox decodes and resolves a sandbox member; nil when it is
// absent or null.
func requestSandbox(raw json.RawMessage) (*sandbox.Profile, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	ctx, err := execproto.DecodeSandboxContext(raw)
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, err.Error())
	}
	prof, err := resolveProfile(ctx)
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "cannot enforce the requested sandbox: "+err.Error())
	}
	return prof, nil
}

// resolveProfile turns the wire permissions into paths of this machine.
func resolveProfile(ctx *execproto.SandboxContext) (*sandbox.Profile, error) {
	perms := ctx.Permissions
	switch perms.Type {
	case execproto.PermissionsDisabled, execproto.PermissionsExternal:
		return &sandbox.Profile{Unconfined: true}, nil
	}
	prof := &sandbox.Profile{Network: perms.Network == "enabled"}
	if perms.FileSystem.Type == "unrestricted" {
		prof.FullDisk = true
		return prof, nil
	}
	cwd := ""
	if ctx.Cwd != "" {
		p, err := fsops.ParsePathURI(ctx.Cwd)
		if err != nil {
			return nil, fmt.Errorf("cwd: %v", err)
		}
		cwd = p
	} else if wd, err := os.Getwd(); err == nil {
		cwd = wd // Codex's executor falls back to its own cwd
	}
	var roots []string
	for _, u := range ctx.WorkspaceRoots {
		p, err := fsops.ParsePathURI(u)
		if err != nil {
			return nil, fmt.Errorf("workspace root: %v", err)
		}
		roots = append(roots, p)
	}
	if len(roots) == 0 && cwd != "" {
		roots = []string{cwd}
	}
	for _, e := range perms.FileSystem.Entries {
		var paths []string
		switch {
		case e.Path.Type == "path":
			p, err := fsops.ParsePathURI(e.Path.URI)
			if err != nil {
				return nil, fmt.Errorf("entry path: %v", err)
			}
			paths = []string{p}
		case e.Path.Kind == "root":
			paths = []string{"/"}
		case e.Path.Kind == "current_working_directory":
			paths = []string{cwd}
		case e.Path.Kind == "project_roots":
			paths = roots
		case e.Path.Kind == "slash_tmp":
			if fi, err := os.Stat("/tmp"); err == nil && fi.IsDir() {
				paths = []string{"/tmp"}
			}
		case e.Path.Kind == "tmpdir":
			if t := os.Getenv("TMPDIR"); filepath.IsAbs(t) {
				paths = []string{t}
			}
		case e.Path.Kind == "minimal" && e.Access != "none":
			// The platform's minimal read set: granting less than asked
			// is never an escape, and a profile without read access to
			// / is refused for commands anyway.
		default:
			return nil, fmt.Errorf("codexd does not know what the special path %q stands for", e.Path.Kind)
		}
		for _, p := range paths {
			if p == "" || !filepath.IsAbs(p) {
				return nil, fmt.Errorf("the %s entry has no absolute path here", e.Path.Kind)
			}
			if e.Path.Subpath != "" {
				sub := filepath.Clean(e.Path.Subpath)
				if filepath.IsAbs(sub) || sub == ".." || strings.HasPrefix(sub, "../") {
					return nil, fmt.Errorf("subpath %q leaves its root", e.Path.Subpath)
				}
				p = filepath.Join(p, sub)
			}
			prof.Rules = append(prof.Rules, sandbox.Rule{Path: filepath.Clean(p), Access: sandbox.Access(e.Access),
				SkipMissing: e.MissingPathBehavior == "skip"})
		}
	}
	return prof, nil
}

// checkFSSandbox checks the paths a fs request touches against its
// sandbox, with the errors Codex's sandboxed file access gives.
func checkFSSandbox(raw json.RawMessage, accesses ...fsAccess) error {
	prof, err := requestSandbox(raw)
	if err != nil || prof == nil {
		return err
	}
	for _, a := range accesses {
		p, err := fsops.ParsePathURI(a.uri)
		if err != nil {
			return nil // the method reports a bad path itself
		}
		real := resolveExisting(p)
		if a.onlyIfExists {
			if _, err := os.Lstat(p); err != nil {
				continue
			}
		}
		for _, q := range []string{filepath.Clean(p), real} {
			switch err := prof.Allows(q, a.write); {
			case errors.Is(err, sandbox.ErrReadOnly):
				return &fsops.Error{Code: fsops.CodeInternalError, Message: "Read-only file system (os error 30)"}
			case errors.Is(err, sandbox.ErrNoAccess):
				return &fsops.Error{Code: fsops.CodeInvalidRequest, Message: "Permission denied (os error 13)"}
			case errors.Is(err, sandbox.ErrHidden):
				return &fsops.Error{Code: fsops.CodeNotFound, Message: "No such file or directory (os error 2)"}
			}
		}
	}
	return nil
}

// fsAccess is one path a request reads or writes.
type fsAccess struct {
	uri          string
	write        bool
	onlyIfExists bool // a removal of nothing writes nothing
}

// fsSandboxAccesses returns the sandbox member of a fs request and what it
// touches; ok is false for a request without one.
func fsSandboxAccesses(p any) (raw json.RawMessage, acc []fsAccess, ok bool) {
	switch p := p.(type) {
	case execproto.FsReadFileParams:
		return p.Sandbox, []fsAccess{{uri: p.Path}}, true
	case execproto.FsWriteFileParams:
		return p.Sandbox, []fsAccess{{uri: p.Path, write: true}}, true
	case execproto.FsCreateDirectoryParams:
		return p.Sandbox, []fsAccess{{uri: p.Path, write: true}}, true
	case execproto.FsGetMetadataParams:
		return p.Sandbox, []fsAccess{{uri: p.Path}}, true
	case execproto.FsReadDirectoryParams:
		return p.Sandbox, []fsAccess{{uri: p.Path}}, true
	case execproto.FsRemoveParams:
		return p.Sandbox, []fsAccess{{uri: p.Path, write: true, onlyIfExists: true}}, true
	case execproto.FsCopyParams:
		return p.Sandbox, []fsAccess{{uri: p.SourcePath}, {uri: p.DestinationPath, write: true}}, true
	case execproto.FsCanonicalizeParams:
		return p.Sandbox, []fsAccess{{uri: p.Path}}, true
	case execproto.FsWalkParams:
		return p.Sandbox, []fsAccess{{uri: p.Path}}, true
	case execproto.FsOpenParams:
		return p.Sandbox, []fsAccess{{uri: p.Path, write: p.Mode == execproto.FsOpenReplace}}, true
	}
	return nil, nil, false
}

// resolveExisting resolves the symlinks of path's longest existing prefix.
func resolveExisting(path string) string {
	path = filepath.Clean(path)
	rest := ""
	for {
		if real, err := filepath.EvalSymlinks(path); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(path)
		if parent == path {
			return filepath.Join(path, rest)
		}
		rest = filepath.Join(filepath.Base(path), rest)
		path = parent
	}
}

// confineProcess returns argv to run under the sandbox of a process/start,
// and whether a sandbox was asked for (Codex then reports linuxSeccomp,
// even for a disabled one); an unenforceable sandbox is an error.
func confineProcess(raw json.RawMessage, argv []string) ([]string, bool, error) {
	prof, err := requestSandbox(raw)
	if err != nil || prof == nil {
		return argv, false, err
	}
	pol, err := prof.Policy()
	if err != nil {
		return nil, false, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "cannot enforce the requested sandbox: "+err.Error())
	}
	if !pol.Mode.Confined() {
		return argv, true, nil
	}
	if err := sandboxCheck(pol.Mode); err != nil {
		return nil, false, jsonrpc.NewError(jsonrpc.CodeInternalError, err.Error())
	}
	self, err := os.Executable()
	if err != nil {
		return nil, false, jsonrpc.NewError(jsonrpc.CodeInternalError, "finding the sandbox helper: "+err.Error())
	}
	wrapped, err := sandbox.Wrap(pol, argv, self)
	if err != nil {
		return nil, false, jsonrpc.NewError(jsonrpc.CodeInternalError, err.Error())
	}
	return wrapped, true, nil
}

// sandboxCheck says whether this kernel can enforce a mode; tests replace
// it.
var sandboxCheck = sandbox.Check
