package environment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseFile(t *testing.T) {
	f, err := ParseFile([]byte(`
default = "dev"
[[environments]]
id = "dev"
url = " ws://127.0.0.1:8765 "
connect_timeout_sec = 2.5
[[environments]]
id = "sock_1"
url = "unix:///run/x.sock"
`))
	if err != nil {
		t.Fatal(err)
	}
	if !f.IncludeLocal || f.Default != "dev" || len(f.Remotes) != 2 ||
		f.Remotes[0] != (Remote{ID: "dev", URL: "ws://127.0.0.1:8765", ConnectTimeout: 2500 * time.Millisecond}) ||
		f.Remotes[1].URL != "unix:///run/x.sock" {
		t.Fatalf("%+v", f)
	}
	if f, err := ParseFile([]byte(`default = "NONE"`)); err != nil || f.Default != "none" {
		t.Fatalf("%+v %v", f, err)
	}
	if f, err := ParseFile([]byte(`include_local = false`)); err != nil || f.IncludeLocal || f.Default != "none" {
		t.Fatalf("%+v %v", f, err)
	}
	for text, want := range map[string]string{
		`default = "local"` + "\ninclude_local = false": "default environment `local` is not configured",
		`default = ""`: "cannot be empty",
		`colour = 1`:   "unknown field `colour`",
		"[[environments]]\nid = \"local\"\nurl = \"ws://h:1\"":                                               "is reserved",
		"[[environments]]\nid = \"a b\"\nurl = \"ws://h:1\"":                                                 "ASCII letters",
		"[[environments]]\nid = \"a\"\nurl = \"http://h\"":                                                   "must use ws://",
		"[[environments]]\nid = \"a\"":                                                                       "exactly one of url or program",
		"[[environments]]\nid = \"a\"\nprogram = \"ssh\"":                                                    "not supported by codexd",
		"[[environments]]\nid = \"a\"\nurl = \"ws://h:1\"\ncwd = \"/x\"":                                     "require program",
		"[[environments]]\nid = \"a\"\nurl = \"ws://h:1\"\n[[environments]]\nid = \"a\"\nurl = \"ws://h:2\"": "duplicated",
		"[[environments]]\nid = \"a\"\nurl = \"ws://h:1\"\nconnect_timeout_sec = -1":                         "out of range",
	} {
		if _, err := ParseFile([]byte(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	if f, ok, err := LoadFile(dir); err != nil || ok || !f.IncludeLocal || len(f.Remotes) != 0 {
		t.Fatalf("missing file: %+v %v %v", f, ok, err)
	}
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("[[environments]]\nid = \"x\"\nurl = \"ws://127.0.0.1:1\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if f, ok, err := LoadFile(dir); err != nil || !ok || len(f.Remotes) != 1 {
		t.Fatalf("%+v %v %v", f, ok, err)
	}
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("[[environments"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadFile(dir); err == nil || !strings.Contains(err.Error(), "failed to parse environment config") {
		t.Fatalf("bad file: %v", err)
	}
}

// FuzzParseFile: any text parses or fails cleanly, and what parses obeys
// the rules (valid ids and URLs, a configured default).
func FuzzParseFile(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := ParseFile(b)
		if err != nil {
			return
		}
		ids := map[string]bool{LocalID: file.IncludeLocal}
		for _, r := range file.Remotes {
			if ValidateID(r.ID) != nil || ValidateURL(r.URL) != nil || r.ConnectTimeout < 0 {
				t.Fatalf("accepted %+v", r)
			}
			ids[r.ID] = true
		}
		if file.Default != "" && file.Default != "none" && !ids[file.Default] {
			t.Fatalf("default %q not configured", file.Default)
		}
	})
}
