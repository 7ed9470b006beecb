package core

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/codexd/codexd/applypatch"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/execserver"
)

// testExecFS is an execFS on an in-process exec-server with cfg.
func testExecFS(t *testing.T, cfg execserver.Config) (execFS, *execclient.Client) {
	t.Helper()
	srv, err := execserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := execclient.NewInProcess(context.Background(), srv, execclient.Options{})
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); srv.Close() })
	return execFS{dial: func(context.Context) (*execclient.Client, error) { return c, nil }}, c
}

// TestExecFSErrorKinds: the exec-server's errors keep their kind through
// execFS (errors.Is on the errno, fs.ErrNotExist, fs.ErrPermission), so that
// applypatch and the core can tell "not a directory" from "is a directory"
// from "permission denied", and transport errors stay themselves. fsError
// used to turn all but "not found" into bare text.
func TestExecFSErrorKinds(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	writeFile(t, file, "x")
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	fsys, _ := testExecFS(t, execserver.Config{})

	check := func(what string, err error, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("%s: %v (%#v), want errors.Is %v", what, err, err, want)
		}
	}
	_, err := fsys.ReadFile(ctx, filepath.Join(dir, "missing"))
	check("read missing", err, fs.ErrNotExist)
	_, err = fsys.ReadFile(ctx, filepath.Join(file, "child"))
	check("read under a file", err, syscall.ENOTDIR)
	_, err = fsys.Stat(ctx, filepath.Join(file, "child"))
	check("stat under a file", err, syscall.ENOTDIR)
	check("write onto a directory", fsys.WriteFile(ctx, sub, []byte("x")), syscall.EISDIR)
	check("write under a file", fsys.WriteFile(ctx, filepath.Join(file, "child"), []byte("x")), syscall.ENOTDIR)
	check("mkdir over a file", fsys.MkdirAll(ctx, file), fs.ErrExist)
	writeFile(t, filepath.Join(sub, "keep"), "x")
	check("remove a directory", fsys.Remove(ctx, sub), syscall.ENOTEMPTY)

	// A path outside the server's roots is a permission problem.
	confined, _ := testExecFS(t, execserver.Config{Roots: []string{sub}})
	_, err = confined.ReadFile(ctx, file)
	check("read outside the roots", err, fs.ErrPermission)

	// The message a model reads is Codex's, with no Go prefix.
	var pe *fs.PathError
	err = fsys.WriteFile(ctx, sub, []byte("x"))
	if !errors.As(err, &pe) || pe.Path != sub || pe.Err.Error() != "Is a directory (os error 21)" {
		t.Errorf("write onto a directory: %#v", err)
	}

	// A transport failure is not a file error.
	gone, c := testExecFS(t, execserver.Config{})
	c.Close()
	_, err = gone.ReadFile(ctx, file)
	check("closed client", err, execclient.ErrClientClosed)
	if errors.Is(err, fs.ErrNotExist) {
		t.Errorf("closed client reads as not found: %v", err)
	}
}

// TestPatchWriteErrorText: a write that fails after verification tells
// the model what Codex 0.169's does, "Failed to write file PATH" (no
// cause), and the error keeps the exec-server's errno (EISDIR).
func TestPatchWriteErrorText(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "f.txt")
	writeFile(t, target, "one\n")
	ctx := context.Background()
	fsys, _ := testExecFS(t, execserver.Config{})
	inv, err := applypatch.Intercept([]string{"apply_patch", "*** Begin Patch\n*** Update File: f.txt\n@@\n-one\n+two\n*** End Patch"})
	if err != nil || inv == nil {
		t.Fatal(inv, err)
	}
	plan, err := applypatch.Compute(ctx, fsys, dir, inv.Patch)
	if err != nil {
		t.Fatal(err)
	}
	// The file becomes a directory between verification and the write.
	if err := os.Remove(target); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = plan.Apply(ctx, fsys)
	want := "Failed to write file " + target
	if err == nil || err.Error() != want || !errors.Is(err, syscall.EISDIR) {
		t.Fatalf("got %v, want %q", err, want)
	}
}
