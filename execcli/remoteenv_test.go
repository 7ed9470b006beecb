package execcli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/codexd/codexd/execserver"
)

// TestRemoteGetsNoLocalEnvironment: a remote server gets PATH, TERM, LANG,
// LC_* and the --env pairs, not the rest of the local environment (tokens,
// keys), unless --inherit-env; and without --cwd the command runs in the
// server's default directory, not in a local path sent along.
func TestRemoteGetsNoLocalEnvironment(t *testing.T) {
	server := testServer(t, execserver.Config{}) // its default cwd: the one now
	serverCwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	serverCwd, _ = filepath.EvalSymlinks(serverCwd)
	local, _ := filepath.EvalSymlinks(t.TempDir())
	t.Chdir(local)
	t.Setenv("CODEXD_TEST_SECRET_TOKEN", "leaked")
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("LC_CTYPE", "C.UTF-8")
	t.Setenv("TERM", "xterm-test")
	script := `echo "${CODEXD_TEST_SECRET_TOKEN:-unset} $LANG $LC_CTYPE $TERM ${CODEXD_A:-}"; pwd -P`
	o := runSync(t, []string{"--server", server, "--env", "CODEXD_A=given", "--", "sh", "-c", script}, nil)
	if want := "unset C.UTF-8 C.UTF-8 xterm-test given\n" + serverCwd + "\n"; o.code != 0 || o.stdout != want {
		t.Fatalf("got %+v, want stdout %q", o, want)
	}
	o = runSync(t, []string{"--server", server, "--inherit-env", "--cwd", local, "--", "sh", "-c", script}, nil)
	if want := "leaked C.UTF-8 C.UTF-8 xterm-test \n" + local + "\n"; o.code != 0 || o.stdout != want {
		t.Fatalf("--inherit-env: got %+v, want stdout %q", o, want)
	}
}
