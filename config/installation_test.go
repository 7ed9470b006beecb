package config

import (
	"os"
	"path/filepath"
	"testing"
)

// The installation id is created once and then read back, as Codex keeps
// it; a file that is not a UUID is never overwritten.
func TestInstallationID(t *testing.T) {
	home := t.TempDir()
	id, err := InstallationID(home)
	if err != nil || len(id) != 36 {
		t.Fatalf("first: %q %v", id, err)
	}
	again, err := InstallationID(home)
	if err != nil || again != id {
		t.Fatalf("second: %q %v, want %q", again, err, id)
	}
	b, err := os.ReadFile(filepath.Join(home, InstallationIDFile))
	if err != nil || string(b) != id {
		t.Fatalf("file: %q %v", b, err)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, InstallationIDFile), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := InstallationID(other); err == nil {
		t.Fatal("a file that is not a UUID was accepted")
	}
	if b, _ := os.ReadFile(filepath.Join(other, InstallationIDFile)); string(b) != "mine" {
		t.Fatalf("overwritten: %q", b)
	}
}
