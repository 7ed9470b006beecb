//go:build linux

package execserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/codexd/codexd/execproto"
)

// TestProcessCwdHoldsWhileSymlinksSwap: the cwd of a process is checked
// against the roots and then used; a component swapped for a symlink to a
// directory outside them in between must not move the child out.
func TestProcessCwdHoldsWhileSymlinksSwap(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(outside, "f"), []byte("OUTSIDE"), 0o644))
	must(os.Mkdir(filepath.Join(root, "sw"), 0o755))
	must(os.WriteFile(filepath.Join(root, "sw", "f"), []byte("inside"), 0o644))
	must(os.Symlink(outside, filepath.Join(root, "alt")))
	stop, swapped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(swapped)
		a, b := filepath.Join(root, "sw"), filepath.Join(root, "alt")
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("exchange: %v", err)
				return
			}
		}
	}()
	defer func() {
		close(stop)
		<-swapped
	}()

	_, url := newTestServer(t, Config{Roots: []string{root}})
	c := connect(t, url, "")
	ctx := context.Background()
	const n = 300
	started := 0
	for i := 0; i < n; i++ {
		_, err := execproto.ProcessStart.Call(ctx, c.conn, execproto.ProcessStartParams{
			ProcessID: fmt.Sprint("p", i), Argv: []string{"cat", "f"},
			Cwd: execproto.PathURI(filepath.Join(root, "sw")), Env: map[string]string{"PATH": os.Getenv("PATH")},
		})
		if err == nil {
			started++
		}
	}
	out := map[string]string{}
	for closed := 0; closed < started; {
		select {
		case o := <-c.output:
			out[o.ProcessID] += string(o.Chunk)
		case <-c.closed:
			closed++
		}
	}
	// Output notifications all precede closed, per process; drain the rest.
	for len(c.output) > 0 {
		o := <-c.output
		out[o.ProcessID] += string(o.Chunk)
	}
	inside := 0
	for id, s := range out {
		switch s {
		case "inside":
			inside++
		case "OUTSIDE":
			t.Errorf("%s ran outside the root", id)
		}
	}
	t.Logf("%d of %d started, %d read inside the root", started, n, inside)
	if inside == 0 {
		t.Error("no process ever ran inside the root: the test proves nothing")
	}
}
