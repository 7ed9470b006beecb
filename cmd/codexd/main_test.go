package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/codexd/codexd/execserver/procs"
	"github.com/codexd/codexd/sandbox"
)

func TestMain(m *testing.M) {
	// Sandboxed commands re-execute this binary as the Landlock helper.
	sandbox.RunHelperIfRequested()
	// Process tests re-execute it as codexd itself, and a server of
	// theirs re-executes it as its guard.
	procs.RunGuardIfRequested()
	if os.Getenv(asCodexdEnv) == "1" {
		prepareProcess(os.Args[1:])
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m)
}

// asCodexdEnv makes the test binary run as codexd (see codexdCommand).
const asCodexdEnv = "CODEXD_TEST_RUN_AS_CODEXD"

func TestUsageErrors(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty-token")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{nil, 2, "usage"},
		{[]string{"nope"}, 2, `unknown command "nope"`},
		{[]string{"exec-server", "--listen", "tcp://x"}, 2, "unknown scheme"},
		{[]string{"exec-server", "--listen", "ws://example.com:1"}, 2, "IP address"},
		{[]string{"exec-server", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"exec-server", "--listen", "ws://0.0.0.0:0"}, 2, "--insecure-no-auth"},
		{[]string{"exec-server", "--auth-token-file", empty}, 2, "is empty"},
		{[]string{"exec-server", "--auth-token-file", filepath.Join(t.TempDir(), "missing")}, 2, "no such file"},
		{[]string{"help"}, 0, "codexd exec"},
		{[]string{"--version"}, 0, "codexd 0."},
		{[]string{"help", "exec-server"}, 0, "--listen"},
		{[]string{"exec-server", "--help"}, 0, "--root"},
		{[]string{"app-server", "-h"}, 0, "--listen"},
		{[]string{"mock-model", "--help"}, 0, "--script"},
		{[]string{"run", "--help"}, 0, "usage: codexd run"},
		{[]string{"exec", "--help"}, 0, "--json"},
		{[]string{"help", "run"}, 0, "--server"},
		{[]string{"run", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"exec", "--", "ls"}, 2, "codexd run"},
	}
	for _, tc := range cases {
		var out, errb bytes.Buffer
		code := run(tc.args, strings.NewReader(""), &out, &errb)
		shown := errb.String()
		if tc.code == 0 {
			shown = out.String() // help and version go to stdout
		}
		if code != tc.code || !strings.Contains(shown, tc.msg) {
			t.Errorf("run(%q) = %d, %q; want %d and %q", tc.args, code, errb.String(), tc.code, tc.msg)
		}
	}
}

func TestExecServerOverStdio(t *testing.T) {
	// A whole session over stdio: initialize, then stdin ends and the
	// server exits 0, printing nothing but protocol on stdout.
	in := strings.NewReader(`{"id":1,"method":"initialize","params":{"clientName":"t"}}` + "\n")
	var out, errb bytes.Buffer
	if code := run([]string{"exec-server", "--listen", "stdio://"}, in, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], `{"id":1,"result":{"sessionId":"`) {
		t.Fatalf("stdout = %q", out.String())
	}
}
