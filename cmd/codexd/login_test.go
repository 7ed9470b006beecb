//go:build !execonly

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoginStatusLogoutNeverPrintTheKey(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CODEX_HOME", home)
	const key = "sk-test-abc123456789"
	step := func(stdin string, args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := run(args, strings.NewReader(stdin), &out, &errb)
		all := out.String() + errb.String()
		if strings.Contains(all, "abc123") || strings.Contains(all, "56789") {
			t.Fatalf("%v printed the key: %q", args, all)
		}
		return code, all
	}
	if code, msg := step("", "login", "status"); code != 1 || !strings.Contains(msg, "Not logged in") {
		t.Fatalf("status before login: %d %q", code, msg)
	}
	if code, msg := step("\n", "login", "--with-api-key"); code != 1 || !strings.Contains(msg, "No API key provided") {
		t.Fatalf("empty key: %d %q", code, msg)
	}
	if code, msg := step(key+"\n", "login", "--with-api-key"); code != 0 || !strings.Contains(msg, "API key saved") {
		t.Fatalf("login: %d %q", code, msg)
	}
	b, err := os.ReadFile(filepath.Join(home, "auth.json"))
	if err != nil || !strings.Contains(string(b), `"OPENAI_API_KEY": "`+key+`"`) || !strings.Contains(string(b), `"auth_mode": "apikey"`) {
		t.Fatalf("auth.json %s %v", b, err)
	}
	if st, _ := os.Stat(filepath.Join(home, "auth.json")); st.Mode().Perm() != 0o600 {
		t.Fatalf("auth.json mode %v", st.Mode())
	}
	if code, msg := step("", "login", "status"); code != 0 || !strings.Contains(msg, "API key configured - ***") {
		t.Fatalf("status: %d %q", code, msg)
	}
	if code, msg := step("", "logout"); code != 0 || !strings.Contains(msg, "Successfully logged out") {
		t.Fatalf("logout: %d %q", code, msg)
	}
	if code, msg := step("", "logout"); code != 0 || !strings.Contains(msg, "Not logged in") {
		t.Fatalf("second logout: %d %q", code, msg)
	}
	if code, _ := step("", "login"); code != 2 {
		t.Fatalf("login without a method: %d", code)
	}
	if code, _ := step("", "login", "bogus"); code != 2 {
		t.Fatalf("login bogus: %d", code)
	}
}
