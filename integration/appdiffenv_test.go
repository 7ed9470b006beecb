//go:build linux

package integration

import (
	"path"
	"regexp"
	"strings"
)

// The rule of the environments sessions (README id
// [env-cwd-outside-roots]), appended to appRules.
func init() {
	appRules = append(appRules,
		// codexd refuses (-32600) a thread/start whose environment's cwd is
		// outside its non-empty runtime workspace roots; Codex 0.169 starts
		// the thread. The fix takes codexd's refusal for Codex's answer only
		// where Codex's own report of the thread shows that environment
		// outside its roots, and drops the thread/started Codex sent for
		// such a thread (which codexd, having started none, did not send).
		appRule{id: "env-cwd-outside-roots", fix: func(_ *appSession, it *appItem) {
			if isNotes(it) {
				if it.codexd == nil {
					it.codex = filterNotes(it.codex, func(m map[string]any) bool {
						return m["method"] != "thread/started" || outsideEnvironment(lookupOr(m, "params.thread.environments")) == ""
					})
				}
				return
			}
			if it.method != "thread/start" {
				return
			}
			eachAnswerPair(func(_ *appItem, a, b map[string]any) {
				code, msg, ok := answerError(b)
				m := outsideRootsMessage.FindStringSubmatch(msg)
				if !ok || code != "-32600" || m == nil {
					return
				}
				if id := outsideEnvironment(lookupOr(a, "result.thread.environments")); id != "" && id == m[1] {
					copyAnswer(a, b)
				}
			})(nil, it)
		}},
	)
}

var outsideRootsMessage = regexp.MustCompile("^invalid cwd for environment `([^`]*)`: path `[^`]*` is outside the environment's runtime workspace roots$")

// outsideEnvironment names the first of a thread's environments (as Codex
// reports them) whose cwd is outside its non-empty runtime workspace
// roots, comparing whole components of the cleaned POSIX paths; "" if
// none is.
func outsideEnvironment(envs any) string {
	for _, e := range asList(envs) {
		m, _ := e.(map[string]any)
		cwd, _ := m["cwd"].(string)
		roots := asList(m["runtimeWorkspaceRoots"])
		if len(roots) == 0 {
			continue
		}
		inside := false
		for _, r := range roots {
			root, _ := r.(string)
			c, rc := path.Clean(cwd), path.Clean(root)
			inside = inside || c == rc || rc == "/" || strings.HasPrefix(c, rc+"/")
		}
		if !inside {
			id, _ := m["environmentId"].(string)
			return id
		}
	}
	return ""
}
