package core

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/codexd/codexd/applypatch"
)

func TestProjectDocFallbacksAndRootMarkers(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "a", "b")
	os.MkdirAll(sub, 0o755)
	os.WriteFile(filepath.Join(root, ".hg"), nil, 0o644)
	os.WriteFile(filepath.Join(root, "CLAUDE.md"), []byte("root doc"), 0o644)
	os.WriteFile(filepath.Join(sub, "AGENTS.md"), []byte("sub doc"), 0o644)
	fsys := applypatch.LocalFS{}
	// project_root_markers = []: no root, cwd's doc alone.
	if got := projectDocs(t.Context(), fsys, sub, 1<<20, docNames{Fallbacks: []string{"CLAUDE.md"}, RootMarkers: []string{}}); got != "sub doc" {
		t.Fatalf("no markers: %q", got)
	}
	// .hg marks the root; its CLAUDE.md is the fallback there.
	if got := projectDocs(t.Context(), fsys, sub, 1<<20, docNames{Fallbacks: []string{"CLAUDE.md"}, RootMarkers: []string{".hg"}}); got != "root doc\n\nsub doc" {
		t.Fatalf("with .hg and the fallback: %q", got)
	}
	// Without the fallback the root has no doc.
	if got := projectDocs(t.Context(), fsys, sub, 1<<20, docNames{RootMarkers: []string{".hg"}}); got != "sub doc" {
		t.Fatalf("no fallback: %q", got)
	}
}
