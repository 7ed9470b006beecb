package safety

import (
	"strings"
	"testing"
)

func TestWords(t *testing.T) {
	cases := []struct {
		script string
		want   string // commands joined by " | ", words by " "; "-" for not plain
	}{
		{"ls -la", "ls -la"},
		{"touch approved_file.txt && echo created", "touch approved_file.txt | echo created"},
		{"git status; git diff || true", "git status | git diff | true"},
		{"cat 'a b.txt' | wc -l", "cat a b.txt | wc -l"},
		{`echo "hello world"`, "echo hello world"},
		{`echo "$HOME"`, "-"},
		{"echo $(id)", "-"},
		{"echo `id`", "-"},
		{"ls > out", "-"},
		{"ls &&", "-"},
		{"(ls)", "-"},
		{"FOO=1 touch y", "-"},
		{"ls; A=b", "-"},
		{"ls a=b", "ls a=b"},
		{"ls *", "-"},
		{"", "-"},
	}
	for _, c := range cases {
		cmds, ok := Words(c.script)
		got := "-"
		if ok {
			var parts []string
			for _, cmd := range cmds {
				parts = append(parts, strings.Join(cmd, " "))
			}
			got = strings.Join(parts, " | ")
		}
		if got != c.want {
			t.Errorf("Words(%q) = %q, want %q", c.script, got, c.want)
		}
	}
}

func TestIsKnownSafe(t *testing.T) {
	safe := [][]string{
		{"ls"}, {"git", "status"}, {"git", "branch"}, {"git", "branch", "--show-current"},
		{"git", "-C", ".", "log", "-n", "1"}, {"sed", "-n", "1,5p", "file.txt"}, {"find", ".", "-name", "x"},
		{"rg", "foo", "-n"}, {"bash", "-lc", "ls && cat README.md | wc -l"}, {"zsh", "-lc", "ls"},
		{"/bin/bash", "-c", "grep -r foo ."}, {"base64", "x"},
	}
	for _, argv := range safe {
		if !IsKnownSafe(argv) {
			t.Errorf("%q should be safe", argv)
		}
	}
	unsafe := [][]string{
		{"touch", "x"}, {"git", "fetch"}, {"git", "branch", "-d", "x"}, {"git", "-c", "core.pager=cat", "log"},
		{"git", "log", "--output=/tmp/x"}, {"sed", "-n", "xp", "f"}, {"find", ".", "-delete"},
		{"find", ".", "-exec", "rm", "{}", ";"}, {"rg", "--pre", "sh", "x"}, {"base64", "-o", "out"},
		{"bash", "-lc", "ls > out"}, {"bash", "-lc", "ls && touch x"}, {"cargo", "check"},
	}
	for _, argv := range unsafe {
		if IsKnownSafe(argv) {
			t.Errorf("%q should not be safe", argv)
		}
	}
}

func TestAssess(t *testing.T) {
	sh := func(s string) []string { return []string{"/bin/bash", "-lc", s} }
	cases := []struct {
		name      string
		r         Request
		want      Decision
		amendment string
	}{
		// Codex 0.169 asks even for ls under untrusted (observed side by
		// side: differential session exec-untrusted).
		{"untrusted safe", Request{Argv: sh("ls"), Policy: Untrusted}, Prompt, "ls"},
		{"untrusted safe script", Request{Argv: sh("ls && cat a"), Policy: Untrusted}, Prompt, "ls"},
		{"untrusted unknown", Request{Argv: sh("touch approved_file.txt && echo created"), Policy: Untrusted}, Prompt, "touch approved_file.txt"},
		{"untrusted complex", Request{Argv: sh("ls > out"), Policy: Untrusted}, Prompt, "/bin/bash -lc ls > out"},
		{"on-request sandboxed", Request{Argv: sh("touch x"), Policy: OnRequest}, Allow, ""},
		{"on-request escalated", Request{Argv: sh("touch x"), Policy: OnRequest, Escalated: true}, Prompt, "touch x"},
		{"on-request escalated prefix", Request{Argv: sh("npm test"), Policy: OnRequest, Escalated: true, PrefixRule: []string{"npm", "test"}}, Prompt, "npm test"},
		{"on-request banned prefix", Request{Argv: sh("python3 -c 1"), Policy: OnRequest, Escalated: true, PrefixRule: []string{"python3"}}, Prompt, "python3 -c 1"},
		{"on-request full access", Request{Argv: sh("touch x"), Policy: OnRequest, Unrestricted: true, Escalated: true}, Allow, ""},
		{"on-failure", Request{Argv: sh("touch x"), Policy: OnFailure}, Allow, ""},
		{"never", Request{Argv: sh("touch x"), Policy: Never}, Allow, ""},
		{"never dangerous", Request{Argv: sh("rm -rf build"), Policy: Never}, Forbidden, ""},
		{"on-request dangerous", Request{Argv: sh("rm -rf build"), Policy: OnRequest}, Prompt, "rm -rf build"},
		{"sudo", Request{Argv: sh("sudo ls"), Policy: OnFailure}, Allow, ""},
		{"sudo rm -f", Request{Argv: sh("sudo rm -f x"), Policy: OnFailure}, Prompt, "sudo rm -f x"},
		{"not plain", Request{Argv: sh("rm -f x > out"), Policy: OnRequest}, Prompt, "/bin/bash -lc rm -f x > out"},
		// Granular decides as on-request (its flags are the caller's).
		{"granular sandboxed", Request{Argv: sh("touch x"), Policy: Granular}, Allow, ""},
		{"granular escalated", Request{Argv: sh("touch x"), Policy: Granular, Escalated: true}, Prompt, "touch x"},
		{"granular full access", Request{Argv: sh("touch x"), Policy: Granular, Unrestricted: true, Escalated: true}, Allow, ""},
		{"granular dangerous", Request{Argv: sh("rm -rf build"), Policy: Granular}, Prompt, "rm -rf build"},
		{"granular dangerous full access", Request{Argv: sh("rm -rf build"), Policy: Granular, Unrestricted: true}, Prompt, "rm -rf build"},
	}
	for _, c := range cases {
		got := Assess(c.r)
		if got.Decision != c.want || strings.Join(got.Amendment, " ") != c.amendment {
			t.Errorf("%s: got %v %q, want %v %q", c.name, got.Decision, got.Amendment, c.want, c.amendment)
		}
	}
}

// The amendment Codex 0.169 proposes, as recorded from its app-server with
// the mock model: under untrusted every command prompts, so the first one
// is proposed; elsewhere the
// first command that prompts; a script that is not plain (a redirection,
// an assignment, a subshell) proposes the whole argv.
func TestAssessAmendmentAsCodex(t *testing.T) {
	sh := func(s string) []string { return []string{"/bin/bash", "-lc", s} }
	cases := []struct {
		script    string
		policy    Policy
		escalated bool
		amendment string
	}{
		{"touch approved_file.txt && echo created", Untrusted, false, "touch approved_file.txt"},
		{"echo hi | tee f.txt", Untrusted, false, "echo hi"},
		{"cat a.txt | tee b", Untrusted, false, "cat a.txt"},
		{"ls && rm -rf build", Untrusted, false, "ls"},
		{"git status; git push", Untrusted, false, "git status"},
		{"rm -rf build", Untrusted, false, "rm -rf build"},
		{"ls && rm -rf build", OnRequest, false, "rm -rf build"},
		{"ls; touch q", OnRequest, true, "ls"},
		{"FOO=1 touch y", Untrusted, false, "/bin/bash -lc FOO=1 touch y"},
		{"(cd /tmp && touch z)", Untrusted, false, "/bin/bash -lc (cd /tmp && touch z)"},
		{"cat a.txt | wc -l > n.txt", Untrusted, false, "/bin/bash -lc cat a.txt | wc -l > n.txt"},
	}
	for _, c := range cases {
		got := Assess(Request{Argv: sh(c.script), Policy: c.policy, Escalated: c.escalated})
		if got.Decision != Prompt || strings.Join(got.Amendment, " ") != c.amendment {
			t.Errorf("%q (%v): got %v %q, want prompt %q", c.script, c.policy, got.Decision, got.Amendment, c.amendment)
		}
	}
}
