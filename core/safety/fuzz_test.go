package safety

import (
	"strings"
	"testing"
)

// FuzzWords checks the plain-command parser: it never panics, a plain
// script gives non-empty commands, and quoting those words back gives the
// same commands.
func FuzzWords(f *testing.F) {
	for _, s := range []string{"ls -la", "a && b || c; d | e", `echo "x y" 'z'`, "echo $(id)", "ls > out", "", "&&", "a\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		cmds, ok := Words(script)
		if !ok {
			return
		}
		var parts []string
		for _, c := range cmds {
			if len(c) == 0 {
				t.Fatalf("empty command in %q", script)
			}
			var ws []string
			for _, w := range c {
				if strings.Contains(w, "'") {
					return
				}
				ws = append(ws, "'"+w+"'")
			}
			parts = append(parts, strings.Join(ws, " "))
		}
		again, ok := Words(strings.Join(parts, " && "))
		if !ok || len(again) != len(cmds) {
			t.Fatalf("round trip of %q: %q", script, again)
		}
		for i := range cmds {
			if strings.Join(cmds[i], "\x00") != strings.Join(again[i], "\x00") {
				t.Fatalf("round trip of %q: %q vs %q", script, cmds[i], again[i])
			}
		}
	})
}

// FuzzLooseCommands checks the lenient parser that looks for a dangerous
// command in a script that is not plain: it never panics, gives no empty
// command, and reads a plain script without backslashes as Words does.
func FuzzLooseCommands(f *testing.F) {
	for _, s := range []string{"rm -f x > out", "echo hi; rm -f $X 2>/dev/null", "a >&2 b", "(cd x && rm -rf y)", "echo 'rm -f' > n", "'", "\"a", "x\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		cmds := looseCommands(script)
		for _, c := range cmds {
			if len(c) == 0 {
				t.Fatalf("empty command in %q", script)
			}
		}
		if strings.Contains(script, "\\") {
			return
		}
		plain, ok := Words(script)
		if !ok {
			return
		}
		if len(plain) != len(cmds) {
			t.Fatalf("%q: loose %q, plain %q", script, cmds, plain)
		}
		for i := range plain {
			if strings.Join(plain[i], "\x00") != strings.Join(cmds[i], "\x00") {
				t.Fatalf("%q: loose %q, plain %q", script, cmds, plain)
			}
		}
	})
}
