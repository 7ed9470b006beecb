// Package execenv builds the environment of the commands an agent runs,
// from this process's environment and config.toml's
// [shell_environment_policy], in Codex 0.169's order:
//
//  1. start from the inherited variables: all of them, the core set
//     (HOME, LOGNAME, PATH, SHELL, USER, TMPDIR, TEMP, TMP, LANG, LC_ALL,
//     LC_CTYPE; names matched ignoring case), or none;
//  2. unless IgnoreDefaultExcludes, drop names matching *KEY*, *SECRET* or
//     *TOKEN*;
//  3. drop names matching Exclude;
//  4. set the Set pairs;
//  5. when IncludeOnly is not empty, keep only names matching it.
//
// Patterns are globs with * and ?, matched against the whole name ignoring
// case, as Codex's wildmatch patterns. After these rules, Build removes the
// names it is told are secrets (the model providers' credentials) whatever
// the policy says, and the launch-context variables Codex never passes on.
//
// The package must never read or change the process environment itself
// (the caller passes it in), nor know about configs, providers or turns.
package execenv

import (
	"fmt"
	"strings"
)

// Inherit is the starting set of variables (shell_environment_policy.inherit).
type Inherit string

const (
	InheritAll  Inherit = "all"
	InheritCore Inherit = "core"
	InheritNone Inherit = "none"
)

// Policy is [shell_environment_policy]. The zero value inherits everything
// and applies the default excludes.
type Policy struct {
	Inherit Inherit // "" is InheritAll
	// IgnoreDefaultExcludes keeps names with KEY, SECRET or TOKEN in them.
	IgnoreDefaultExcludes bool
	Exclude               []string
	Set                   map[string]string
	IncludeOnly           []string
}

// CoreVars are the names inherit = "core" keeps (Codex 0.169's list for
// Unix).
var CoreVars = []string{"PATH", "SHELL", "TMPDIR", "TEMP", "TMP", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "LOGNAME", "USER"}

// DefaultExcludes are the patterns step 2 drops.
var DefaultExcludes = []string{"*KEY*", "*SECRET*", "*TOKEN*"}

// NonInheritable are launch-context variables of Codex's that no command
// gets, whatever the policy says (Codex 0.169's list).
var NonInheritable = []string{
	"CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN", "NODE_REPL_AUTH_TOKEN", "OPENAI_FEDERATION_RULE_ID",
	"OPENAI_IDENTITY_TOKEN_FILE", "OPENAI_WORKLOAD_IDENTITY_CONTEXT",
}

// Validate reports an Inherit value Codex does not know.
func (p Policy) Validate() error {
	switch p.Inherit {
	case "", InheritAll, InheritCore, InheritNone:
		return nil
	}
	return fmt.Errorf("unknown inherit %q, expected one of \"all\", \"core\", \"none\"", p.Inherit)
}

// Build returns the environment p derives from environ (os.Environ's
// "NAME=value" form; an entry without "=" is skipped, and of a repeated
// name the last wins), with every name in secrets removed last, ignoring
// case, even one the policy sets or includes.
func Build(environ []string, p Policy, secrets []string) map[string]string {
	env := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		switch p.Inherit {
		case InheritNone:
			continue
		case InheritCore:
			if !containsFold(CoreVars, k) {
				continue
			}
		}
		env[k] = v
	}
	if !p.IgnoreDefaultExcludes {
		drop(env, DefaultExcludes)
	}
	drop(env, p.Exclude)
	for k, v := range p.Set {
		env[k] = v
	}
	if len(p.IncludeOnly) > 0 {
		for k := range env {
			if !matchesAny(p.IncludeOnly, k) {
				delete(env, k)
			}
		}
	}
	for k := range env {
		if containsFold(NonInheritable, k) || containsFold(secrets, k) {
			delete(env, k)
		}
	}
	return env
}

func drop(env map[string]string, patterns []string) {
	if len(patterns) == 0 {
		return
	}
	for k := range env {
		if matchesAny(patterns, k) {
			delete(env, k)
		}
	}
}

func matchesAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if Match(p, name) {
			return true
		}
	}
	return false
}

func containsFold(list []string, name string) bool {
	for _, s := range list {
		if strings.EqualFold(s, name) {
			return true
		}
	}
	return false
}

// Match reports whether name matches the glob pattern as a whole,
// ignoring case: * matches any run of characters (none included), ? any
// one character, everything else itself.
func Match(pattern, name string) bool {
	p, n := []rune(strings.ToLower(pattern)), []rune(strings.ToLower(name))
	// Iterative glob with one backtrack point: linear in practice and
	// never exponential, whatever the pattern.
	pi, ni := 0, 0
	star, mark := -1, 0
	for ni < len(n) {
		switch {
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, ni
			pi++
		case pi < len(p) && (p[pi] == '?' || p[pi] == n[ni]):
			pi++
			ni++
		case star >= 0:
			pi = star + 1
			mark++
			ni = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
