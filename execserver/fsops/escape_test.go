package fsops

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/codexd/codexd/execproto"
)

// A missing component followed by an encoded "/../" once made resolvePath
// stop resolving and clean the rest lexically, so that a symlink after it
// was never checked against the roots: reads, writes and removals escaped.
func TestNoEscapeThroughMissingComponent(t *testing.T) {
	e := newEnv(t)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	ok(t, err)
	ok(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644))
	ok(t, os.Mkdir(filepath.Join(outside, "victim"), 0o755))
	e.symlink(outside, "escape")

	base := execproto.PathURI(e.root)
	// "nope%2F..%2Fescape" survives URL dot-segment removal as one segment
	// and decodes to "nope/../escape".
	r, err := e.svc.ReadFile(ctx, execproto.FsReadFileParams{Path: base + "/nope%2F..%2Fescape/secret"})
	if err == nil {
		t.Errorf("ReadFile outside the root succeeded: %q", r.DataBase64)
	}
	_, err = e.svc.WriteFile(ctx, execproto.FsWriteFileParams{Path: base + "/nope%2F..%2Fescape/planted", DataBase64: "cHduZWQ="})
	if err == nil {
		t.Errorf("WriteFile outside the root succeeded")
	}
	if _, serr := os.Stat(filepath.Join(outside, "planted")); serr == nil {
		t.Errorf("file planted outside the root")
	}
	_, err = e.svc.Remove(ctx, execproto.FsRemoveParams{Path: base + "/nope%2F..%2Fescape/victim"})
	if _, serr := os.Stat(filepath.Join(outside, "victim")); serr != nil {
		t.Errorf("directory outside the root removed (err=%v)", err)
	}
}
