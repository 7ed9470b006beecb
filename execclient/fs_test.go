//go:build unix

package execclient

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/codexd/codexd/execserver"
)

// inProcess is a client of a fresh in-process exec-server with cfg, made
// through InProcessConnector (which owns and closes the server).
func inProcess(t *testing.T, cfg execserver.Config) *Client {
	t.Helper()
	srv, err := execserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	conn := InProcessConnector(srv, Options{})
	if conn.Remote() || conn.URL() != "" {
		t.Fatalf("in-process connector says remote %q", conn.URL())
	}
	c, err := conn.Connect(testCtx(t))
	if err != nil {
		conn.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); conn.Close() })
	return c
}

// TestTypedFS: the typed fs API takes and gives native paths and bytes,
// and its errors keep their kind (errno, not-exist, permission, ELOOP).
func TestTypedFS(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	c := inProcess(t, execserver.Config{})
	f := filepath.Join(dir, "a", "b", "f.txt")
	if err := c.CreateDirectory(ctx, filepath.Dir(f), MkdirOptions{Parents: true}); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteFile(ctx, f, []byte("bytes\x00\xff"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, err := c.ReadFile(ctx, f); err != nil || string(b) != "bytes\x00\xff" {
		t.Fatalf("read %q %v", b, err)
	}
	if st, err := c.Stat(ctx, f, true); err != nil || !st.IsFile || st.IsDirectory || st.Size != 7 {
		t.Fatalf("stat %+v %v", st, err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "a"), link); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stat(ctx, link, false); !errors.Is(err, syscall.ELOOP) {
		t.Fatalf("no-follow stat of a link: %v", err)
	}
	if p, err := c.Canonicalize(ctx, filepath.Join(link, "b", "..", "b", "f.txt")); err != nil || p != f {
		t.Fatalf("canonicalize %q %v", p, err)
	}
	if err := c.WriteFile(ctx, filepath.Join(link, "x"), []byte("x"), WriteOptions{NoFollow: true}); err == nil {
		t.Fatal("no-follow write through a link succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "a", "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the no-follow write landed: %v", err)
	}
	if _, err := c.ReadFile(ctx, filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
	if err := c.Remove(ctx, filepath.Join(dir, "a"), RemoveOptions{}); !errors.Is(err, syscall.ENOTEMPTY) {
		t.Fatalf("remove non-empty: %v", err)
	}
	var pe *fs.PathError
	if err := c.WriteFile(ctx, filepath.Join(dir, "a"), nil, WriteOptions{}); !errors.As(err, &pe) || pe.Err.Error() != "Is a directory (os error 21)" {
		t.Fatalf("write onto a directory: %#v", err)
	}
	if err := c.Remove(ctx, f, RemoveOptions{}); err != nil {
		t.Fatal(err)
	}
	confined := inProcess(t, execserver.Config{Roots: []string{filepath.Join(dir, "a")}})
	if _, err := confined.ReadFile(ctx, link); !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("outside the roots: %v", err)
	}
}

// TestTokenTransport: a bearer token goes only over wss://, a Unix socket
// or to a loopback address; anything else is refused before dialling.
func TestTokenTransport(t *testing.T) {
	for url, ok := range map[string]bool{
		"ws://127.0.0.1:9": true, "ws://[::1]:9": true, "ws://localhost:9": true, "wss://example.com": true,
		"unix:///tmp/x.sock": true, "ws://example.com:9": false, "ws://10.0.0.1:9": false,
	} {
		_, err := URLConnector(url, Options{BearerToken: "tok"})
		if ok != (err == nil) {
			t.Errorf("%s: %v", url, err)
		}
		if err != nil && !strings.Contains(err.Error(), "secure transport") {
			t.Errorf("%s: %v", url, err)
		}
		if _, err := URLConnector(url, Options{}); err != nil {
			t.Errorf("%s without a token: %v", url, err)
		}
	}
}

func FuzzPathFromURI(f *testing.F) {
	for _, s := range []string{"file:///a/b", "file://x", "file:///a%20b", "file:///a%00", "/a", "file:///%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := PathFromURI(s)
		if err == nil && (!filepath.IsAbs(p) || strings.IndexByte(p, 0) >= 0) {
			t.Fatalf("%q -> %q", s, p)
		}
	})
}
