package fsops

import (
	"context"
	"encoding/base64"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/codexd/codexd/execproto"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// env is a Service confined to a fresh temporary root. Every test path is
// under that root: nothing here may touch a file the test did not create.
type env struct {
	t    *testing.T
	root string
	home string
	svc  *Service
}

func newEnv(t *testing.T, mutate ...func(*Config)) *env {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Roots: []string{root}, HomeDir: home}
	for _, f := range mutate {
		f(&cfg)
	}
	svc, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Release() })
	return &env{t: t, root: root, home: home, svc: svc}
}

func (e *env) path(rel string) string { return filepath.Join(e.root, rel) }
func (e *env) uri(rel string) string  { return execproto.PathURI(e.path(rel)) }

func (e *env) write(rel, content string) {
	e.t.Helper()
	p := e.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) symlink(target, rel string) {
	e.t.Helper()
	if err := os.Symlink(target, e.path(rel)); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) read(rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(e.path(rel))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

func wantCode(t *testing.T, err error, code int64, msgPart string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want error %d %q, got success", code, msgPart)
	}
	var fe *Error
	if !errors.As(err, &fe) {
		t.Fatalf("want *Error, got %T %v", err, err)
	}
	if fe.Code != code || !strings.Contains(fe.Message, msgPart) {
		t.Fatalf("want %d containing %q, got %d %q", code, msgPart, fe.Code, fe.Message)
	}
}

func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

var ctx = context.Background()

func TestParsePathURI(t *testing.T) {
	good := map[string]string{
		"file:///a/b":             "/a/b",
		"file://localhost/a":      "/a",
		"FILE:///a":               "/a",
		"file:/a":                 "/a",
		"file:///a%20b/c%25d":     "/a b/c%d",
		"file:///a/./b/../c":      "/a/c",
		"file:///a/b/../../../..": "/",
		"file:///a/b/..":          "/a/",
		"file://":                 "/",
		"file:///bad%zzescape":    "/bad%zzescape",
		// What Codex's URL parser makes of odd forms (observed on 0.169).
		"file:relative":        "/relative",
		"file:":                "/",
		"file:..":              "/",
		"file:/../a":           "/a",
		" file:///a \n":        "/a",
		"\x01file:///a\x00":    "/a",
		"file:///a\tb":         "/ab",
		"file:///a\\b":         "/a/b",
		"file:////a":           "//a",
		"file://%6cocalhost/a": "/a",
		"file://LOCALHOST/a":   "/a",
		"file:///a/%2e./b":     "/b",
		"file:///a%2Fb":        "/a/b",
	}
	for in, want := range good {
		got, err := ParsePathURI(in)
		if err != nil || got != want {
			t.Errorf("ParsePathURI(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := []struct {
		in   string
		code int64
		msg  string
	}{
		{"", CodeInvalidParams, "invalid URI: relative URL without a base"},
		{"/tmp/x", CodeInvalidParams, "invalid URI: relative URL without a base"},
		{"http://x/a", CodeInvalidParams, "unsupported path URI scheme `http`"},
		{"file:///a?q=1", CodeInvalidParams, "query parameters are not allowed in path URIs"},
		{"file:///a#f", CodeInvalidParams, "fragments are not allowed in path URIs"},
		{"file://relative/x", CodeInvalidRequest, "'file://relative/x' is invalid on 'linux'"},
		{"file:///a%00b", CodeInvalidParams, "'file:///a%00b' is invalid on 'linux'"},
		{"file:?x", CodeInvalidParams, "query parameters are not allowed in path URIs"},
		{"file:///a#", CodeInvalidParams, "fragments are not allowed in path URIs"},
		{"file://[::1]/a", CodeInvalidRequest, "'file://[::1]/a' is invalid on 'linux'"},
		{"file://127.0.0.1/a", CodeInvalidRequest, "'file://127.0.0.1/a' is invalid on 'linux'"},
		{"file://LocalHost./a", CodeInvalidRequest, "'file://localhost./a' is invalid on 'linux'"},
		{"file:\\\\tmp\\a", CodeInvalidRequest, "'file://tmp/a' is invalid on 'linux'"},
		{"file:C:/x", CodeInvalidRequest, "'file:///C:/x' is invalid on 'linux'"},
		{"file:///C:/x", CodeInvalidRequest, "'file:///C:/x' is invalid on 'linux'"},
		{"file://user@localhost/a", CodeInvalidParams, "invalid URI: invalid international domain name"},
		{"file://localhost:80/a", CodeInvalidParams, "invalid URI: invalid international domain name"},
		{"file://a b/a", CodeInvalidParams, "invalid URI: invalid international domain name"},
	}
	for _, c := range bad {
		_, err := ParsePathURI(c.in)
		wantCode(t, err, c.code, c.msg)
	}
}

func TestPathURIRoundTrip(t *testing.T) {
	for _, p := range []string{"/", "/a b/c%d#e?f{g}h\\i", "/ü/![x]'()*+,;=@&$~^|", "/tab\there"} {
		u := execproto.PathURI(p)
		got, err := ParsePathURI(u)
		if err != nil || got != p {
			t.Errorf("round trip %q via %q = %q, %v", p, u, got, err)
		}
	}
	if got := execproto.PathURI("/a b/c%d#ü"); got != "file:///a%20b/c%25d%23%C3%BC" {
		t.Errorf("PathURI = %q", got)
	}
}

func TestNewRejectsBadRoots(t *testing.T) {
	dir := t.TempDir()
	if _, err := New(Config{Roots: []string{filepath.Join(dir, "missing")}}); err == nil {
		t.Error("missing root accepted")
	}
	f := filepath.Join(dir, "file")
	ok(t, os.WriteFile(f, nil, 0o644))
	if _, err := New(Config{Roots: []string{f}}); err == nil {
		t.Error("file root accepted")
	}
}

func TestReadFile(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxReadFileBytes = 8 })
	e.write("a.txt", "hello")
	e.write("big.txt", "0123456789")
	e.symlink("a.txt", "link")
	ok(t, os.Mkdir(e.path("dir"), 0o755))
	ok(t, syscall.Mkfifo(e.path("fifo"), 0o644))

	res, err := e.svc.ReadFile(ctx, execproto.FsReadFileParams{Path: e.uri("a.txt")})
	ok(t, err)
	if res.DataBase64 != base64.StdEncoding.EncodeToString([]byte("hello")) {
		t.Errorf("data = %q", res.DataBase64)
	}
	res, err = e.svc.ReadFile(ctx, execproto.FsReadFileParams{Path: e.uri("link")})
	ok(t, err)
	if res.DataBase64 != "aGVsbG8=" {
		t.Errorf("via link = %q", res.DataBase64)
	}

	_, err = e.svc.ReadFile(ctx, execproto.FsReadFileParams{Path: e.uri("nope")})
	wantCode(t, err, CodeNotFound, "No such file or directory (os error 2)")
	_, err = e.svc.ReadFile(ctx, execproto.FsReadFileParams{Path: e.uri("dir")})
	wantCode(t, err, CodeInvalidRequest, "path `"+e.path("dir")+"` is not a file")
	_, err = e.svc.ReadFile(ctx, execproto.FsReadFileParams{Path: e.uri("fifo")})
	wantCode(t, err, CodeInvalidRequest, "is not a file")
	_, err = e.svc.ReadFile(ctx, execproto.FsReadFileParams{Path: e.uri("big.txt")})
	wantCode(t, err, CodeInvalidRequest, "file is too large to read: limit is 8 bytes")
	// Codex 0.169 opens with O_NOFOLLOW: a final symlink is ELOOP, a
	// directory on the way that is a symlink ENOTDIR.
	_, err = e.svc.ReadFile(ctx, execproto.FsReadFileParams{Path: e.uri("link"), FollowSymlinks: ptr(false)})
	wantCode(t, err, CodeInternalError, "Symbolic link loop (os error 40)")
	_, err = e.svc.ReadFile(ctx, execproto.FsReadFileParams{Path: e.uri("dir"), FollowSymlinks: ptr(false)})
	wantCode(t, err, CodeInvalidRequest, "path is not a regular file")
	_, err = e.svc.ReadFile(ctx, execproto.FsReadFileParams{Path: "relative/path"})
	wantCode(t, err, CodeInvalidParams, "invalid URI")

	if DefaultMaxReadFileBytes != 512<<20 {
		t.Errorf("default limit %d", DefaultMaxReadFileBytes)
	}
}

func TestWriteFile(t *testing.T) {
	e := newEnv(t)
	e.write("old.txt", "a much longer old content")
	_, err := e.svc.WriteFile(ctx, execproto.FsWriteFileParams{Path: e.uri("new.txt"), DataBase64: "aGk="})
	ok(t, err)
	if got := e.read("new.txt"); got != "hi" {
		t.Errorf("new.txt = %q", got)
	}
	_, err = e.svc.WriteFile(ctx, execproto.FsWriteFileParams{Path: e.uri("old.txt"), DataBase64: "aGk="})
	ok(t, err)
	if got := e.read("old.txt"); got != "hi" {
		t.Errorf("old.txt = %q", got)
	}
	_, err = e.svc.WriteFile(ctx, execproto.FsWriteFileParams{Path: e.uri("x.txt"), DataBase64: "!!"})
	wantCode(t, err, CodeInvalidRequest, "fs/writeFile requires valid base64 dataBase64: ")
	_, err = e.svc.WriteFile(ctx, execproto.FsWriteFileParams{Path: e.uri("missing/x.txt"), DataBase64: ""})
	wantCode(t, err, CodeNotFound, "No such file or directory")
	e.symlink("old.txt", "link")
	_, err = e.svc.WriteFile(ctx, execproto.FsWriteFileParams{Path: e.uri("link"), DataBase64: "eA==", FollowSymlinks: ptr(false)})
	wantCode(t, err, CodeInternalError, "Symbolic link loop (os error 40)")
	// Strict base64, as Codex's decoder: no bits past the end.
	_, err = e.svc.WriteFile(ctx, execproto.FsWriteFileParams{Path: e.uri("x.txt"), DataBase64: "aGl="})
	wantCode(t, err, CodeInvalidRequest, "fs/writeFile requires valid base64 dataBase64: the last character")
	_, err = e.svc.WriteFile(ctx, execproto.FsWriteFileParams{Path: e.uri("link"), DataBase64: "eA=="})
	ok(t, err)
	if got := e.read("old.txt"); got != "x" {
		t.Errorf("through link = %q", got)
	}
}

func TestCreateDirectory(t *testing.T) {
	e := newEnv(t)
	_, err := e.svc.CreateDirectory(ctx, execproto.FsCreateDirectoryParams{Path: e.uri("a/b/c")})
	ok(t, err)
	if fi, err := os.Stat(e.path("a/b/c")); err != nil || !fi.IsDir() {
		t.Fatalf("a/b/c not created: %v", err)
	}
	_, err = e.svc.CreateDirectory(ctx, execproto.FsCreateDirectoryParams{Path: e.uri("a/b/c")})
	ok(t, err)
	_, err = e.svc.CreateDirectory(ctx, execproto.FsCreateDirectoryParams{Path: e.uri("a/b/c"), Recursive: ptr(false)})
	wantCode(t, err, CodeInternalError, "File exists (os error 17)")
	_, err = e.svc.CreateDirectory(ctx, execproto.FsCreateDirectoryParams{Path: e.uri("x/y"), Recursive: ptr(false)})
	wantCode(t, err, CodeNotFound, "No such file or directory (os error 2)")
	_, err = e.svc.CreateDirectory(ctx, execproto.FsCreateDirectoryParams{Path: e.uri("single"), Recursive: ptr(false)})
	ok(t, err)
}

func TestGetMetadata(t *testing.T) {
	e := newEnv(t)
	e.write("f", "12345")
	e.symlink("f", "link")
	e.symlink("nowhere", "dangling")
	md, err := e.svc.GetMetadata(ctx, execproto.FsGetMetadataParams{Path: e.uri("f")})
	ok(t, err)
	if !md.IsFile || md.IsDirectory || md.IsSymlink || md.Size != 5 || md.ModifiedAtMs == 0 {
		t.Errorf("file metadata %+v", md)
	}
	md, err = e.svc.GetMetadata(ctx, execproto.FsGetMetadataParams{Path: e.uri("link")})
	ok(t, err)
	if !md.IsFile || !md.IsSymlink || md.Size != 5 {
		t.Errorf("link metadata %+v", md)
	}
	md, err = e.svc.GetMetadata(ctx, execproto.FsGetMetadataParams{Path: execproto.PathURI(e.root)})
	ok(t, err)
	if !md.IsDirectory || md.IsFile {
		t.Errorf("dir metadata %+v", md)
	}
	_, err = e.svc.GetMetadata(ctx, execproto.FsGetMetadataParams{Path: e.uri("dangling")})
	wantCode(t, err, CodeNotFound, "No such file or directory")
	_, err = e.svc.GetMetadata(ctx, execproto.FsGetMetadataParams{Path: e.uri("link"), FollowSymlinks: ptr(false)})
	wantCode(t, err, CodeInvalidRequest, "path contains a symbolic link")
	md, err = e.svc.GetMetadata(ctx, execproto.FsGetMetadataParams{Path: e.uri("f"), FollowSymlinks: ptr(false)})
	ok(t, err)
	if !md.IsFile {
		t.Errorf("no-follow file metadata %+v", md)
	}
}

func TestReadDirectory(t *testing.T) {
	e := newEnv(t)
	e.write("d/a.txt", "")
	ok(t, os.Mkdir(e.path("d/sub"), 0o755))
	e.symlink("a.txt", "d/link")
	e.symlink("nowhere", "d/dangling")
	res, err := e.svc.ReadDirectory(ctx, execproto.FsReadDirectoryParams{Path: e.uri("d")})
	ok(t, err)
	got := map[string]execproto.FsReadDirectoryEntry{}
	for _, en := range res.Entries {
		got[en.FileName] = en
	}
	if len(got) != 3 || !got["a.txt"].IsFile || !got["sub"].IsDirectory || !got["link"].IsFile {
		t.Errorf("entries %+v", res.Entries)
	}
	empty, err := e.svc.ReadDirectory(ctx, execproto.FsReadDirectoryParams{Path: e.uri("d/sub")})
	ok(t, err)
	if empty.Entries == nil {
		t.Error("entries of an empty directory must be [] not null")
	}
	_, err = e.svc.ReadDirectory(ctx, execproto.FsReadDirectoryParams{Path: e.uri("d/a.txt")})
	wantCode(t, err, CodeInternalError, "Not a directory (os error 20)")
	_, err = e.svc.ReadDirectory(ctx, execproto.FsReadDirectoryParams{Path: e.uri("missing")})
	wantCode(t, err, CodeNotFound, "No such file or directory")
}

func TestCanonicalize(t *testing.T) {
	e := newEnv(t)
	e.write("d/a.txt", "")
	e.symlink("d", "dl")
	res, err := e.svc.Canonicalize(ctx, execproto.FsCanonicalizeParams{Path: e.uri("dl") + "/./a.txt"})
	ok(t, err)
	if res.Path != e.uri("d/a.txt") {
		t.Errorf("canonical = %q", res.Path)
	}
	_, err = e.svc.Canonicalize(ctx, execproto.FsCanonicalizeParams{Path: e.uri("nope")})
	wantCode(t, err, CodeNotFound, "No such file or directory")
}

func TestRemove(t *testing.T) {
	e := newEnv(t)
	e.write("f", "x")
	e.write("tree/a/b/c", "x")
	e.write("full/x", "x")
	e.write("target/keep", "x")
	e.symlink("target", "link")

	_, err := e.svc.Remove(ctx, execproto.FsRemoveParams{Path: e.uri("f")})
	ok(t, err)
	_, err = e.svc.Remove(ctx, execproto.FsRemoveParams{Path: e.uri("tree")})
	ok(t, err)
	for _, p := range []string{"f", "tree"} {
		if _, err := os.Lstat(e.path(p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still there: %v", p, err)
		}
	}
	_, err = e.svc.Remove(ctx, execproto.FsRemoveParams{Path: e.uri("full"), Recursive: ptr(false)})
	wantCode(t, err, CodeInternalError, "Directory not empty (os error 39)")
	_, err = e.svc.Remove(ctx, execproto.FsRemoveParams{Path: e.uri("gone")})
	ok(t, err)
	_, err = e.svc.Remove(ctx, execproto.FsRemoveParams{Path: e.uri("gone"), Force: ptr(false)})
	wantCode(t, err, CodeNotFound, "No such file or directory")

	// A symlink to a directory goes, its target stays.
	_, err = e.svc.Remove(ctx, execproto.FsRemoveParams{Path: e.uri("link")})
	ok(t, err)
	if e.read("target/keep") != "x" {
		t.Error("target of removed link damaged")
	}
	// Codex refuses a recursive (the default) no-follow removal of any
	// path, before looking at it.
	_, err = e.svc.Remove(ctx, execproto.FsRemoveParams{Path: e.uri("full"), FollowSymlinks: ptr(false)})
	wantCode(t, err, CodeInternalError, "recursive no-follow removal is unsupported")
	_, err = e.svc.Remove(ctx, execproto.FsRemoveParams{Path: e.uri("full/x"), FollowSymlinks: ptr(false)})
	wantCode(t, err, CodeInternalError, "recursive no-follow removal is unsupported")
	_, err = e.svc.Remove(ctx, execproto.FsRemoveParams{Path: e.uri("full/x"), FollowSymlinks: ptr(false), Recursive: ptr(false)})
	ok(t, err)
}

func TestRemoveRefusals(t *testing.T) {
	e := newEnv(t)
	e.write("home/precious", "x")
	e.write("mnt/inside", "x")
	e.write("holder/mnt2/inside", "x")
	mountinfo := filepath.Join(t.TempDir(), "mountinfo")
	ok(t, os.WriteFile(mountinfo, []byte(
		"22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"+
			"23 22 0:5 / "+strings.ReplaceAll(e.path("mnt"), " ", `\040`)+" rw - tmpfs t rw\n"+
			"24 22 0:6 / "+e.path("holder/mnt2")+" rw - tmpfs t rw\n"), 0o644))
	e.svc.mountInfo = mountinfo

	// "/" reached through "..": refused (by the roots) without touching it.
	up := e.uri("") + strings.Repeat("/..", strings.Count(e.root, "/")+2)
	if p, err := ParsePathURI(up); err != nil || p != "/" {
		t.Fatalf("%q parses to %q, %v; want /", up, p, err)
	}
	_, err := e.svc.Remove(ctx, execproto.FsRemoveParams{Path: up})
	wantCode(t, err, CodeInvalidRequest, "outside the allowed roots")
	_, err = e.svc.Remove(ctx, execproto.FsRemoveParams{Path: execproto.PathURI(e.root)})
	wantCode(t, err, CodeInvalidRequest, "it is or contains the root")
	_, err = e.svc.Remove(ctx, execproto.FsRemoveParams{Path: e.uri("home")})
	wantCode(t, err, CodeInvalidRequest, "it is or contains the home directory")
	_, err = e.svc.Remove(ctx, execproto.FsRemoveParams{Path: e.uri("mnt")})
	wantCode(t, err, CodeInvalidRequest, "it is a mount point")
	_, err = e.svc.Remove(ctx, execproto.FsRemoveParams{Path: e.uri("holder")})
	wantCode(t, err, CodeInvalidRequest, "it contains the mount point")
	for _, p := range []string{"home/precious", "mnt/inside", "holder/mnt2/inside"} {
		if e.read(p) != "x" {
			t.Errorf("%s damaged", p)
		}
	}
	// Files inside a mount point are fair game.
	_, err = e.svc.Remove(ctx, execproto.FsRemoveParams{Path: e.uri("mnt/inside")})
	ok(t, err)

	// The guard itself, called directly so that nothing can be removed.
	bare := &Service{home: e.home, mountInfo: mountinfo}
	wantCode(t, bare.protectRemoval("/", true), CodeInvalidRequest, "refusing to remove `/`")
	wantCode(t, bare.protectRemoval(filepath.Dir(e.home), true), CodeInvalidRequest, "home directory")
	bare.mountInfo = filepath.Join(t.TempDir(), "missing")
	wantCode(t, bare.protectRemoval(e.path("x"), true), CodeInternalError, "cannot read the mount table")
}

func TestCopy(t *testing.T) {
	e := newEnv(t)
	e.write("src/a.txt", "A")
	e.write("src/sub/b.txt", "B")
	ok(t, os.Chmod(e.path("src/a.txt"), 0o600))
	e.symlink("a.txt", "src/link")
	ok(t, syscall.Mkfifo(e.path("fifo"), 0o644))

	_, err := e.svc.Copy(ctx, execproto.FsCopyParams{SourcePath: e.uri("src/a.txt"), DestinationPath: e.uri("copy.txt")})
	ok(t, err)
	if e.read("copy.txt") != "A" {
		t.Error("file copy content")
	}
	if fi, _ := os.Stat(e.path("copy.txt")); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	_, err = e.svc.Copy(ctx, execproto.FsCopyParams{SourcePath: e.uri("src"), DestinationPath: e.uri("dst")})
	wantCode(t, err, CodeInvalidRequest, "fs/copy requires recursive: true when sourcePath is a directory")
	_, err = e.svc.Copy(ctx, execproto.FsCopyParams{SourcePath: e.uri("src"), DestinationPath: e.uri("dst"), Recursive: true})
	ok(t, err)
	if e.read("dst/sub/b.txt") != "B" {
		t.Error("tree copy content")
	}
	if target, err := os.Readlink(e.path("dst/link")); err != nil || target != "a.txt" {
		t.Errorf("symlink copy: %q %v", target, err)
	}
	_, err = e.svc.Copy(ctx, execproto.FsCopyParams{SourcePath: e.uri("src"), DestinationPath: e.uri("src/sub/deeper"), Recursive: true})
	wantCode(t, err, CodeInvalidRequest, "fs/copy cannot copy a directory to itself or one of its descendants")
	_, err = e.svc.Copy(ctx, execproto.FsCopyParams{SourcePath: e.uri("src/link"), DestinationPath: e.uri("link2")})
	ok(t, err)
	if target, _ := os.Readlink(e.path("link2")); target != "a.txt" {
		t.Errorf("top-level symlink copy = %q", target)
	}
	_, err = e.svc.Copy(ctx, execproto.FsCopyParams{SourcePath: e.uri("fifo"), DestinationPath: e.uri("fifo2")})
	wantCode(t, err, CodeInvalidRequest, "fs/copy only supports regular files, directories, and symlinks")
	_, err = e.svc.Copy(ctx, execproto.FsCopyParams{SourcePath: e.uri("missing"), DestinationPath: e.uri("m2")})
	wantCode(t, err, CodeNotFound, "No such file or directory")
}

func TestCopyOntoItselfIsRefused(t *testing.T) {
	e := newEnv(t)
	e.write("f", "precious")
	ok(t, os.Link(e.path("f"), e.path("hard")))
	e.symlink("f", "soft")
	ok(t, os.Mkdir(e.path("d"), 0o755))
	for _, dst := range []string{"f", "hard", "soft", "d/../f"} {
		_, err := e.svc.Copy(ctx, execproto.FsCopyParams{SourcePath: e.uri("f"), DestinationPath: e.uri(dst)})
		wantCode(t, err, CodeInvalidRequest, "cannot copy a file onto itself")
	}
	if e.read("f") != "precious" {
		t.Error("source truncated")
	}
}

func TestRootsConfinement(t *testing.T) {
	e := newEnv(t)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	ok(t, err)
	ok(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644))
	e.symlink(outside, "escape")
	e.symlink(filepath.Join(outside, "secret"), "secretlink")

	cases := []string{
		execproto.PathURI(filepath.Join(outside, "secret")),
		e.uri("escape") + "/secret",
		e.uri("secretlink"),
		execproto.PathURI(e.root) + "/../" + filepath.Base(outside) + "/secret",
	}
	for _, u := range cases {
		_, err := e.svc.ReadFile(ctx, execproto.FsReadFileParams{Path: u})
		wantCode(t, err, CodeInvalidRequest, "is outside the allowed roots: "+e.root)
	}
	_, err = e.svc.WriteFile(ctx, execproto.FsWriteFileParams{Path: e.uri("escape") + "/new", DataBase64: ""})
	wantCode(t, err, CodeInvalidRequest, "outside the allowed roots")
	_, err = e.svc.Copy(ctx, execproto.FsCopyParams{SourcePath: e.uri("escape") + "/secret", DestinationPath: e.uri("stolen")})
	wantCode(t, err, CodeInvalidRequest, "outside the allowed roots")
	_, err = e.svc.Remove(ctx, execproto.FsRemoveParams{Path: e.uri("escape") + "/secret"})
	wantCode(t, err, CodeInvalidRequest, "outside the allowed roots")
	_, err = e.svc.GetMetadata(ctx, execproto.FsGetMetadataParams{Path: e.uri("secretlink")})
	wantCode(t, err, CodeInvalidRequest, "outside the allowed roots")
	if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "s" {
		t.Error("outside file touched")
	}
	// Removing the link itself stays inside the root.
	_, err = e.svc.Remove(ctx, execproto.FsRemoveParams{Path: e.uri("secretlink")})
	ok(t, err)

	wantCode(t, e.svc.CheckPath(outside), CodeInvalidRequest, "path `"+outside+"` is outside the allowed roots")
	wantCode(t, e.svc.CheckPath(e.path("escape")), CodeInvalidRequest, "resolved to `"+outside+"`")
	ok(t, e.svc.CheckPath(e.path("not/yet/created")))
	wantCode(t, e.svc.CheckPath("relative"), CodeInvalidRequest, "not absolute")
	if p, err := e.svc.CheckURI(e.uri("x")); err != nil || p != e.path("x") {
		t.Errorf("CheckURI = %q, %v", p, err)
	}
	if got := e.svc.Roots(); len(got) != 1 || got[0] != e.root {
		t.Errorf("Roots = %v", got)
	}
}

func TestHandles(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "hello\n")
	ok(t, os.Mkdir(e.path("dir"), 0o755))
	c := e.svc.NewConnState(nil)
	defer c.Close()

	res, err := e.svc.Open(ctx, c, execproto.FsOpenParams{HandleID: "h1", Path: e.uri("a.txt")})
	ok(t, err)
	if res.HandleID != "h1" {
		t.Errorf("handle id %q", res.HandleID)
	}
	blk, err := e.svc.ReadBlock(ctx, c, execproto.FsReadBlockParams{HandleID: "h1", Offset: 0, Len: 3})
	ok(t, err)
	if string(blk.Chunk) != "hel" || blk.EOF {
		t.Errorf("block 1 %q %v", blk.Chunk, blk.EOF)
	}
	blk, err = e.svc.ReadBlock(ctx, c, execproto.FsReadBlockParams{HandleID: "h1", Offset: 3, Len: 100})
	ok(t, err)
	if string(blk.Chunk) != "lo\n" || !blk.EOF {
		t.Errorf("block 2 %q %v", blk.Chunk, blk.EOF)
	}
	blk, err = e.svc.ReadBlock(ctx, c, execproto.FsReadBlockParams{HandleID: "h1", Offset: 100, Len: 5})
	ok(t, err)
	if len(blk.Chunk) != 0 || blk.Chunk == nil || !blk.EOF {
		t.Errorf("past end %q %v", blk.Chunk, blk.EOF)
	}
	for _, n := range []uint64{0, DefaultMaxBlockBytes + 1} {
		_, err = e.svc.ReadBlock(ctx, c, execproto.FsReadBlockParams{HandleID: "h1", Len: n})
		wantCode(t, err, CodeInvalidRequest, "file read block length must be between 1 and 1048576")
	}
	_, err = e.svc.ReadBlock(ctx, c, execproto.FsReadBlockParams{HandleID: "zz", Len: 1})
	wantCode(t, err, CodeNotFound, "unknown file handle `zz`")
	long := strings.Repeat("x", 33)
	_, err = e.svc.ReadBlock(ctx, c, execproto.FsReadBlockParams{HandleID: long, Len: 1})
	wantCode(t, err, CodeInvalidRequest, "file handle ID must not exceed 32 bytes")
	_, err = e.svc.Open(ctx, c, execproto.FsOpenParams{HandleID: long, Path: e.uri("a.txt")})
	wantCode(t, err, CodeInvalidRequest, "file handle ID must not exceed 32 bytes")
	_, err = e.svc.Close(ctx, c, execproto.FsCloseParams{HandleID: long})
	wantCode(t, err, CodeInvalidRequest, "file handle ID must not exceed 32 bytes")
	_, err = e.svc.Open(ctx, c, execproto.FsOpenParams{HandleID: "h1", Path: e.uri("a.txt")})
	wantCode(t, err, CodeInvalidRequest, "file handle `h1` already exists")
	_, err = e.svc.Open(ctx, c, execproto.FsOpenParams{HandleID: "d", Path: e.uri("dir")})
	wantCode(t, err, CodeInvalidRequest, "is not a file")
	_, err = e.svc.Open(ctx, c, execproto.FsOpenParams{HandleID: "m", Path: e.uri("missing")})
	wantCode(t, err, CodeNotFound, "No such file or directory")
	_, err = e.svc.Open(ctx, c, execproto.FsOpenParams{HandleID: "b", Path: e.uri("a.txt"), Mode: "bogus"})
	wantCode(t, err, CodeInvalidParams, "unknown variant `bogus`, expected `read` or `replace`")
	// Codex writes to the read-only descriptor: EBADF, and the handle
	// stays open.
	_, err = e.svc.WriteBlock(ctx, c, execproto.FsWriteBlockParams{HandleID: "h1", Chunk: []byte("x")})
	wantCode(t, err, CodeInternalError, "Bad file descriptor (os error 9)")
	_, err = e.svc.ReadBlock(ctx, c, execproto.FsReadBlockParams{HandleID: "h1", Len: 1})
	ok(t, err)

	_, err = e.svc.Close(ctx, c, execproto.FsCloseParams{HandleID: "h1"})
	ok(t, err)
	_, err = e.svc.Close(ctx, c, execproto.FsCloseParams{HandleID: "h1"})
	ok(t, err)
	_, err = e.svc.ReadBlock(ctx, c, execproto.FsReadBlockParams{HandleID: "h1", Len: 1})
	wantCode(t, err, CodeNotFound, "unknown file handle `h1`")
}

func TestWriteBlock(t *testing.T) {
	e := newEnv(t)
	e.write("out.txt", "old content that is long")
	c := e.svc.NewConnState(nil)
	defer c.Close()
	_, err := e.svc.Open(ctx, c, execproto.FsOpenParams{HandleID: "w", Path: e.uri("out.txt"), Mode: execproto.FsOpenReplace})
	ok(t, err)
	if e.read("out.txt") != "" {
		t.Error("replace did not truncate")
	}
	_, err = e.svc.WriteBlock(ctx, c, execproto.FsWriteBlockParams{HandleID: "w", Offset: 0, Chunk: []byte("hello")})
	ok(t, err)
	_, err = e.svc.WriteBlock(ctx, c, execproto.FsWriteBlockParams{HandleID: "w", Offset: 10, Chunk: []byte("hello")})
	ok(t, err)
	for _, chunk := range [][]byte{{}, make([]byte, DefaultMaxBlockBytes+1)} {
		_, err = e.svc.WriteBlock(ctx, c, execproto.FsWriteBlockParams{HandleID: "w", Chunk: chunk})
		wantCode(t, err, CodeInvalidRequest, "file write block length must be between 1 and 1048576")
	}
	_, err = e.svc.WriteBlock(ctx, c, execproto.FsWriteBlockParams{HandleID: "w", Offset: math.MaxInt64, Chunk: []byte("x")})
	wantCode(t, err, CodeInvalidRequest, "file write range exceeds the signed 64-bit file offset limit")
	_, err = e.svc.WriteBlock(ctx, c, execproto.FsWriteBlockParams{HandleID: "nope", Chunk: []byte("x")})
	wantCode(t, err, CodeNotFound, "unknown file handle `nope`")
	_, err = e.svc.Close(ctx, c, execproto.FsCloseParams{HandleID: "w"})
	ok(t, err)
	if got := e.read("out.txt"); got != "hello\x00\x00\x00\x00\x00hello" {
		t.Errorf("written %q", got)
	}
	_, err = e.svc.Open(ctx, c, execproto.FsOpenParams{HandleID: "n", Path: e.uri("new/x"), Mode: execproto.FsOpenReplace})
	wantCode(t, err, CodeNotFound, "No such file or directory")
}

func TestHandleLimitAndConnClose(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "a")
	c := e.svc.NewConnState(nil)
	for i := 0; i < DefaultMaxHandles; i++ {
		_, err := e.svc.Open(ctx, c, execproto.FsOpenParams{HandleID: strings.Repeat("h", i%30+1) + string(rune('a'+i/30)), Path: e.uri("a.txt")})
		ok(t, err)
	}
	_, err := e.svc.Open(ctx, c, execproto.FsOpenParams{HandleID: "one-more", Path: e.uri("a.txt")})
	wantCode(t, err, CodeInvalidRequest, "at most 128 file handles may be open per connection")
	// Another connection has its own budget.
	c2 := e.svc.NewConnState(nil)
	_, err = e.svc.Open(ctx, c2, execproto.FsOpenParams{HandleID: "one-more", Path: e.uri("a.txt")})
	ok(t, err)
	ok(t, c2.Close())

	ok(t, c.Close())
	ok(t, c.Close())
	_, err = e.svc.ReadBlock(ctx, c, execproto.FsReadBlockParams{HandleID: "ha", Len: 1})
	wantCode(t, err, CodeInternalError, "connection is closed")
	_, err = e.svc.Open(ctx, c, execproto.FsOpenParams{HandleID: "x", Path: e.uri("a.txt")})
	wantCode(t, err, CodeInternalError, "connection is closed")
}

func TestOSErrorMessages(t *testing.T) {
	cases := map[syscall.Errno]struct {
		code int64
		msg  string
	}{
		syscall.ENOENT:    {CodeNotFound, "No such file or directory (os error 2)"},
		syscall.EACCES:    {CodeInvalidRequest, "Permission denied (os error 13)"},
		syscall.ELOOP:     {CodeInternalError, "Symbolic link loop (os error 40)"},
		syscall.EISDIR:    {CodeInternalError, "Is a directory (os error 21)"},
		syscall.ENOTEMPTY: {CodeInternalError, "Directory not empty (os error 39)"},
	}
	for errno, want := range cases {
		err := osError(&os.PathError{Op: "open", Path: "/x", Err: errno})
		wantCode(t, err, want.code, want.msg)
	}
	if osError(nil) != nil {
		t.Error("osError(nil) != nil")
	}
}

// A read that fails closes its handle in Codex 0.169; a write that fails
// does not.
func TestBlockFailuresLikeCodex(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "0123456789")
	c := e.svc.NewConnState(nil)
	defer c.Close()
	_, err := e.svc.Open(ctx, c, execproto.FsOpenParams{HandleID: "w", Path: e.uri("out"), Mode: execproto.FsOpenReplace})
	ok(t, err)
	_, err = e.svc.ReadBlock(ctx, c, execproto.FsReadBlockParams{HandleID: "w", Len: 1})
	wantCode(t, err, CodeInternalError, "Bad file descriptor (os error 9)")
	_, err = e.svc.WriteBlock(ctx, c, execproto.FsWriteBlockParams{HandleID: "w", Chunk: []byte("x")})
	wantCode(t, err, CodeNotFound, "unknown file handle `w`")

	_, err = e.svc.Open(ctx, c, execproto.FsOpenParams{HandleID: "r", Path: e.uri("a.txt")})
	ok(t, err)
	_, err = e.svc.ReadBlock(ctx, c, execproto.FsReadBlockParams{HandleID: "r", Len: 0})
	wantCode(t, err, CodeInvalidRequest, "file read block length must be between 1 and 1048576")
	res, err := e.svc.ReadBlock(ctx, c, execproto.FsReadBlockParams{HandleID: "r", Offset: math.MaxInt64 - 1, Len: 1})
	ok(t, err)
	if len(res.Chunk) != 0 || !res.EOF {
		t.Errorf("read far past the end: %+v", res)
	}
	_, err = e.svc.ReadBlock(ctx, c, execproto.FsReadBlockParams{HandleID: "r", Offset: math.MaxInt64 + 1, Len: 1})
	wantCode(t, err, CodeInvalidRequest, "Invalid argument (os error 22)")
	_, err = e.svc.ReadBlock(ctx, c, execproto.FsReadBlockParams{HandleID: "r", Len: 1})
	wantCode(t, err, CodeNotFound, "unknown file handle `r`")
	// The id is free again.
	_, err = e.svc.Open(ctx, c, execproto.FsOpenParams{HandleID: "r", Path: e.uri("a.txt")})
	ok(t, err)
}
