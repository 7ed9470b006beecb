package execserver

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPasswdShell(t *testing.T) {
	p := filepath.Join(t.TempDir(), "passwd")
	data := "root:x:0:0:root:/root:/bin/bash\n" +
		"broken line\n" +
		"alice:x:1000:1000:Alice,,,:/home/alice:/usr/bin/zsh\n"
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	for uid, want := range map[int]string{0: "/bin/bash", 1000: "/usr/bin/zsh", 42: ""} {
		if got := passwdShell(p, uid); got != want {
			t.Errorf("uid %d: %q, want %q", uid, got, want)
		}
	}
	if got := passwdShell(filepath.Join(t.TempDir(), "none"), 0); got != "" {
		t.Errorf("missing file: %q", got)
	}
}

// TestUserShellIgnoresSHELL: Codex reports the password database's shell
// whatever $SHELL says, and so do we.
func TestUserShellIgnoresSHELL(t *testing.T) {
	want := passwdShell("/etc/passwd", os.Getuid())
	if want == "" {
		t.Skip("no passwd entry for this uid")
	}
	t.Setenv("SHELL", "")
	if got := userShell(); got != want {
		t.Errorf("SHELL unset: %q, want %q", got, want)
	}
	t.Setenv("SHELL", "/nonexistent/fish")
	if got := userShell(); got != want {
		t.Errorf("SHELL set: %q, want %q", got, want)
	}
}
