package safety

import (
	"path/filepath"
	"strings"
)

// IsKnownSafe reports whether argv only reads, by Codex's list
// (is_known_safe_command): a known read-only command, or a plain shell
// script made only of such commands.
func IsKnownSafe(argv []string) bool {
	if isSafeExec(argv) {
		return true
	}
	if script, ok := ShellScript(argv); ok {
		cmds, ok := Words(script)
		if !ok {
			return false
		}
		for _, c := range cmds {
			if !isSafeExec(c) {
				return false
			}
		}
		return true
	}
	return false
}

var safeNames = map[string]bool{
	"cat": true, "cd": true, "cut": true, "echo": true, "expr": true, "false": true,
	"grep": true, "head": true, "id": true, "ls": true, "nl": true, "paste": true,
	"pwd": true, "rev": true, "seq": true, "stat": true, "tail": true, "tr": true,
	"true": true, "uname": true, "uniq": true, "wc": true, "which": true, "whoami": true,
	"numfmt": true, "tac": true,
}

func isSafeExec(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	name := filepath.Base(argv[0])
	if safeNames[name] {
		return true
	}
	args := argv[1:]
	switch name {
	case "base64":
		for _, a := range args {
			if a == "-o" || a == "--output" || strings.HasPrefix(a, "--output=") || (strings.HasPrefix(a, "-o") && a != "-o") {
				return false
			}
		}
		return true
	case "find":
		for _, a := range args {
			switch a {
			case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0", "-fprintf":
				return false
			}
		}
		return true
	case "rg":
		for _, a := range args {
			if a == "--search-zip" || a == "-z" || a == "--pre" || a == "--hostname-bin" ||
				strings.HasPrefix(a, "--pre=") || strings.HasPrefix(a, "--hostname-bin=") {
				return false
			}
		}
		return true
	case "git":
		return isSafeGit(args)
	case "sed":
		return len(argv) <= 4 && len(args) >= 2 && args[0] == "-n" && isSedPrint(args[1])
	}
	return false
}

func isSafeGit(args []string) bool {
	for _, a := range args {
		if a == "-c" || a == "--config-env" || (strings.HasPrefix(a, "-c") && len(a) > 2) || strings.HasPrefix(a, "--config-env=") {
			return false
		}
	}
	i := gitSubcommand(args)
	if i < 0 {
		return false
	}
	sub, rest := args[i], args[i+1:]
	for _, a := range rest {
		switch a {
		case "--output", "--ext-diff", "--textconv", "--exec", "--paginate":
			return false
		}
		if strings.HasPrefix(a, "--output=") || strings.HasPrefix(a, "--exec=") {
			return false
		}
	}
	switch sub {
	case "status", "log", "diff", "show":
		return true
	case "branch":
		if len(rest) == 0 {
			return true
		}
		for _, a := range rest {
			switch a {
			case "--list", "-l", "--show-current", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose":
			default:
				if !strings.HasPrefix(a, "--format=") {
					return false
				}
			}
		}
		return true
	}
	return false
}

// gitSubcommand finds git's subcommand, skipping global options (and the
// values of those that take one).
func gitSubcommand(args []string) int {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch a {
		case "-C", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--super-prefix":
			i++
			continue
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		return i
	}
	return -1
}

func isSedPrint(arg string) bool {
	core, ok := strings.CutSuffix(arg, "p")
	if !ok {
		return false
	}
	parts := strings.Split(core, ",")
	if len(parts) > 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}

// MightBeDangerous reports commands Codex never runs without asking
// (command_might_be_dangerous).
func MightBeDangerous(argv []string) bool {
	cmds, _ := Commands(argv)
	for _, c := range cmds {
		if isDangerous(c) {
			return true
		}
	}
	return false
}

// isDangerous reports a command Codex 0.169 puts to the user even in the
// sandbox (observed one by one): rm with a force flag, also behind sudo,
// env, or a nested shell's script (plain or not). A recursive rm is not,
// nor sudo of anything else.
func isDangerous(argv []string) bool {
	for depth := 0; len(argv) > 0 && depth < 8; depth++ {
		if script, ok := ShellScript(argv); ok {
			cmds, plain := Words(script)
			if !plain {
				cmds = looseCommands(script)
			}
			for _, c := range cmds {
				if isDangerous(c) {
					return true
				}
			}
			return false
		}
		switch filepath.Base(argv[0]) {
		case "rm":
			return rmForces(argv[1:])
		case "sudo":
			argv = argv[1:]
		case "env":
			argv = argv[1:]
			for len(argv) > 0 && (strings.HasPrefix(argv[0], "-") || strings.Contains(argv[0], "=")) {
				argv = argv[1:]
			}
		default:
			return false
		}
	}
	return false
}

// rmForces reports an rm whose options (before "--") force the removal.
func rmForces(args []string) bool {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--force" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a[1:], "f") {
			return true
		}
	}
	return false
}

// looseCommands splits a script that is not plain into the words of each
// command, leniently: quotes are honoured, redirections (and their
// targets) dropped, and anything else (expansions, globs) kept as written.
// It is only for spotting a dangerous command inside, as Codex does.
func looseCommands(script string) [][]string {
	var cmds [][]string
	var cur []string
	var word strings.Builder
	inWord, quoted, skipNext := false, false, false
	flushWord := func() {
		if !inWord {
			return
		}
		w, q := word.String(), quoted
		word.Reset()
		inWord, quoted = false, false
		switch {
		case skipNext:
			skipNext = false
		case !q && isRedirection(w):
			// "> out" takes the next word; ">out" and "2>&1" do not.
			skipNext = strings.TrimRight(w, "0123456789&<>|") == "" && !strings.HasSuffix(w, "&1") && !strings.HasSuffix(w, "&2")
		default:
			cur = append(cur, w)
		}
	}
	flushCmd := func() {
		flushWord()
		skipNext = false
		if len(cur) > 0 {
			cmds = append(cmds, cur)
		}
		cur = nil
	}
	for i := 0; i < len(script); i++ {
		c := script[i]
		switch c {
		case ' ', '\t':
			flushWord()
		case '\n', ';', '&', '|', '(', ')', '{', '}':
			if c == '&' && inWord && strings.HasSuffix(word.String(), ">") {
				word.WriteByte(c) // >&2
				continue
			}
			flushCmd()
		case '\'', '"':
			j := strings.IndexByte(script[i+1:], c)
			if j < 0 {
				j = len(script) - i - 1
			}
			word.WriteString(script[i+1 : i+1+j])
			inWord, quoted = true, true
			i += j + 1
		case '\\':
			if i+1 < len(script) {
				i++
				word.WriteByte(script[i])
				inWord, quoted = true, true
			}
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	flushCmd()
	return cmds
}

// isRedirection reports a word that redirects (>, >>, <, 2>, &>, >out...).
func isRedirection(w string) bool {
	w = strings.TrimLeft(w, "0123456789")
	return strings.HasPrefix(w, ">") || strings.HasPrefix(w, "<") || strings.HasPrefix(w, "&>")
}
