//go:build !execonly

package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestAppServerUsage(t *testing.T) {
	t.Setenv("CODEX_HOME", t.TempDir())
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"app-server", "--sandbox", "bogus"}, 2, "want read-only"},
		{[]string{"app-server", "-c", "model_provider=nope"}, 1, "nope"},
		// As Codex 0.169, which exits 1 at start.
		{[]string{"app-server", "-c", "approval_policy=untrusted"}, 1, `-c approval_policy=untrusted: approval_policy = "untrusted" is no longer supported; remove this setting`},
		{[]string{"app-server", "--listen", "tcp://x"}, 2, "unknown scheme"},
		{[]string{"app-server", "--listen", "ws://0.0.0.0:0", "--bench-instant-core", "1"}, 2, "--insecure-no-auth"},
		{[]string{"app-server", "extra"}, 2, "unexpected argument"},
	}
	for _, tc := range cases {
		var out, errb bytes.Buffer
		code := run(tc.args, strings.NewReader(""), &out, &errb)
		if code != tc.code || !strings.Contains(errb.String(), tc.msg) {
			t.Errorf("run(%q) = %d, %q; want %d and %q", tc.args, code, errb.String(), tc.code, tc.msg)
		}
	}
	var out, errb bytes.Buffer
	run([]string{"app-server", "-h"}, strings.NewReader(""), &out, &errb)
	if strings.Contains(errb.String(), "bench") {
		t.Errorf("the benchmark flag shows in --help: %s", errb.String())
	}
}

func TestAppServerOverStdio(t *testing.T) {
	in := strings.NewReader(`{"method":"thread/list","id":1,"params":{}}` + "\n" +
		`{"method":"initialize","id":2,"params":{"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	var out, errb bytes.Buffer
	if code := run([]string{"app-server", "--bench-instant-core", "1"}, in, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || lines[0] != `{"id":1,"error":{"code":-32600,"message":"Not initialized"}}` ||
		!strings.HasPrefix(lines[1], `{"id":2,"result":{"userAgent":"t/0.169.0 `) ||
		!strings.HasPrefix(lines[2], `{"method":"remoteControl/status/changed","params":{"status":"disabled",`) {
		t.Fatalf("stdout = %q", out.String())
	}
}

// command/exec builds its environment as the agent's commands do: no
// provider's credential reaches it, whatever its name, and
// [shell_environment_policy] applies.
func TestAppServerCommandExecNeverSeesProviderCredentials(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CODEX_HOME", home)
	t.Setenv("CORP_LLM_PASSWORD", "hunter2-password")
	t.Setenv("CORP_ORG_HEADER", "org-header-value")
	cfg := `model_provider = "corp"
[model_providers.corp]
name = "corp"
base_url = "http://127.0.0.1:9/v1"
env_key = "CORP_LLM_PASSWORD"
env_http_headers = { "OpenAI-Organization" = "CORP_ORG_HEADER" }
[shell_environment_policy]
set = { POLICY_SET = "from-policy" }
`
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	// stdin stays open until the answer came: at EOF the server ends.
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := run([]string{"app-server", "--sandbox", "danger-full-access"}, inR, outW, &errb)
		outW.Close()
		done <- code
	}()
	go func() {
		io.WriteString(inW, `{"method":"initialize","id":1,"params":{"clientInfo":{"name":"t","version":"1"}}}`+"\n"+
			`{"method":"command/exec","id":2,"params":{"command":["sh","-c","echo pw=$CORP_LLM_PASSWORD hdr=$CORP_ORG_HEADER set=$POLICY_SET"],"cwd":`+
			strconv.Quote(home)+`}}`+"\n")
	}()
	var answer string
	sc := bufio.NewScanner(outR)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), `{"id":2,`) {
			answer = sc.Text()
			break
		}
	}
	inW.Close()
	go io.Copy(io.Discard, outR)
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the app-server did not end at EOF")
	}
	if !strings.Contains(answer, `"stdout":"pw= hdr= set=from-policy\n"`) {
		t.Fatalf("command/exec answered %s (stderr %s)", answer, errb.String())
	}
}
