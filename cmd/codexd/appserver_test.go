//go:build !execonly

package main

import (
	"bytes"
	"strings"
	"testing"
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
