package applypatch

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A patch whose file must go where a file (not a directory) is, or where a
// directory is, on disk or as an earlier hunk leaves it, cannot be applied.
// Codex 0.169 verifies it and fails writing, after the hunks before it:
// "Failed to write file /abs" (the fileChange item failed). Compute foresees
// it, so that Apply fails the same way without writing anything.
func TestComputeRefusesWritesUnderAFile(t *testing.T) {
	cases := []struct {
		name, patch string
		// wantMsg names the path, relative to the directory.
		wantPath, wantMsg string
		wantErr           error
	}{
		{"add under an existing file", "*** Add File: ok.txt\n+1\n*** Add File: file/b.txt\n+x",
			"file/b.txt", "Not a directory (os error 20)", syscall.ENOTDIR},
		{"add deeper under an existing file", "*** Add File: ok.txt\n+1\n*** Add File: file/sub/b.txt\n+x",
			"file/sub/b.txt", "Not a directory (os error 20)", syscall.ENOTDIR},
		{"move under an existing file", "*** Add File: ok.txt\n+1\n*** Update File: src.txt\n*** Move to: file/moved.txt\n@@\n-s\n+S",
			"file/moved.txt", "Not a directory (os error 20)", syscall.ENOTDIR},
		{"move under its own source", "*** Add File: ok.txt\n+1\n*** Update File: src.txt\n*** Move to: src.txt/moved.txt\n@@\n-s\n+S",
			"src.txt/moved.txt", "Not a directory (os error 20)", syscall.ENOTDIR},
		{"add under a file an earlier hunk adds", "*** Add File: new\n+1\n*** Add File: new/b.txt\n+x",
			"new/b.txt", "Not a directory (os error 20)", syscall.ENOTDIR},
		{"add a file where an earlier hunk makes a directory", "*** Add File: d2/b.txt\n+x\n*** Add File: d2\n+1",
			"d2", "Is a directory (os error 21)", syscall.EISDIR},
		{"move onto a directory an earlier hunk makes", "*** Add File: d3/b.txt\n+x\n*** Update File: src.txt\n*** Move to: d3\n@@\n-s\n+S",
			"d3", "Is a directory (os error 21)", syscall.EISDIR},
		{"add onto a directory", "*** Add File: ok.txt\n+1\n*** Add File: dir\n+x", "dir", "Is a directory (os error 21)", syscall.EISDIR},
		{"move onto a directory", "*** Add File: ok.txt\n+1\n*** Update File: src.txt\n*** Move to: dir\n@@\n-s\n+S",
			"dir", "Is a directory (os error 21)", syscall.EISDIR},
		{"the first of two", "*** Add File: file/b.txt\n+x\n*** Add File: dir\n+x", "file/b.txt", "Not a directory (os error 20)", syscall.ENOTDIR},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range map[string]string{"file": "f\n", "src.txt": "s\n", "dir/in.txt": "i\n"} {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := readTree(t, dir)
			plan, err := Compute(context.Background(), LocalFS{}, dir, mustParse(t, wrap(c.patch)))
			if err != nil {
				t.Fatalf("Compute: %v", err)
			}
			full := filepath.Join(dir, c.wantPath)
			if b := plan.blocked; b == nil || b.Error() != "Failed to write file "+full+": "+c.wantMsg {
				t.Fatalf("foreseen %v, want %s: %s", b, full, c.wantMsg)
			}
			res, err := plan.Apply(context.Background(), LocalFS{})
			var we *WriteError
			if !errors.As(err, &we) || err.Error() != "Failed to write file "+full || we.Path != full ||
				!errors.Is(err, c.wantErr) || len(we.Written) != 0 || len(res.Written) != 0 {
				t.Fatalf("Apply: %v (%T), want Failed to write file %s and nothing written", err, err, full)
			}
			if after := readTree(t, dir); after != before {
				t.Fatalf("the directory changed:\n%s", after)
			}
		})
	}
}

// What an earlier hunk removes is no obstacle: a deleted file's path may
// become a directory, and parents on disk are reused.
func TestComputeAllowsDirectoriesWhereAFileWasDeleted(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "exists"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gone"), []byte("g\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, err := Compute(context.Background(), LocalFS{}, dir, mustParse(t, wrap(
		"*** Delete File: gone\n*** Add File: gone/now/a.txt\n+a\n*** Add File: exists/b.txt\n+b\n*** Add File: fresh/c.txt\n+c")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Apply(context.Background(), LocalFS{}); err != nil {
		t.Fatal(err)
	}
	if got, want := readTree(t, dir), "exists/b.txt=b\n\nfresh/c.txt=c\n\ngone/now/a.txt=a\n"; got != want {
		t.Fatalf("files\n%s\nwant\n%s", got, want)
	}
}

// opaqueFS reports errors other than a missing path as bare text, as an FS
// across the wire may (the core's exec-server FS does).
type opaqueFS struct{ LocalFS }

func (o opaqueFS) Stat(ctx context.Context, path string) (FileInfo, error) {
	info, err := o.LocalFS.Stat(ctx, path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		err = errors.New("remote: " + err.Error())
	}
	return info, err
}

func TestComputeRefusesWritesUnderAFileThroughAnOpaqueFS(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "file"), []byte("f\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, err := Compute(context.Background(), opaqueFS{}, dir, mustParse(t, wrap("*** Add File: ok.txt\n+1\n*** Add File: file/sub/b.txt\n+x")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Apply(context.Background(), opaqueFS{}); !errors.Is(err, syscall.ENOTDIR) {
		t.Fatalf("Apply: %v, want ENOTDIR", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ok.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ok.txt was written: %v", err)
	}
}
