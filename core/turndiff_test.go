package core

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexd/codexd/applypatch"
)

// recordPatch computes and applies a patch in dir and notes it in d.
func recordPatch(t *testing.T, d *turnDiff, dir, patch string) {
	t.Helper()
	ctx := context.Background()
	p, err := applypatch.Parse(patch)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := applypatch.Compute(ctx, applypatch.LocalFS{}, dir, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Apply(ctx, applypatch.LocalFS{}); err != nil {
		t.Fatal(err)
	}
	if d.root == "" {
		d.root = displayRoot(ctx, applypatch.LocalFS{}, dir)
	}
	d.record(plan, nil)
}

// A file moved (and changed) in a turn is one git-style rename with blob
// ids, as Codex 0.169's turn diff shows it; an added file has the zero id
// on its left.
func TestTurnDiffMoveIsRename(t *testing.T) {
	dir := t.TempDir()
	// The display root is dir, wherever the temporary directory is.
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "notes.txt"), "some notes\n")
	d := newTurnDiff()
	recordPatch(t, d, dir, "*** Begin Patch\n*** Update File: notes.txt\n*** Move to: moved.txt\n@@\n-some notes\n+moved\n*** End Patch")
	want := "diff --git a/notes.txt b/moved.txt\n" +
		"index cf88e040a4be8874952acfaa44f627718bcfd547..549477274da81523feadb7071d7af1b0f0bd1683\n" +
		"--- a/notes.txt\n+++ b/moved.txt\n@@ -1 +1 @@\n-some notes\n+moved\n"
	if got := d.unified(); got != want {
		t.Fatalf("move:\n%s\nwant:\n%s", got, want)
	}

	d = newTurnDiff()
	recordPatch(t, d, dir, "*** Begin Patch\n*** Add File: added.txt\n+made\n*** End Patch")
	want = "diff --git a/added.txt b/added.txt\nnew file mode 100644\n" +
		"index 0000000000000000000000000000000000000000..c5f1b8eaf85917b894fea0c18c228e380290308a\n" +
		"--- /dev/null\n+++ b/added.txt\n@@ -0,0 +1 @@\n+made\n"
	if got := d.unified(); got != want {
		t.Fatalf("add:\n%s\nwant:\n%s", got, want)
	}
}

// The turn diff's paths are relative to the cwd's git root when there is
// one, as Codex takes them.
func TestTurnDiffGitRoot(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "sub")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	d := newTurnDiff()
	recordPatch(t, d, dir, "*** Begin Patch\n*** Add File: a.txt\n+made\n*** End Patch")
	if got := d.unified(); !strings.HasPrefix(got, "diff --git a/sub/a.txt b/sub/a.txt\n") {
		t.Fatalf("turn diff %q", got)
	}
}
