package applypatch

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// codexApplyPatch returns the real Codex 0.169 binary under the name
// apply_patch (its arg0 dispatch then runs the apply-patch crate), or skips.
func codexApplyPatch(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("CODEX_BIN")
	if bin == "" {
		t.Skip("CODEX_BIN is not set: no real Codex to compare with (.ci/run installs it)")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("CODEX_BIN: %v", err)
	}
	link := filepath.Join(t.TempDir(), "apply_patch")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	return link
}

// writeTree creates files (paths under /w/ in the table) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, strings.TrimPrefix(p, "/w/"))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readTree renders the regular files under dir.
func readTree(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		lines = append(lines, rel+"="+string(data))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// runCodex applies patch in a fresh copy of files with the real Codex.
func runCodex(t *testing.T, bin string, files map[string]string, patch string) (dir, stdout, stderr string, ok bool) {
	t.Helper()
	dir = t.TempDir()
	writeTree(t, dir, files)
	cmd := exec.Command(bin, patch)
	cmd.Dir = dir
	home := t.TempDir()
	cmd.Env = []string{"HOME=" + home, "CODEX_HOME=" + home, "PATH=/usr/bin:/bin"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running codex: %v", err)
	}
	return dir, out.String(), errb.String(), err == nil
}

// runOurs applies patch in a fresh copy of files with this package, and
// returns what the standalone apply_patch would print.
func runOurs(t *testing.T, files map[string]string, patch string) (dir, stdout, stderr string, ok bool) {
	t.Helper()
	dir = t.TempDir()
	writeTree(t, dir, files)
	p, err := Parse(patch)
	if err != nil {
		return dir, "", err.(*ParseError).StderrText() + "\n", false
	}
	plan, err := Compute(context.Background(), LocalFS{}, dir, p)
	if err != nil {
		return dir, "", err.Error() + "\n", false
	}
	res, err := plan.Apply(context.Background(), LocalFS{})
	if err != nil {
		return dir, "", err.Error() + "\n", false
	}
	return dir, res.Summary(), "", true
}

// The same patches through the real Codex and through this package give the
// same files and the same output.
func TestConformanceWithCodex(t *testing.T) {
	bin := codexApplyPatch(t)
	for _, c := range scenarios {
		if strings.Contains(c.patch, "/abs/") {
			continue // absolute paths outside the test's directories
		}
		if c.name == "move onto itself is an update" {
			// A deliberate difference: Codex writes the file, then removes
			// its "original", losing it.
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			cdir, cout, cerr, cok := runCodex(t, bin, c.files, c.patch)
			odir, oout, oerr, ook := runOurs(t, c.files, c.patch)
			if !cok || !ook {
				t.Fatalf("codex ok=%v %q, ours ok=%v %q", cok, cerr, ook, oerr)
			}
			if cout != oout {
				t.Fatalf("stdout\ncodex %q\nours  %q", cout, oout)
			}
			if ct, ot := readTree(t, cdir), readTree(t, odir); ct != ot {
				t.Fatalf("files\ncodex %q\nours  %q", ct, ot)
			}
		})
	}
}

// Failing patches give Codex's message, and leave our files untouched
// where Codex may have written part of the patch.
func TestConformanceErrorsWithCodex(t *testing.T) {
	bin := codexApplyPatch(t)
	files := map[string]string{"/w/c.txt": "a\nb\n", "/w/bin.txt": "\xff\xfe\n", "/w/d/x": "x\n"}
	patches := []string{
		"bad",
		"*** Begin Patch\nbad",
		"*** Begin Patch\nfoo\n*** End Patch",
		"*** Begin Patch\n*** Update File: c.txt\n*** End Patch",
		"*** Begin Patch\n*** Update File: c.txt\n@@\nfoo\n*** End Patch",
		"*** Begin Patch\n*** Update File: c.txt\n@@\n*** End Patch",
		"*** Begin Patch\n*** Add File: x\nhello\n*** End Patch",
		"*** Begin Patch\n*** Update File: c.py\n@@ class A:\n@@   def f():\n-    pass\n*** End Patch",
		"*** Begin Patch\n*** End Patch",
		wrap("*** Update File: nope.txt\n@@\n-a\n+b"),
		wrap("*** Update File: d\n@@\n-a\n+b"),
		wrap("*** Update File: bin.txt\n@@\n-a\n+b"),
		wrap("*** Update File: c.txt\n@@ zzz\n-a\n+b"),
		wrap("*** Update File: c.txt\n@@\n-zz\n-yy\n+b"),
		wrap("*** Update File: c.txt\n@@\n-a\n+A\n*** End of File"),
		wrap("*** Add File: created.txt\n+partial\n*** Update File: c.txt\n@@\n-missing\n+x"),
	}
	for _, patch := range patches {
		t.Run(strings.ReplaceAll(patch, "\n", "|"), func(t *testing.T) {
			cdir, _, cerr, cok := runCodex(t, bin, files, patch)
			odir, _, oerr, ook := runOurs(t, files, patch)
			if cok || ook {
				t.Fatalf("codex ok=%v, ours ok=%v", cok, ook)
			}
			if strings.ReplaceAll(cerr, cdir, "DIR") != strings.ReplaceAll(oerr, odir, "DIR") {
				t.Fatalf("stderr\ncodex %q\nours  %q", cerr, oerr)
			}
			want := newMemFS(files)
			wantDir := t.TempDir()
			writeTree(t, wantDir, want.files)
			if got := readTree(t, odir); got != readTree(t, wantDir) {
				t.Fatalf("our files changed: %q", got)
			}
		})
	}
}
