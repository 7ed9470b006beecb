package filesearch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// linkTree is a tree with what makes a walk's order matter: links to
// directories before and after their targets, a link cycle, a dangling
// link and ignore files at several depths.
func linkTree(t testing.TB) string {
	root := t.TempDir()
	for _, d := range []string{"b/c/d", "b/e", "f/g", "h"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"b/c/d/x.go", "b/e/y.go", "f/g/z.go", "h/w.txt", "h/skip.log", "b/c/keep.log"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("*.log\n"), 0o644)
	os.WriteFile(filepath.Join(root, "b", "c", ".gitignore"), []byte("!keep.log\n"), 0o644)
	for link, target := range map[string]string{"a": "f", "z": "b/e", "b/c/d/up": "../..", "dangling": "nowhere"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func listWalk(roots []string, readers int) []string {
	var out []string
	walkReaders(context.Background(), roots, readers, func(e entry) bool {
		out = append(out, fmt.Sprintf("%d:%s:%v", e.root, e.path, e.isDir))
		return true
	})
	return out
}

// TestWalkOrderWithReaders: readers fetching ahead change nothing in what
// the walk lists, nor in its order.
func TestWalkOrderWithReaders(t *testing.T) {
	root := linkTree(t)
	roots := []string{root, filepath.Join(root, "b")}
	want := listWalk(roots, 0)
	if len(want) == 0 {
		t.Fatal("nothing listed")
	}
	for _, n := range []int{1, 3, 7} {
		for rep := 0; rep < 5; rep++ {
			got := listWalk(roots, n)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%d readers:\n got %v\nwant %v", n, got, want)
			}
		}
	}
}

// TestWalkStopsEarly: a walk stopped by its caller, or cancelled, ends its
// readers (goleak checks they are gone).
func TestWalkStopsEarly(t *testing.T) {
	root := linkTree(t)
	n := 0
	walkReaders(context.Background(), []string{root}, 3, func(entry) bool { n++; return n < 3 })
	if n != 3 {
		t.Fatalf("emit called %d times after it said stop", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	walkReaders(ctx, []string{root}, 3, func(entry) bool { return true })
}

// BenchmarkWalk walks a tree of 10,000 files in 500 directories.
func BenchmarkWalk(b *testing.B) {
	root := b.TempDir()
	for d := 0; d < 500; d++ {
		dir := filepath.Join(root, fmt.Sprintf("d%d", d/20), fmt.Sprintf("e%d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := 0; f < 20; f++ {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("fileName%d.go", f)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		walk(context.Background(), []string{root}, func(entry) bool { return true })
	}
}

// TestListDir: the getdents listing is os.File.ReadDir's.
func TestListDir(t *testing.T) {
	root := linkTree(t)
	big := filepath.Join(root, "big") // more than one getdents buffer
	if err := os.Mkdir(big, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3000; i++ {
		if err := os.WriteFile(filepath.Join(big, fmt.Sprintf("a-rather-long-file-name-to-fill-buffers-%04d.txt", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{root, filepath.Join(root, "b", "c"), filepath.Join(root, "h"), big} {
		_, _, got, err := listDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		want, err := readEntriesPortable(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, es := range [][]rawEnt{got, want} {
			slices.SortFunc(es, func(a, b rawEnt) int { return strings.Compare(a.name, b.name) })
		}
		if !slices.Equal(got, want) || len(got) == 0 {
			t.Errorf("%s: %v, want %v", dir, got, want)
		}
	}
}
