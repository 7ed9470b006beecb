package appserver

import (
	"fmt"
	"path"
	"strings"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
)

// The paths of the environments thread/start and turn/start select: their
// syntax, checked and cleaned as Codex 0.169 does, and the cwd's place
// within the runtime workspace roots. Codex accepts any cwd; codexd
// refuses one outside non-empty roots (README rule
// [env-cwd-outside-roots]), after Codex's own checks and before anything
// is recorded. Empty roots bound nothing, and omitted roots are the cwd
// itself, as in Codex.

// maxEnvCwdBytes bounds an environment's cleaned cwd, as in Codex.
const maxEnvCwdBytes = 8 << 10

// environmentPaths checks the syntax of every environment's cwd and roots
// (Codex's first check, over all of them) and returns them cleaned, an
// omitted roots list being the cwd and a repeated root kept once.
func environmentPaths(ps []appproto.TurnEnvironmentParams) ([]agent.Environment, error) {
	envs := make([]agent.Environment, 0, len(ps))
	for _, p := range ps {
		if !envPathSyntax(p.Cwd) {
			return nil, invalidRequest(fmt.Sprintf("invalid cwd for environment `%s`: path `%s` does not use absolute POSIX or Windows path syntax", p.EnvironmentID, p.Cwd))
		}
		e := agent.Environment{ID: p.EnvironmentID, Cwd: cleanEnvPath(p.Cwd)}
		if p.RuntimeWorkspaceRoots == nil {
			e.RuntimeWorkspaceRoots = []string{e.Cwd}
		} else {
			e.RuntimeWorkspaceRoots = []string{}
			for _, r := range *p.RuntimeWorkspaceRoots {
				if !envPathSyntax(r) {
					return nil, invalidRequest(fmt.Sprintf("invalid runtime workspace root for environment `%s`: path `%s` does not use absolute POSIX or Windows path syntax", p.EnvironmentID, r))
				}
				if r = cleanEnvPath(r); !contains(e.RuntimeWorkspaceRoots, r) {
					e.RuntimeWorkspaceRoots = append(e.RuntimeWorkspaceRoots, r)
				}
			}
		}
		envs = append(envs, e)
	}
	return envs, nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// checkEnvironmentCwd refuses (-32600) a cwd outside the roots.
func checkEnvironmentCwd(e agent.Environment, given string) error {
	if len(e.RuntimeWorkspaceRoots) == 0 || insideRoots(e.Cwd, e.RuntimeWorkspaceRoots) {
		return nil
	}
	return invalidRequest(fmt.Sprintf("invalid cwd for environment `%s`: path `%s` is outside the environment's runtime workspace roots", e.ID, given))
}

// envPathSyntax: an absolute POSIX path (one leading slash: "//x" is not
// one), a drive path (C:\ or C:/) or a UNC path (\\server\share, either
// separator).
func envPathSyntax(p string) bool {
	switch {
	case driveAbs(p):
		return true
	case strings.HasPrefix(p, "//") || strings.HasPrefix(p, `\\`):
		server, rest, ok := strings.Cut(strings.ReplaceAll(p[2:], `\`, "/"), "/")
		share, _, _ := strings.Cut(rest, "/")
		return ok && server != "" && share != ""
	}
	return strings.HasPrefix(p, "/")
}

func driveAbs(p string) bool {
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') &&
		(p[0] >= 'a' && p[0] <= 'z' || p[0] >= 'A' && p[0] <= 'Z')
}

func isWindowsPath(p string) bool {
	return driveAbs(p) || strings.HasPrefix(p, "//") || strings.HasPrefix(p, `\\`)
}

// cleanEnvPath cleans a path of valid syntax as Codex reports it: "." and
// repeated separators dropped, ".." resolved (never above the top), a
// trailing separator kept; a Windows path with backslashes and its drive
// letter upper-case.
func cleanEnvPath(p string) string {
	if !isWindowsPath(p) {
		return cleanKeepingSlash(p)
	}
	s := strings.ReplaceAll(p, `\`, "/")
	var top string
	if driveAbs(s) {
		top, s = strings.ToUpper(s[:1])+":", s[2:]
	} else {
		server, rest, _ := strings.Cut(s[2:], "/")
		share, rest, _ := strings.Cut(rest, "/")
		top, s = "//"+server+"/"+share, "/"+rest
		if rest == "" && !strings.HasSuffix(p, "/") && !strings.HasSuffix(p, `\`) {
			s = ""
		}
	}
	if s != "" {
		s = cleanKeepingSlash(s)
	}
	return strings.ReplaceAll(top+s, "/", `\`)
}

// cleanKeepingSlash is path.Clean of an absolute path, with its trailing
// slash kept.
func cleanKeepingSlash(p string) string {
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

// posixRoots are the runtime workspace roots a thread/start answer lists
// (and workspace-write makes writable): the POSIX ones, fully cleaned.
func posixRoots(roots []string) []string {
	out := []string{}
	for _, r := range roots {
		if !isWindowsPath(r) {
			out = append(out, path.Clean(r))
		}
	}
	return out
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

// comparablePath is p cleaned, with forward slashes and no trailing one
// (but for a top), lower-cased if it is a Windows path (and whether it
// is).
func comparablePath(p string) (string, bool) {
	win := isWindowsPath(p)
	c := strings.ReplaceAll(cleanEnvPath(p), `\`, "/")
	if win {
		c = strings.ToLower(c)
	}
	if t := strings.TrimSuffix(c, "/"); t != "" && !strings.HasSuffix(t, ":") {
		c = t
	}
	return c, win
}
