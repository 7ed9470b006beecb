// Package safety decides, before a command runs, whether it is known to be
// safe, possibly dangerous, or in need of the user's approval, with the
// meanings Codex gives its approval policies.
//
// It reads commands; it never runs them and never touches the filesystem.
package safety

import (
	"path/filepath"
	"strings"
)

// Words splits a shell script into the plain commands it runs, as Codex's
// parse_shell_lc_plain_commands does: the script may only hold bare words,
// single- or double-quoted strings without expansions, joined by "&&",
// "||", ";" and "|". Anything else (redirections, substitutions, variables,
// globs, subshells, heredocs) makes it not plain, and ok is false.
func Words(script string) (cmds [][]string, ok bool) {
	var cur []string
	var word strings.Builder
	inWord := false
	flushWord := func() {
		if inWord {
			cur = append(cur, word.String())
			word.Reset()
			inWord = false
		}
	}
	flushCmd := func() bool {
		flushWord()
		if len(cur) == 0 || isAssignment(cur[0]) {
			return false
		}
		cmds = append(cmds, cur)
		cur = nil
		return true
	}
	s := script
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			flushWord()
		case c == '\n':
			flushWord()
			if len(cur) > 0 && !flushCmd() {
				return nil, false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			word.WriteString(s[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				switch s[j] {
				case '$', '`', '\\':
					return nil, false
				}
			}
			if j >= len(s) {
				return nil, false
			}
			word.WriteString(s[i+1 : j])
			inWord = true
			i = j
		case c == '&' && i+1 < len(s) && s[i+1] == '&',
			c == '|' && i+1 < len(s) && s[i+1] == '|':
			if !flushCmd() {
				return nil, false
			}
			i++
		case c == ';' || c == '|':
			if !flushCmd() {
				return nil, false
			}
		case isPlainChar(c):
			word.WriteByte(c)
			inWord = true
		default:
			return nil, false
		}
	}
	flushWord()
	if len(cur) > 0 {
		if isAssignment(cur[0]) {
			return nil, false
		}
		cmds = append(cmds, cur)
	} else if len(cmds) > 0 {
		// A trailing operator ("ls &&") is a syntax error.
		t := strings.TrimRight(script, " \t\n")
		if strings.HasSuffix(t, "&&") || strings.HasSuffix(t, "||") || strings.HasSuffix(t, "|") {
			return nil, false
		}
	}
	return cmds, len(cmds) > 0
}

// isAssignment reports whether a command's first word assigns a variable
// (NAME=value): the shell then runs the rest with it set, which is not a
// plain command.
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func isPlainChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	switch c {
	case '-', '_', '.', '/', ',', ':', '=', '+', '@', '%', '^':
		return true
	}
	return c >= 0x80
}

// ShellScript returns the script of a `bash -lc SCRIPT` (or sh/zsh, -c or
// -lc) command line.
func ShellScript(argv []string) (string, bool) {
	if len(argv) != 3 {
		return "", false
	}
	switch filepath.Base(argv[0]) {
	case "bash", "sh", "zsh":
	default:
		return "", false
	}
	if argv[1] != "-c" && argv[1] != "-lc" {
		return "", false
	}
	return argv[2], true
}

// Commands returns the plain commands argv runs: the commands of a plain
// shell script, or argv itself. complex is true when argv is a shell
// script that is not plain; the whole argv is then the only command.
func Commands(argv []string) (cmds [][]string, complex bool) {
	if script, ok := ShellScript(argv); ok {
		if cmds, ok := Words(script); ok {
			return cmds, false
		}
		return [][]string{argv}, true
	}
	return [][]string{argv}, false
}
