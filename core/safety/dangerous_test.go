package safety

import "testing"

// TestDangerousAsCodex: which commands Codex 0.169 puts to the user under
// on-request even in the sandbox (and refuses under never), observed one
// by one: rm with a force flag (-f in any short cluster, --force) before
// "--", behind sudo, env (its options and assignments) or a nested shell,
// also in a script that is not plain. A recursive rm, sudo of anything
// else, sudo with options, and other wrappers (nice, timeout, command,
// exec, xargs, time) are not. codexd used to ask for rm -r, rm
// --recursive and every sudo, and missed the wrapped and not-plain cases.
func TestDangerousAsCodex(t *testing.T) {
	sh := func(s string) []string { return []string{"/bin/bash", "-lc", s} }
	for _, c := range []struct {
		script    string
		dangerous bool
	}{
		{"rm -rf gone", true},
		{"rm -f gone", true},
		{"rm --force gone", true},
		{"rm -fr gone", true},
		{"rm -Rf gone", true},
		{"rm -r -f gone", true},
		{"/bin/rm -f gone", true},
		{"rm -rfv gone", true},
		{"rm -i -f gone", true},
		{"sudo rm -rf gone", true},
		{"env rm -f gone", true},
		{"env FOO=1 rm -f gone", true},
		{"env -i rm -f gone", true},
		{"bash -c 'rm -f gone'", true},
		{"ls && rm -rf gone", true},
		{"rm -f gone > out", true},
		{"rm -f $X", true},
		{"echo hi; rm -f gone 2>/dev/null", true},
		{"rm -r gone", false},
		{"rm gone", false},
		{"rm --recursive gone", false},
		{"rm -- -f", false},
		{"sudo ls", false},
		{"sudo", false},
		{"sudo -u root rm -f gone", false},
		{"git reset --hard", false},
		{"git clean -fdx", false},
		{"find . -delete", false},
		{"nice rm -f gone", false},
		{"xargs rm -f", false},
		{"command rm -f gone", false},
		{"exec rm -f gone", false},
		{"time rm -f gone", false},
		{"timeout 5 rm -f gone", false},
		{"echo 'rm -f gone' > notes", false},
	} {
		r := Assess(Request{Argv: sh(c.script), Policy: OnRequest})
		if got := r.Decision == Prompt; got != c.dangerous {
			t.Errorf("%q: asks %v, want %v", c.script, got, c.dangerous)
		}
		if got := Assess(Request{Argv: sh(c.script), Policy: Never}).Decision == Forbidden; got != c.dangerous {
			t.Errorf("%q under never: refused %v, want %v", c.script, got, c.dangerous)
		}
	}
}
