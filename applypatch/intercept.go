package applypatch

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
)

// ErrImplicitInvocation is a bare patch given as a command (or as a shell
// script) without apply_patch in front of it. Codex refuses it with this
// text rather than guessing.
var ErrImplicitInvocation = errors.New(`patch detected without explicit call to apply_patch. Rerun as ["apply_patch", "<patch>"]`)

// isApplyPatchCommand reports whether name is one a patch command may have.
func isApplyPatchCommand(name string) bool {
	return name == "apply_patch" || name == "applypatch"
}

// Invocation is a command that is really a patch.
type Invocation struct {
	Patch *Patch
	// Workdir is the argument of a leading `cd DIR &&`, as written, or "".
	Workdir string
}

// Cwd returns the directory the patch's relative paths resolve against: the
// command's cwd, changed by Workdir if there is one.
func (inv *Invocation) Cwd(cwd string) string {
	if inv.Workdir == "" {
		return filepath.Clean(cwd)
	}
	return ResolvePath(cwd, inv.Workdir)
}

// Intercept recognises a command that applies a patch, as Codex's
// maybe_parse_apply_patch_verified does, so that the caller turns it into a
// file change (with its approval and diff) instead of running it:
//
//   - ["apply_patch", PATCH] or ["applypatch", PATCH];
//   - [SHELL, FLAG, SCRIPT] with SHELL bash, zsh or sh and FLAG -c or -lc
//     (also pwsh/powershell [-NoProfile] -Command and cmd /c), where the
//     script is exactly `apply_patch <<'EOF'` (or applypatch, any
//     delimiter, quoted or not), the patch, and the delimiter line,
//     optionally preceded by `cd DIR && ` with one plain, 'single-quoted'
//     or "double-quoted" argument. Anything else in the script (another
//     command before or after, `;`, `||`, a pipe, an argument to
//     apply_patch) makes it an ordinary command.
//
// It returns (nil, nil) for an ordinary command; the invocation for a
// patch; or an error for a command that is a patch but a wrong one: a
// *[ParseError], or [ErrImplicitInvocation] for a bare patch without
// apply_patch. Codex answers the model "apply_patch verification failed: "
// followed by the error's text.
func Intercept(argv []string) (*Invocation, error) {
	if len(argv) == 1 {
		if _, err := Parse(argv[0]); err == nil {
			return nil, ErrImplicitInvocation
		}
	}
	script, isShell := shellScript(argv)
	if isShell {
		if _, err := Parse(script); err == nil {
			return nil, ErrImplicitInvocation
		}
	}
	if len(argv) == 2 && isApplyPatchCommand(argv[0]) {
		p, err := Parse(argv[1])
		if err != nil {
			return nil, err
		}
		return &Invocation{Patch: p}, nil
	}
	if !isShell {
		return nil, nil
	}
	body, workdir, ok := extractHeredoc(script)
	if !ok {
		return nil, nil
	}
	p, err := Parse(body)
	if err != nil {
		return nil, err
	}
	return &Invocation{Patch: p, Workdir: workdir}, nil
}

// InterceptCommand is [Intercept] for a command string that will run as
// `bash -lc CMD` (the exec_command tool's form).
func InterceptCommand(cmd string) (*Invocation, error) {
	return Intercept([]string{"bash", "-lc", cmd})
}

// Verify intercepts argv and, if it is a patch, computes its plan against
// the files under cwd: (nil, nil) for an ordinary command, a plan, or the
// error to report to the model.
func Verify(ctx context.Context, fsys FS, cwd string, argv []string) (*Plan, error) {
	inv, err := Intercept(argv)
	if inv == nil || err != nil {
		return nil, err
	}
	return Compute(ctx, fsys, inv.Cwd(cwd), inv.Patch)
}

// shellScript returns the script of a shell invocation Codex recognises.
func shellScript(argv []string) (string, bool) {
	switch {
	case len(argv) == 3 && isShellFlag(argv[0], argv[1]):
		return argv[2], true
	case len(argv) == 4 && isPowerShell(argv[0]) && strings.EqualFold(argv[1], "-noprofile") && isShellFlag(argv[0], argv[2]):
		return argv[3], true
	}
	return "", false
}

func isShellFlag(shell, flag string) bool {
	switch fileStem(shell) {
	case "bash", "zsh", "sh":
		return flag == "-lc" || flag == "-c"
	case "pwsh", "powershell":
		return strings.EqualFold(flag, "-command")
	case "cmd":
		return strings.EqualFold(flag, "/c")
	}
	return false
}

func isPowerShell(shell string) bool {
	s := fileStem(shell)
	return s == "pwsh" || s == "powershell"
}

// fileStem is Rust's Path::file_stem, lowercased: the last element without
// its last extension ("/bin/bash" and "bash.exe" are "bash").
func fileStem(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		p = p[i+1:]
	}
	if i := strings.LastIndexByte(p, '.'); i > 0 {
		p = p[:i]
	}
	return strings.ToLower(p)
}

// extractHeredoc matches the two whole-script forms Codex's tree-sitter
// query accepts, `apply_patch <<DELIM` and `cd DIR && apply_patch <<DELIM`,
// each followed by the heredoc and nothing else, and returns the heredoc's
// text (trailing newlines dropped) and DIR.
func extractHeredoc(src string) (body, workdir string, ok bool) {
	s := &scanner{s: src}
	s.skip(" \t\r\n")
	word := s.word()
	if word == "cd" {
		if !s.blank() {
			return "", "", false
		}
		dir, ok := s.cdArg()
		if !ok {
			return "", "", false
		}
		s.skip(" \t")
		if !s.literal("&&") {
			return "", "", false
		}
		s.skip(" \t\r\n")
		workdir = dir
		word = s.word()
	}
	if !isApplyPatchCommand(word) {
		return "", "", false
	}
	s.skip(" \t")
	if !s.literal("<<") {
		return "", "", false
	}
	stripTabs := s.literal("-")
	s.skip(" \t")
	delim, ok := s.delimiter()
	if !ok {
		return "", "", false
	}
	s.skip(" \t\r")
	if !s.literal("\n") {
		return "", "", false
	}
	// The heredoc runs to the first line that is the delimiter.
	rest := s.s[s.i:]
	var lines []string
	for {
		line, tail, found := strings.Cut(rest, "\n")
		check := strings.TrimSuffix(line, "\r")
		if stripTabs {
			check = strings.TrimLeft(check, "\t")
		}
		if check == delim {
			if strings.TrimSpace(tail) != "" {
				return "", "", false // another statement follows
			}
			break
		}
		if !found {
			return "", "", false // no closing delimiter
		}
		lines = append(lines, line)
		rest = tail
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n"), workdir, true
}

// scanner reads the few shell tokens extractHeredoc needs.
type scanner struct {
	s string
	i int
}

func (s *scanner) skip(set string) {
	for s.i < len(s.s) && strings.IndexByte(set, s.s[s.i]) >= 0 {
		s.i++
	}
}

// blank skips spaces and tabs and says whether there were any.
func (s *scanner) blank() bool {
	start := s.i
	s.skip(" \t")
	return s.i > start
}

func (s *scanner) literal(lit string) bool {
	if strings.HasPrefix(s.s[s.i:], lit) {
		s.i += len(lit)
		return true
	}
	return false
}

// plainWordByte reports a byte that can be part of an unquoted word with no
// expansion or escape in it.
func plainWordByte(c byte) bool {
	return !strings.ContainsRune(" \t\r\n;&|<>()$`'\"\\", rune(c))
}

func (s *scanner) word() string {
	start := s.i
	for s.i < len(s.s) && plainWordByte(s.s[s.i]) {
		s.i++
	}
	return s.s[start:s.i]
}

// cdArg reads cd's one argument: a plain word, a 'raw string', or a
// "string" with literal content only.
func (s *scanner) cdArg() (string, bool) {
	if s.i >= len(s.s) {
		return "", false
	}
	switch s.s[s.i] {
	case '\'':
		end := strings.IndexByte(s.s[s.i+1:], '\'')
		if end < 0 {
			return "", false
		}
		arg := s.s[s.i+1 : s.i+1+end]
		s.i += end + 2
		return arg, s.argEnds()
	case '"':
		end := strings.IndexByte(s.s[s.i+1:], '"')
		if end <= 0 {
			return "", false // unterminated, or "" (no content to capture)
		}
		arg := s.s[s.i+1 : s.i+1+end]
		if strings.ContainsAny(arg, "$`\\") {
			return "", false
		}
		s.i += end + 2
		return arg, s.argEnds()
	}
	w := s.word()
	return w, w != "" && s.argEnds()
}

// argEnds reports that the argument is not glued to more word characters
// (`cd 'a'b` is one concatenated argument, which Codex does not accept).
func (s *scanner) argEnds() bool {
	return s.i >= len(s.s) || strings.IndexByte(" \t&", s.s[s.i]) >= 0
}

// delimiter reads a heredoc delimiter: WORD, 'WORD' or "WORD".
func (s *scanner) delimiter() (string, bool) {
	if s.i < len(s.s) && (s.s[s.i] == '\'' || s.s[s.i] == '"') {
		q := s.s[s.i]
		end := strings.IndexByte(s.s[s.i+1:], q)
		if end <= 0 {
			return "", false
		}
		d := s.s[s.i+1 : s.i+1+end]
		s.i += end + 2
		return d, !strings.ContainsAny(d, "\n")
	}
	d := s.word()
	return d, d != ""
}
