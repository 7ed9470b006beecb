package applypatch

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

const addFoo = "*** Begin Patch\n*** Add File: foo\n+hi\n*** End Patch"

func heredocScript(prefix string) string {
	return prefix + "apply_patch <<'PATCH'\n" + addFoo + "\nPATCH"
}

var wantAddFoo = []Hunk{{Kind: KindAdd, Path: "foo", Contents: "hi\n"}}

// The forms Codex intercepts, and their working directory.
func TestInterceptMatches(t *testing.T) {
	cases := []struct {
		name    string
		argv    []string
		workdir string
	}{
		{"literal", []string{"apply_patch", addFoo + "\n"}, ""},
		{"literal applypatch", []string{"applypatch", addFoo}, ""},
		{"literal heredoc-wrapped argument", []string{"apply_patch", "<<'EOF'\n" + addFoo + "\nEOF\n"}, ""},
		{"bash -lc heredoc", []string{"bash", "-lc", heredocScript("")}, ""},
		{"bash -c heredoc", []string{"bash", "-c", heredocScript("")}, ""},
		{"/bin/sh -c", []string{"/bin/sh", "-c", heredocScript("")}, ""},
		{"zsh -lc", []string{"/usr/bin/zsh", "-lc", heredocScript("")}, ""},
		{"applypatch heredoc", []string{"bash", "-lc", "applypatch <<'PATCH'\n" + addFoo + "\nPATCH"}, ""},
		{"double-quoted delimiter", []string{"bash", "-lc", "apply_patch <<\"EOF\"\n" + addFoo + "\nEOF\n"}, ""},
		{"bare delimiter", []string{"bash", "-lc", "apply_patch <<EOF\n" + addFoo + "\nEOF"}, ""},
		{"delimiter after a space", []string{"bash", "-lc", "apply_patch << 'EOF'\n" + addFoo + "\nEOF"}, ""},
		{"tab-stripping heredoc", []string{"bash", "-lc", "apply_patch <<-EOF\n" + addFoo + "\n\tEOF"}, ""},
		{"trailing newlines after the delimiter", []string{"bash", "-lc", heredocScript("") + "\n\n"}, ""},
		{"leading blank lines", []string{"bash", "-lc", "\n  " + heredocScript("")}, ""},
		{"cd then apply", []string{"bash", "-lc", heredocScript("cd foo && ")}, "foo"},
		{"cd single-quoted path with spaces", []string{"bash", "-lc", heredocScript("cd 'foo bar' && ")}, "foo bar"},
		{"cd double-quoted path with spaces", []string{"bash", "-lc", heredocScript("cd \"foo bar\" && ")}, "foo bar"},
		{"cd absolute", []string{"bash", "-lc", heredocScript("cd /abs/dir && ")}, "/abs/dir"},
		{"powershell", []string{"powershell.exe", "-Command", heredocScript("")}, ""},
		{"powershell -NoProfile", []string{"powershell.exe", "-NoProfile", "-Command", heredocScript("")}, ""},
		{"pwsh", []string{"pwsh", "-NoProfile", "-Command", heredocScript("")}, ""},
		{"cmd /c with cd", []string{"cmd.exe", "/c", heredocScript("cd foo && ")}, "foo"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inv, err := Intercept(c.argv)
			if err != nil || inv == nil {
				t.Fatalf("Intercept = %v, %v", inv, err)
			}
			if !reflect.DeepEqual(inv.Patch.Hunks, wantAddFoo) || inv.Workdir != c.workdir {
				t.Fatalf("hunks %#v workdir %q", inv.Patch.Hunks, inv.Workdir)
			}
			if inv.Patch.Text != addFoo {
				t.Fatalf("text %q", inv.Patch.Text)
			}
		})
	}
}

// Commands that merely look like patches run as commands.
func TestInterceptIgnores(t *testing.T) {
	cases := map[string][]string{
		"ordinary command":         {"bash", "-lc", "ls -la"},
		"cd with semicolon":        {"bash", "-lc", heredocScript("cd foo; ")},
		"cd or":                    {"bash", "-lc", heredocScript("cd bar || ")},
		"cd pipe":                  {"bash", "-lc", heredocScript("cd bar | ")},
		"echo and apply":           {"bash", "-lc", heredocScript("echo foo && ")},
		"argument to apply_patch":  {"bash", "-lc", "apply_patch foo <<'PATCH'\n" + addFoo + "\nPATCH"},
		"two cds":                  {"bash", "-lc", heredocScript("cd foo && cd bar && ")},
		"cd with two arguments":    {"bash", "-lc", heredocScript("cd foo bar && ")},
		"cd without argument":      {"bash", "-lc", heredocScript("cd && ")},
		"command after":            {"bash", "-lc", heredocScript("cd bar && ") + " && echo done"},
		"statement after":          {"bash", "-lc", heredocScript("") + "\necho done"},
		"echo then cd":             {"bash", "-lc", heredocScript("echo foo; cd bar && ")},
		"comment before":           {"bash", "-lc", "# apply it\n" + heredocScript("")},
		"no closing delimiter":     {"bash", "-lc", "apply_patch <<'PATCH'\n" + addFoo},
		"cd with expansion":        {"bash", "-lc", heredocScript("cd $HOME && ")},
		"cd with quoted expansion": {"bash", "-lc", heredocScript("cd \"$HOME\" && ")},
		"unknown shell":            {"fish", "-c", heredocScript("")},
		"bash without -c":          {"bash", heredocScript("")},
		"bash -x -c":               {"bash", "-x", "-c", heredocScript("")},
		"apply_patch, no argument": {"apply_patch"},
		"apply_patch, two args":    {"apply_patch", addFoo, "extra"},
		"other program":            {"git", "apply", addFoo},
		"redirection":              {"bash", "-lc", "apply_patch <<'PATCH' > out\n" + addFoo + "\nPATCH"},
	}
	for name, argv := range cases {
		t.Run(name, func(t *testing.T) {
			if inv, err := Intercept(argv); inv != nil || err != nil {
				t.Fatalf("Intercept = %#v, %v; want an ordinary command", inv, err)
			}
		})
	}
}

func TestInterceptErrors(t *testing.T) {
	cases := []struct {
		name string
		argv []string
		want string
	}{
		{"bare patch", []string{addFoo}, ErrImplicitInvocation.Error()},
		{"bare patch as a script", []string{"bash", "-lc", addFoo}, ErrImplicitInvocation.Error()},
		{"literal malformed", []string{"apply_patch", "*** Begin Patch\nfoo\n*** End Patch"},
			"invalid hunk at line 2, 'foo' is not a valid hunk header. Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"},
		{"heredoc malformed", []string{"bash", "-lc", "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: x\n*** End Patch\nEOF"},
			"invalid hunk at line 2, Update file hunk for path 'x' is empty"},
		{"heredoc without envelope", []string{"bash", "-lc", "apply_patch <<'EOF'\nhello\nEOF"},
			"invalid patch: The first line of the patch must be '*** Begin Patch'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inv, err := Intercept(c.argv)
			if inv != nil || err == nil || err.Error() != c.want {
				t.Fatalf("Intercept = %v, %v; want %q", inv, err, c.want)
			}
		})
	}
	if _, err := Intercept([]string{addFoo}); !errors.Is(err, ErrImplicitInvocation) {
		t.Fatal("bare patch is not ErrImplicitInvocation")
	}
}

func TestInterceptCommand(t *testing.T) {
	inv, err := InterceptCommand(heredocScript("cd sub && "))
	if err != nil || inv == nil || inv.Workdir != "sub" {
		t.Fatalf("%v %v", inv, err)
	}
	if got := inv.Cwd("/w"); got != "/w/sub" {
		t.Fatalf("cwd %q", got)
	}
	if got := (&Invocation{Workdir: "/abs"}).Cwd("/w"); got != "/abs" {
		t.Fatalf("absolute workdir: %q", got)
	}
	if got := (&Invocation{}).Cwd("/w/"); got != "/w" {
		t.Fatalf("no workdir: %q", got)
	}
}

// Verify resolves the patch against the `cd` directory, as Codex's
// maybe_parse_apply_patch_verified does (move destination included).
func TestVerifyUsesEffectiveCwd(t *testing.T) {
	m := newMemFS(map[string]string{"/w/alt/old.txt": "before\n"})
	script := "cd alt && apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: old.txt\n*** Move to: renamed.txt\n@@\n-before\n+after\n*** End Patch\nPATCH"
	plan, err := Verify(context.Background(), m, "/w", []string{"bash", "-lc", script})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Cwd != "/w/alt" || plan.Changes[0].Path != "/w/alt/old.txt" || plan.Changes[0].MovePath != "/w/alt/renamed.txt" {
		t.Fatalf("%+v", plan)
	}
	if plan, err := Verify(context.Background(), m, "/w", []string{"bash", "-lc", "ls"}); plan != nil || err != nil {
		t.Fatalf("ordinary command: %v %v", plan, err)
	}
	if _, err := Verify(context.Background(), m, "/w", []string{"bash", "-lc", "apply_patch <<'EOF'\n" + wrap("*** Delete File: nope") + "\nEOF"}); err == nil ||
		err.Error() != "Failed to read /w/nope: No such file or directory (os error 2)" {
		t.Fatalf("missing file: %v", err)
	}
}
