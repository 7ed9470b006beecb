//go:build linux

package fsops

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/codexd/codexd/execproto"
)

// swapper exchanges root/sw (a real directory) and root/alt (a symlink to a
// directory outside the root) atomically, over and over, until stopped: a
// path through root/sw is inside the root at one moment and outside it the
// next.
type swapper struct {
	stop  chan struct{}
	done  chan struct{}
	swaps atomic.Int64
}

func startSwapper(t *testing.T, root, outside string) *swapper {
	t.Helper()
	ok(t, os.Mkdir(filepath.Join(root, "sw"), 0o755))
	ok(t, os.WriteFile(filepath.Join(root, "sw", "f"), []byte("inside"), 0o644))
	ok(t, os.Mkdir(filepath.Join(root, "sw", "tree"), 0o755))
	ok(t, os.WriteFile(filepath.Join(root, "sw", "tree", "f"), []byte("inside"), 0o644))
	ok(t, os.Symlink(outside, filepath.Join(root, "alt")))
	s := &swapper{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		a, b := filepath.Join(root, "sw"), filepath.Join(root, "alt")
		for {
			select {
			case <-s.stop:
				return
			default:
			}
			if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("exchange: %v", err)
				return
			}
			s.swaps.Add(1)
		}
	}()
	t.Cleanup(func() {
		select {
		case <-s.stop:
		default:
			close(s.stop)
		}
		<-s.done
	})
	return s
}

// TestRootsHoldWhileSymlinksSwap: while a component of the path is swapped
// between a directory inside the root and a symlink to one outside, no
// operation reads or writes a byte outside the root.
func TestRootsHoldWhileSymlinksSwap(t *testing.T) {
	e := newEnv(t)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	ok(t, err)
	ok(t, os.WriteFile(filepath.Join(outside, "f"), []byte("OUTSIDE"), 0o644))
	ok(t, os.Mkdir(filepath.Join(outside, "tree"), 0o755))
	ok(t, os.WriteFile(filepath.Join(outside, "tree", "f"), []byte("OUTSIDE"), 0o644))
	sw := startSwapper(t, e.root, outside)

	deadline := time.Now().Add(2 * time.Second)
	var leaks, reads, writes atomic.Int64
	var wg sync.WaitGroup
	worker := func(fn func(i int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				fn(i)
			}
		}()
	}
	worker(func(int) {
		res, err := e.svc.ReadFile(ctx, execproto.FsReadFileParams{Path: e.uri("sw/f")})
		if err == nil {
			reads.Add(1)
			if b, _ := base64.StdEncoding.DecodeString(res.DataBase64); string(b) != "inside" {
				leaks.Add(1)
				t.Errorf("fs/readFile read %q", b)
			}
		}
	})
	worker(func(i int) {
		_, err := e.svc.WriteFile(ctx, execproto.FsWriteFileParams{Path: e.uri("sw/w"), DataBase64: base64.StdEncoding.EncodeToString([]byte("written"))})
		if err == nil {
			writes.Add(1)
		}
	})
	worker(func(i int) {
		dst := "copy" + string(rune('a'+i%2))
		_ = os.RemoveAll(e.path(dst))
		_, _ = e.svc.Copy(ctx, execproto.FsCopyParams{SourcePath: e.uri("sw/tree"), DestinationPath: e.uri(dst), Recursive: true})
		if b, err := os.ReadFile(e.path(dst + "/f")); err == nil && string(b) != "inside" {
			leaks.Add(1)
			t.Errorf("fs/copy copied %q from outside", b)
		}
	})
	worker(func(int) {
		_, _ = e.svc.CreateDirectory(ctx, execproto.FsCreateDirectoryParams{Path: e.uri("sw/newdir")})
		_, _ = e.svc.Remove(ctx, execproto.FsRemoveParams{Path: e.uri("sw/newdir")})
	})
	worker(func(int) {
		res, err := e.svc.ReadDirectory(ctx, execproto.FsReadDirectoryParams{Path: e.uri("sw/tree")})
		if err == nil {
			for _, en := range res.Entries {
				if en.FileName != "f" {
					t.Errorf("listing of sw/tree has %q", en.FileName)
				}
			}
		}
	})
	wg.Wait()
	close(sw.stop)
	<-sw.done
	for _, name := range []string{"w", "newdir"} {
		if _, err := os.Lstat(filepath.Join(outside, name)); err == nil {
			leaks.Add(1)
			t.Errorf("%s was created outside the root", name)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "f")); string(b) != "OUTSIDE" {
		t.Errorf("outside file changed: %q", b)
	}
	t.Logf("%d swaps, %d reads, %d writes succeeded, %d leaks", sw.swaps.Load(), reads.Load(), writes.Load(), leaks.Load())
	if reads.Load() == 0 || writes.Load() == 0 {
		t.Errorf("no read or write ever succeeded: the test proves nothing")
	}
	_ = strings.Contains
}
