//go:build linux

package rpcserve

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/codexd/codexd/jsonrpc"
	"github.com/codexd/codexd/sandbox"
)

// runClient runs the test binary as a client of url, wrapped by wrap.
func runClient(t *testing.T, url string, wrap func([]string) []string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv := wrap([]string{self, "-test.run=^$"})
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), dialEnv+"="+url)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run()
	return strings.TrimSpace(out.String())
}

// TestCommandsCannotDriveTheirServer: a process this server started (a
// command it runs, sandboxed or not) is refused on the tokenless loopback
// WebSocket and on the Unix socket; a process that is not its descendant
// (here the test itself, as a client in process) is served.
func TestCommandsCannotDriveTheirServer(t *testing.T) {
	plain := func(argv []string) []string { return argv }
	sandboxed := func(argv []string) []string {
		w, err := sandbox.Wrap(sandbox.Policy{Mode: sandbox.ReadOnly, NetworkAccess: true}, argv, argv[0])
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	_, landlockErr := sandbox.Available()
	for _, scheme := range []string{"ws", "unix"} {
		addr := "127.0.0.1:0"
		if scheme == "unix" {
			addr = t.TempDir() + "/s.sock"
		}
		ep := newEcho()
		l, err := Listen(ep, jsonrpc.Listen{Scheme: scheme, Addr: addr}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		served := make(chan error, 1)
		go func() { served <- l.Serve(nil, nil) }()

		// This process is no descendant of itself: served.
		if scheme == "ws" {
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			st, err := jsonrpc.DialWebSocket(ctx, l.URL(), nil, 0)
			cancel()
			if err != nil {
				t.Fatalf("the server's own client was refused: %v", err)
			}
			c := jsonrpc.NewConn(st, jsonrpc.Options{})
			echoCall(t, c, "not a command")
			c.Close()
		}
		if got := runClient(t, l.URL(), plain); !strings.HasPrefix(got, "refused") {
			t.Errorf("%s: a child of the server got through: %s", scheme, got)
		}
		if landlockErr != nil {
			t.Logf("%s: no sandboxed client: this kernel cannot confine (%v)", scheme, landlockErr)
		} else if got := runClient(t, l.URL(), sandboxed); !strings.HasPrefix(got, "refused") {
			t.Errorf("%s: a sandboxed command allowed the network got through: %s", scheme, got)
		} else {
			t.Logf("%s: sandboxed client: %s", scheme, got)
		}
		l.Close()
		ep.Close()
		if err := <-served; err != nil {
			t.Fatal(err)
		}
	}
}
