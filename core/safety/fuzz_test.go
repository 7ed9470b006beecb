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
