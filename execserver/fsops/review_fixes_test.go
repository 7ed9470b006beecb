package fsops

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/codexd/codexd/execproto"
)

func TestCopyTreeDoesNotWriteThroughDestinationSymlinks(t *testing.T) {
	e := newEnv(t)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	ok(t, err)
	ok(t, os.WriteFile(filepath.Join(outside, "victim"), []byte("original"), 0o644))
	e.write("src/victim", "PWNED")
	e.write("src/sub/planted", "PLANTED")
	ok(t, os.Mkdir(e.path("dst"), 0o755))
	e.symlink(filepath.Join(outside, "victim"), "dst/victim")
	e.symlink(outside, "dst/sub")
	_, err = e.svc.Copy(ctx, execproto.FsCopyParams{SourcePath: e.uri("src"), DestinationPath: e.uri("dst"), Recursive: true})
	t.Logf("copy err=%v", err)
	b, _ := os.ReadFile(filepath.Join(outside, "victim"))
	if string(b) != "original" {
		t.Errorf("file outside the root overwritten: %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "planted")); err == nil {
		t.Errorf("file planted outside the root via dst/sub symlink")
	}
}

// TestWritesToAFIFODoNotHang: writeFile and copy onto a FIFO nobody reads
// fail at once instead of blocking a handler forever.
func TestWritesToAFIFODoNotHang(t *testing.T) {
	e := newEnv(t)
	ok(t, syscall.Mkfifo(e.path("fifo"), 0o644))
	e.write("src", "data")
	run := func(name string, f func() error) {
		done := make(chan error, 1)
		go func() { done <- f() }()
		select {
		case err := <-done:
			if name != "Open replace" && err == nil {
				t.Errorf("%s onto a FIFO succeeded", name)
			}
		case <-time.After(2 * time.Second):
			t.Errorf("%s still blocked after 2s", name)
		}
	}
	run("WriteFile", func() error {
		_, err := e.svc.WriteFile(ctx, execproto.FsWriteFileParams{Path: e.uri("fifo"), DataBase64: "eA=="})
		return err
	})
	run("Copy", func() error {
		_, err := e.svc.Copy(ctx, execproto.FsCopyParams{SourcePath: e.uri("src"), DestinationPath: e.uri("fifo")})
		return err
	})
	c := e.svc.NewConnState(nil)
	run("Open replace", func() error {
		_, err := e.svc.Open(ctx, c, execproto.FsOpenParams{HandleID: "h", Path: e.uri("fifo"), Mode: execproto.FsOpenReplace})
		return err
	})
}
