package fsops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codexd/codexd/execproto"
)

func walkOpts(depth, dirs, entries uint64, follow bool) execproto.WalkOptions {
	return execproto.WalkOptions{MaxDepth: depth, MaxDirectories: dirs, MaxEntries: entries, FollowDirectorySymlinks: follow}
}

func (e *env) walk(rel string, o execproto.WalkOptions) (execproto.FsWalkResponse, error) {
	return e.svc.Walk(ctx, execproto.FsWalkParams{Path: e.uri(rel), Options: o})
}

func (e *env) shown(res execproto.FsWalkResponse) string {
	var parts []string
	prefix := e.uri("") + "/"
	for _, en := range res.Entries {
		parts = append(parts, strings.TrimPrefix(en.Path, prefix)+":"+string(en.Kind))
	}
	return strings.Join(parts, " ")
}

func TestWalk(t *testing.T) {
	e := newEnv(t)
	e.write("d/b.txt", "")
	e.write("d/a.txt", "")
	e.write("d/sub/c.txt", "")
	e.write("d/sub/deeper/e.txt", "")
	e.write("d/.hid/x.txt", "")
	e.symlink("a.txt", "d/filelink")
	e.symlink("nowhere", "d/dangling")
	e.symlink("sub", "d/dirlink")
	e.symlink("..", "d/sub/up")

	res, err := e.walk("d", walkOpts(5, 100, 100, false))
	ok(t, err)
	want := "d/.hid:directory d/a.txt:file d/b.txt:file d/sub:directory d/.hid/x.txt:file d/sub/c.txt:file d/sub/deeper:directory d/sub/deeper/e.txt:file"
	if got := e.shown(res); got != want || res.Truncated || len(res.Errors) != 0 {
		t.Errorf("walk:\n got %s\nwant %s (truncated %v)", got, want, res.Truncated)
	}

	res, err = e.walk("d", walkOpts(0, 100, 100, false))
	ok(t, err)
	if got := e.shown(res); got != "d/.hid:directory d/a.txt:file d/b.txt:file d/sub:directory" {
		t.Errorf("depth 0: %s", got)
	}

	o := walkOpts(5, 100, 100, false)
	o.PruneHiddenDirectories = true
	res, err = e.svc.Walk(ctx, execproto.FsWalkParams{Path: e.uri("d"), Options: o})
	ok(t, err)
	if got := e.shown(res); strings.Contains(got, "x.txt") || !strings.Contains(got, "d/.hid:directory") {
		t.Errorf("prune: %s", got)
	}

	// Followed: dirlink is walked and sub, its target, is not walked again;
	// the up link back to d is listed but not descended.
	res, err = e.walk("d", walkOpts(5, 100, 100, true))
	ok(t, err)
	got := e.shown(res)
	if !strings.Contains(got, "d/dirlink:directory") || !strings.Contains(got, "/up:directory") || strings.Contains(got, "filelink") {
		t.Errorf("follow: %s", got)
	}
	if strings.Count(got, "c.txt") != 1 {
		t.Errorf("sub walked twice: %s", got)
	}

	res, err = e.walk("d", walkOpts(5, 100, 2, false))
	ok(t, err)
	if len(res.Entries) != 2 || !res.Truncated {
		t.Errorf("entry limit: %s %v", e.shown(res), res.Truncated)
	}
	res, err = e.walk("d", walkOpts(5, 1, 100, false))
	ok(t, err)
	if !res.Truncated || strings.Contains(e.shown(res), "c.txt") {
		t.Errorf("directory limit: %s %v", e.shown(res), res.Truncated)
	}

	res, err = e.walk("d/a.txt", walkOpts(5, 100, 100, false))
	ok(t, err)
	if len(res.Entries) != 0 || res.Entries == nil || res.Errors == nil {
		t.Errorf("file root: %+v", res)
	}
	res, err = e.walk("d/dirlink", walkOpts(5, 100, 100, false))
	ok(t, err)
	if len(res.Entries) != 0 {
		t.Errorf("unfollowed symlink root: %s", e.shown(res))
	}

	_, err = e.walk("missing", walkOpts(5, 100, 100, false))
	wantCode(t, err, CodeNotFound, "No such file or directory")
	_, err = e.walk("d", walkOpts(5, 0, 100, false))
	wantCode(t, err, CodeInvalidRequest, "filesystem walk limits must be greater than zero")
	_, err = e.walk("d", walkOpts(5, 100, 0, false))
	wantCode(t, err, CodeInvalidRequest, "filesystem walk limits must be greater than zero")
	_, err = e.walk("d", walkOpts(65, 100, 100, false))
	wantCode(t, err, CodeInvalidRequest, "filesystem walk limits exceed maximums: depth=64, directories=10000, entries=50000")
}

func TestWalkDoesNotFollowOutOfRoots(t *testing.T) {
	e := newEnv(t)
	outside := t.TempDir()
	ok(t, os.WriteFile(filepath.Join(outside, "secret"), nil, 0o644))
	e.write("d/a", "")
	e.symlink(outside, "d/out")
	res, err := e.walk("d", walkOpts(5, 100, 100, true))
	ok(t, err)
	if got := e.shown(res); got != "d/a:file" {
		t.Errorf("walk left the root: %s", got)
	}
}

func waitNotification(t *testing.T, ch <-chan execproto.FsMissingChangedNotification, id uint64) {
	t.Helper()
	select {
	case n := <-ch:
		if n.WatchID != id {
			t.Fatalf("notification for %d, want %d", n.WatchID, id)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no fs/missingChanged for watch %d", id)
	}
}

func expectQuiet(t *testing.T, ch <-chan execproto.FsMissingChangedNotification) {
	t.Helper()
	select {
	case n := <-ch:
		t.Fatalf("unexpected notification %+v", n)
	default:
	}
}

func TestWatchMissing(t *testing.T) {
	e := newEnv(t)
	e.write("existing", "")
	ch := make(chan execproto.FsMissingChangedNotification, 8)
	c := e.svc.NewConnState(func(n execproto.FsMissingChangedNotification) { ch <- n })
	defer c.Close()

	watch := func(id uint64, rels ...string) bool {
		t.Helper()
		var uris []string
		for _, r := range rels {
			uris = append(uris, e.uri(r))
		}
		res, err := e.svc.WatchMissing(ctx, c, execproto.FsWatchMissingParams{WatchID: id, Missing: uris})
		ok(t, err)
		return res.Watching
	}
	if !watch(1, "a/b/c") {
		t.Fatal("watch 1 not armed")
	}
	if watch(1, "other") {
		t.Error("duplicate id armed")
	}
	if watch(2) || watch(3, "existing") || watch(4, "existing/child") {
		t.Error("unwatchable paths armed")
	}
	// As in Codex 0.169: one path that is there or cannot appear, and the
	// whole watch is off; id 0 is never armed.
	e.symlink("nowhere", "dangling")
	if watch(5, "m1", "existing") || watch(6, "existing/child", "m2") || watch(7, "dangling") || watch(0, "m3") {
		t.Error("a watch with an unwatchable path, or id 0, armed")
	}

	// The watch moves down as the ancestors appear and fires only when the
	// path itself exists.
	ok(t, os.Mkdir(e.path("a"), 0o755))
	ok(t, os.Mkdir(e.path("a/b"), 0o755))
	expectQuiet(t, ch)
	ok(t, os.WriteFile(e.path("a/b/c"), nil, 0o644))
	waitNotification(t, ch, 1)

	// Spent: the id can be used again.
	if !watch(1, "later", "x/y") {
		t.Fatal("watch 1 not re-armed")
	}
	ok(t, os.MkdirAll(e.path("x/y"), 0o755))
	waitNotification(t, ch, 1)

	_, err := e.svc.WatchMissing(ctx, c, execproto.FsWatchMissingParams{WatchID: 9, Missing: []string{"/not/a/uri"}})
	wantCode(t, err, CodeInvalidParams, "invalid URI")
	_, err = e.svc.WatchMissing(ctx, c, execproto.FsWatchMissingParams{WatchID: 9, Missing: []string{execproto.PathURI(t.TempDir() + "/x")}})
	wantCode(t, err, CodeInvalidRequest, "outside the allowed roots")
}

func TestWatchMissingAfterRemovalOfAncestor(t *testing.T) {
	e := newEnv(t)
	e.write("p/keep", "")
	ch := make(chan execproto.FsMissingChangedNotification, 8)
	c := e.svc.NewConnState(func(n execproto.FsMissingChangedNotification) { ch <- n })
	defer c.Close()
	res, err := e.svc.WatchMissing(ctx, c, execproto.FsWatchMissingParams{WatchID: 5, Missing: []string{e.uri("p/q/r")}})
	ok(t, err)
	if !res.Watching {
		t.Fatal("not armed")
	}
	// The watched directory goes away; the watch must move up to the root.
	ok(t, os.RemoveAll(e.path("p")))
	ok(t, os.MkdirAll(e.path("p/q/r"), 0o755))
	waitNotification(t, ch, 5)
}

func TestWatchLimitAndClose(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxWatches = 2 })
	c := e.svc.NewConnState(nil)
	for id := uint64(1); id <= 2; id++ {
		_, err := e.svc.WatchMissing(ctx, c, execproto.FsWatchMissingParams{WatchID: id, Missing: []string{e.uri("m")}})
		ok(t, err)
	}
	_, err := e.svc.WatchMissing(ctx, c, execproto.FsWatchMissingParams{WatchID: 3, Missing: []string{e.uri("m")}})
	wantCode(t, err, CodeInvalidRequest, "at most 2 missing-path watches")
	ok(t, c.Close())
	_, err = e.svc.WatchMissing(ctx, c, execproto.FsWatchMissingParams{WatchID: 4, Missing: []string{e.uri("m")}})
	wantCode(t, err, CodeInternalError, "connection is closed")
}

// TestWalkMaxEntriesSkipsDanglingLinks: maxEntries counts what the walk
// looked at, as Codex 0.169 counts it: a symlink to a file counts (though it
// is not listed), a symlink whose target does not resolve does not, with or
// without followDirectorySymlinks. Codex, with a dangling link second in a
// directory and maxEntries 2, lists two entries where codexd listed one.
func TestWalkMaxEntriesSkipsDanglingLinks(t *testing.T) {
	e := newEnv(t)
	e.write("d/a1", "")
	e.symlink("nothing", "d/b2")
	e.write("d/d4", "")
	e.write("d/e5", "")
	for _, follow := range []bool{false, true} {
		res, err := e.walk("d", walkOpts(5, 100, 2, follow))
		ok(t, err)
		if got := e.shown(res); got != "d/a1:file d/d4:file" || !res.Truncated {
			t.Errorf("follow=%v, dangling link: %s (truncated %v), want d/a1:file d/d4:file, truncated", follow, got, res.Truncated)
		}
	}
	f := newEnv(t)
	f.write("d/a1", "")
	f.symlink("a1", "d/b2")
	f.write("d/d4", "")
	for _, follow := range []bool{false, true} {
		res, err := f.walk("d", walkOpts(5, 100, 2, follow))
		ok(t, err)
		if got := f.shown(res); got != "d/a1:file" || !res.Truncated {
			t.Errorf("follow=%v, link to a file: %s (truncated %v), want d/a1:file, truncated", follow, got, res.Truncated)
		}
	}
}
