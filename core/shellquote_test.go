package core

import "testing"

// TestShellQuoteAsCodex: a command line is shown as Codex 0.169 shows it
// (the shlex crate's join): bare when every byte may stand unquoted, else
// in single quotes, else in double quotes with \ " $ ` escaped, cut into
// chunks where no one way fits, as in `/bin/bash -lc "bash -c 'rm -f
// gone'"` (observed). codexd used '"'"' for a single quote, and left = ,
// % and ^ bare.
func TestShellQuoteAsCodex(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{""}, "''"},
		{[]string{"foobar"}, "foobar"},
		{[]string{"foo bar"}, "'foo bar'"},
		{[]string{`'"`}, `"'\""`},
		{[]string{"/bin/bash", "-lc", "bash -c 'rm -f gone'"}, `/bin/bash -lc "bash -c 'rm -f gone'"`},
		{[]string{"/bin/bash", "-lc", "rm -rf gone"}, `/bin/bash -lc 'rm -rf gone'`},
		{[]string{"env", "a=b", "x%y", "1,2"}, `env 'a=b' 'x%y' '1,2'`},
		{[]string{"echo '$HOME'"}, `"echo '"'$HOME'"'"`},
		{[]string{"^x"}, "'^x'"},
		{[]string{`a\b`}, `"a\\b"`},
		{[]string{"é"}, "'é'"},
		{[]string{"a]b+c@d:e"}, "a]b+c@d:e"},
		{[]string{"it's $5"}, `"it's "'$5'`},
	} {
		if got := shellQuote(c.argv); got != c.want {
			t.Errorf("%q: %s, want %s", c.argv, got, c.want)
		}
	}
}
