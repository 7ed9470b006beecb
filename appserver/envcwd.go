package appserver

import (
	"fmt"
	"path"
	"strings"
)

// The cwd of an environment that thread/start or turn/start selects must
// lie within the runtime workspace roots it names. Codex 0.169 accepts any
// cwd; codexd refuses one outside non-empty roots (README rule
// [env-cwd-outside-roots]), before anything is recorded. Empty roots
// bound nothing, and omitted roots are the cwd itself, as in Codex.

// checkEnvironmentCwd refuses (-32600) a cwd outside the roots.
func checkEnvironmentCwd(id, cwd string, roots []string) error {
	if len(roots) == 0 || insideRoots(cwd, roots) {
		return nil
	}
	return invalidRequest(fmt.Sprintf("invalid cwd for environment `%s`: path `%s` is outside the environment's runtime workspace roots", id, cwd))
}

// insideRoots reports whether cwd is one of roots or below one, comparing
// whole components of the cleaned paths (so /a/bc is not inside /a/b, and
// /a/b/.. is not inside /a/b). A Windows path (drive or UNC) is compared
// with Windows paths only, either separator and any case; a POSIX path
// with POSIX paths.
func insideRoots(cwd string, roots []string) bool {
	c, win := comparablePath(cwd)
	for _, r := range roots {
		rc, rwin := comparablePath(r)
		if rwin != win {
			continue
		}
		prefix := rc
		if !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		if c == rc || strings.HasPrefix(c, prefix) {
			return true
		}
	}
	return false
}

// comparablePath is p cleaned, with forward slashes, lower-cased if it is
// a Windows path (and whether it is). A ".." above the top stays there.
func comparablePath(p string) (string, bool) {
	if !windowsAbs(p) {
		return path.Clean(p), false
	}
	p = strings.ToLower(strings.ReplaceAll(p, `\`, "/"))
	if strings.HasPrefix(p, "//") { // UNC: //server/share/...
		return "//" + strings.TrimPrefix(path.Clean("/"+strings.TrimLeft(p, "/")), "/"), true
	}
	// A drive: c:/... ; cleaned below the drive, which .. cannot leave.
	return p[:2] + path.Clean(p[2:]), true
}
