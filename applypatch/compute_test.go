package applypatch

import (
	"context"
	"errors"
	"io/fs"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

func wrap(body string) string { return "*** Begin Patch\n" + body + "\n*** End Patch" }

// run parses, computes and applies a patch on a memFS rooted at /w.
func run(t *testing.T, files map[string]string, patch string) (*memFS, *Plan, *Result, error) {
	t.Helper()
	m := newMemFS(files)
	p, err := Parse(patch)
	if err != nil {
		return m, nil, nil, err
	}
	plan, err := Compute(context.Background(), m, "/w", p)
	if err != nil {
		return m, nil, nil, err
	}
	res, err := plan.Apply(context.Background(), m)
	return m, plan, res, err
}

// Scenarios of Codex's apply-patch fixtures and more: the files after a
// successful patch.
type scenario struct {
	name        string
	files       map[string]string
	patch       string
	want        map[string]string
	wantSummary string
}

var scenarios = []scenario{
	{"add", nil, wrap("*** Add File: bar.md\n+This is a new file"),
		map[string]string{"/w/bar.md": "This is a new file\n"}, "A bar.md\n"},
	{"add empty file", nil, wrap("*** Add File: e.txt"), map[string]string{"/w/e.txt": ""}, "A e.txt\n"},
	{"add creates parents", nil, wrap("*** Add File: nested/deep/new.txt\n+x"),
		map[string]string{"/w/nested/deep/new.txt": "x\n"}, "A nested/deep/new.txt\n"},
	{"add overwrites", map[string]string{"/w/dup.txt": "old\n"}, wrap("*** Add File: dup.txt\n+new"),
		map[string]string{"/w/dup.txt": "new\n"}, "A dup.txt\n"},
	{"delete", map[string]string{"/w/obsolete.txt": "x\n", "/w/keep.txt": "k\n"}, wrap("*** Delete File: obsolete.txt"),
		map[string]string{"/w/keep.txt": "k\n"}, "D obsolete.txt\n"},
	{"multiple operations", map[string]string{"/w/delete.txt": "d\n", "/w/modify.txt": "line1\nline2\n"},
		wrap("*** Add File: nested/new.txt\n+created\n*** Delete File: delete.txt\n*** Update File: modify.txt\n@@\n-line2\n+changed"),
		map[string]string{"/w/nested/new.txt": "created\n", "/w/modify.txt": "line1\nchanged\n"},
		"A nested/new.txt\nM modify.txt\nD delete.txt\n"},
	{"multiple chunks", map[string]string{"/w/multi.txt": "line1\nline2\nline3\nline4\n"},
		wrap("*** Update File: multi.txt\n@@\n-line2\n+changed2\n@@\n-line4\n+changed4"),
		map[string]string{"/w/multi.txt": "line1\nchanged2\nline3\nchanged4\n"}, "M multi.txt\n"},
	{"interleaved changes", map[string]string{"/w/i.txt": "a\nb\nc\nd\ne\nf\n"},
		wrap("*** Update File: i.txt\n@@\n a\n-b\n+B\n@@\n c\n d\n-e\n+E\n@@\n f\n+g\n*** End of File"),
		map[string]string{"/w/i.txt": "a\nB\nc\nd\nE\nf\ng\n"}, "M i.txt\n"},
	{"pure addition goes to the end", map[string]string{"/w/input.txt": "line1\nline2\n"},
		wrap("*** Update File: input.txt\n@@\n+added line 1\n+added line 2"),
		map[string]string{"/w/input.txt": "line1\nline2\nadded line 1\nadded line 2\n"}, "M input.txt\n"},
	{"pure addition after a final empty line", map[string]string{"/w/f.txt": "a\n\n"},
		wrap("*** Update File: f.txt\n@@\n+b"), map[string]string{"/w/f.txt": "a\n\nb\n"}, "M f.txt\n"},
	{"deletion only", map[string]string{"/w/lines.txt": "line1\nline2\nline3\n"},
		wrap("*** Update File: lines.txt\n@@\n line1\n-line2\n line3"),
		map[string]string{"/w/lines.txt": "line1\nline3\n"}, "M lines.txt\n"},
	{"update appends the missing final newline", map[string]string{"/w/n.txt": "no newline at end"},
		wrap("*** Update File: n.txt\n@@\n-no newline at end\n+first line\n+second line"),
		map[string]string{"/w/n.txt": "first line\nsecond line\n"}, "M n.txt\n"},
	{"untouched last line gains a newline", map[string]string{"/w/n.txt": "x\ny"},
		wrap("*** Update File: n.txt\n@@\n-x\n+X"), map[string]string{"/w/n.txt": "X\ny\n"}, "M n.txt\n"},
	{"end of file anchor", map[string]string{"/w/tail.txt": "first\nsecond\nlast\n"},
		wrap("*** Update File: tail.txt\n@@\n-last\n+end\n*** End of File"),
		map[string]string{"/w/tail.txt": "first\nsecond\nend\n"}, "M tail.txt\n"},
	{"end of file anchor picks the last occurrence", map[string]string{"/w/f.txt": "x\ny\nx\ny\n"},
		wrap("*** Update File: f.txt\n@@\n x\n-y\n+Y\n*** End of File"),
		map[string]string{"/w/f.txt": "x\ny\nx\nY\n"}, "M f.txt\n"},
	{"insert at end of file", map[string]string{"/w/f.txt": "foo\nbar\nbaz\n"},
		wrap("*** Update File: f.txt\n@@\n+quux\n*** End of File"),
		map[string]string{"/w/f.txt": "foo\nbar\nbaz\nquux\n"}, "M f.txt\n"},
	{"context line selects the occurrence", map[string]string{"/w/c.py": "class A:\n    x = 1\nclass B:\n    x = 1\n"},
		wrap("*** Update File: c.py\n@@ class B:\n-    x = 1\n+    x = 2"),
		map[string]string{"/w/c.py": "class A:\n    x = 1\nclass B:\n    x = 2\n"}, "M c.py\n"},
	{"trailing empty line of the pattern stands for the final newline", map[string]string{"/w/g.txt": "foo\n"},
		wrap("*** Update File: g.txt\n@@\n-foo\n-\n+bar\n+"), map[string]string{"/w/g.txt": "bar\n"}, "M g.txt\n"},
	{"whitespace-insensitive match", map[string]string{"/w/w.txt": "  if x:   \n\treturn 1\n"},
		wrap("*** Update File: w.txt\n@@\n-if x:\n-return 1\n+if y:\n+    return 2"),
		map[string]string{"/w/w.txt": "if y:\n    return 2\n"}, "M w.txt\n"},
	{"unicode punctuation", map[string]string{"/w/u.txt": "x \u2013 y \u201cq\u201d\n"},
		wrap("*** Update File: u.txt\n@@\n-x - y \"q\"\n+z"), map[string]string{"/w/u.txt": "z\n"}, "M u.txt\n"},
	{"unicode content", map[string]string{"/w/foo.txt": "héllo\nwörld\n"},
		wrap("*** Update File: foo.txt\n@@\n-héllo\n+hallo ✓"), map[string]string{"/w/foo.txt": "hallo ✓\nwörld\n"}, "M foo.txt\n"},
	{"CRLF file keeps CRLF", map[string]string{"/w/c.txt": "a\r\nb\r\n"},
		wrap("*** Update File: c.txt\n@@\n-b\n+c\n+d"), map[string]string{"/w/c.txt": "a\r\nc\r\nd\r\n"}, "M c.txt\n"},
	{"mixed endings: each line keeps its own, new ones take the first", map[string]string{"/w/m.txt": "a\r\nb\nc\n"},
		wrap("*** Update File: m.txt\n@@\n-c\n+C\n+D"), map[string]string{"/w/m.txt": "a\r\nb\nC\r\nD\r\n"}, "M m.txt\n"},
	{"CRLF file without final newline", map[string]string{"/w/o.txt": "x\r\ny"},
		wrap("*** Update File: o.txt\n@@\n+Z"), map[string]string{"/w/o.txt": "x\r\ny\r\nZ\r\n"}, "M o.txt\n"},
	{"move to a new directory", map[string]string{"/w/old/name.txt": "old content\n", "/w/old/other.txt": "o\n"},
		wrap("*** Update File: old/name.txt\n*** Move to: renamed/dir/name.txt\n@@\n-old content\n+new content"),
		map[string]string{"/w/renamed/dir/name.txt": "new content\n", "/w/old/other.txt": "o\n"}, "M renamed/dir/name.txt\n"},
	{"move overwrites the destination", map[string]string{"/w/a.txt": "from\n", "/w/b.txt": "existing\n"},
		wrap("*** Update File: a.txt\n*** Move to: b.txt\n@@\n-from\n+new"),
		map[string]string{"/w/b.txt": "new\n"}, "M b.txt\n"},
	{"move onto itself is an update", map[string]string{"/w/a.txt": "x\n"},
		wrap("*** Update File: a.txt\n*** Move to: ./a.txt\n@@\n-x\n+y"),
		map[string]string{"/w/a.txt": "y\n"}, "M ./a.txt\n"},
	{"two updates of one file apply in turn", map[string]string{"/w/c.txt": "a\nb\n"},
		wrap("*** Update File: c.txt\n@@\n-a\n+A\n*** Update File: c.txt\n@@\n-A\n+AA"),
		map[string]string{"/w/c.txt": "AA\nb\n"}, "M c.txt\nM c.txt\n"},
	{"add then update the added file", nil,
		wrap("*** Add File: n.txt\n+one\n*** Update File: n.txt\n@@\n-one\n+two"),
		map[string]string{"/w/n.txt": "two\n"}, "A n.txt\nM n.txt\n"},
	{"delete then add", map[string]string{"/w/r.txt": "old\n"},
		wrap("*** Delete File: r.txt\n*** Add File: r.txt\n+new"), map[string]string{"/w/r.txt": "new\n"}, "A r.txt\nD r.txt\n"},
	{"absolute paths", map[string]string{"/abs/u.txt": "old\n", "/abs/d.txt": "d\n"},
		wrap("*** Add File: /abs/a.txt\n+a\n*** Delete File: /abs/d.txt\n*** Update File: /abs/u.txt\n@@\n-old\n+new"),
		map[string]string{"/abs/a.txt": "a\n", "/abs/u.txt": "new\n"}, "A /abs/a.txt\nM /abs/u.txt\nD /abs/d.txt\n"},
	{"heredoc-wrapped patch", map[string]string{"/w/h.txt": "x\n"},
		"<<'EOF'\n" + wrap("*** Update File: h.txt\n@@\n-x\n+y") + "\nEOF\n",
		map[string]string{"/w/h.txt": "y\n"}, "M h.txt\n"},
}

func TestApplyScenarios(t *testing.T) {
	for _, c := range scenarios {
		t.Run(c.name, func(t *testing.T) {
			m, _, res, err := run(t, c.files, c.patch)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			want := newMemFS(c.want)
			if got, w := m.snapshot(), want.snapshot(); got != w {
				t.Fatalf("files\n got %s\nwant %s", got, w)
			}
			if got := res.Summary(); got != "Success. Updated the following files:\n"+c.wantSummary {
				t.Fatalf("summary %q", got)
			}
		})
	}
}

// Every verification error, with Codex's text, and no write at all.
func TestVerifyErrors(t *testing.T) {
	files := map[string]string{
		"/w/c.txt":   "a\nb\n",
		"/w/bin.txt": "ok\n\xff\xfe\n",
		"/w/d/x":     "in a dir\n",
	}
	cases := []struct{ name, patch, want string }{
		{"update missing file", wrap("*** Update File: nope.txt\n@@\n-a\n+b"),
			"Failed to read file to update /w/nope.txt: No such file or directory (os error 2)"},
		{"delete missing file", wrap("*** Delete File: nope.txt"),
			"Failed to read /w/nope.txt: No such file or directory (os error 2)"},
		{"delete a directory", wrap("*** Delete File: d"), "Failed to read /w/d: path `/w/d` is not a file"},
		{"update a directory", wrap("*** Update File: d\n@@\n-a\n+b"), "Failed to read file to update /w/d: path `/w/d` is not a file"},
		{"update a non-UTF-8 file", wrap("*** Update File: bin.txt\n@@\n-ok\n+ko"),
			"Failed to read file to update /w/bin.txt: invalid utf-8 sequence of 1 bytes from index 3"},
		{"context not found", wrap("*** Update File: c.txt\n@@ zzz\n-a\n+b"), "Failed to find context 'zzz' in /w/c.txt"},
		{"lines not found", wrap("*** Update File: c.txt\n@@\n-zz\n-yy\n+b"), "Failed to find expected lines in /w/c.txt:\nzz\nyy"},
		{"end of file anchor not at the end", wrap("*** Update File: c.txt\n@@\n-a\n+A\n*** End of File"),
			"Failed to find expected lines in /w/c.txt:\na"},
		{"update after delete in the same patch", wrap("*** Delete File: c.txt\n*** Update File: c.txt\n@@\n-a\n+b"),
			"Failed to read file to update /w/c.txt: No such file or directory (os error 2)"},
		{"second chunk not after the first", wrap("*** Update File: c.txt\n@@\n-b\n+B\n@@\n-a\n+A"),
			"Failed to find expected lines in /w/c.txt:\na"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A patch that would also add and change other files first:
			// nothing may be written when a later hunk fails.
			patch := strings.Replace(c.patch, "*** Begin Patch\n", "*** Begin Patch\n*** Add File: first.txt\n+1\n*** Update File: c.txt\n@@\n b\n+c\n", 1)
			m := newMemFS(files)
			before := m.snapshot()
			p := mustParse(t, patch)
			_, err := Compute(context.Background(), m, "/w", p)
			var ve *VerifyError
			if !errors.As(err, &ve) {
				t.Fatalf("error %v (%T), want *VerifyError", err, err)
			}
			if err.Error() != c.want {
				t.Fatalf("error\n got %q\nwant %q", err.Error(), c.want)
			}
			if len(m.ops) != 0 || m.snapshot() != before {
				t.Fatalf("filesystem touched: %v", m.ops)
			}
		})
	}
}

func TestComputeChanges(t *testing.T) {
	m := newMemFS(map[string]string{"/w/u.txt": "foo\nbar\nbaz\n", "/w/d.txt": "gone\n", "/w/o.txt": "over\n", "/w/src.txt": "s\n", "/w/dst.txt": "d\n"})
	p := mustParse(t, wrap("*** Add File: o.txt\n+new\n*** Delete File: d.txt\n*** Update File: u.txt\n@@\n foo\n bar\n-baz\n+BAZ\n*** Update File: src.txt\n*** Move to: sub/../dst.txt\n@@\n-s\n+S"))
	plan, err := Compute(context.Background(), m, "/w/", p)
	if err != nil {
		t.Fatal(err)
	}
	dst := "d\n"
	want := []Change{
		{Kind: KindAdd, Path: "/w/o.txt", OldContent: "over\n", Overwrites: true, NewContent: "new\n", UnifiedDiff: "@@ -1 +1 @@\n-over\n+new\n", display: "o.txt", clobbers: true, raw: "over\n"},
		{Kind: KindDelete, Path: "/w/d.txt", OldContent: "gone\n", UnifiedDiff: "@@ -1 +0,0 @@\n-gone\n", display: "d.txt"},
		{Kind: KindUpdate, Path: "/w/u.txt", OldContent: "foo\nbar\nbaz\n", NewContent: "foo\nbar\nBAZ\n", UnifiedDiff: "@@ -2,2 +2,2 @@\n bar\n-baz\n+BAZ\n", display: "u.txt", removed: []string{"foo\n", "bar\n", "baz\n"}},
		{Kind: KindUpdate, Path: "/w/src.txt", MovePath: "/w/dst.txt", OldContent: "s\n", NewContent: "S\n", OverwrittenMove: &dst, UnifiedDiff: "@@ -1 +1 @@\n-s\n+S\n", display: "sub/../dst.txt", clobbers: true, raw: "d\n", removed: []string{"s\n"}},
	}
	if !reflect.DeepEqual(plan.Changes, want) {
		t.Fatalf("changes\n got %+v\nwant %+v", plan.Changes, want)
	}
	if plan.Cwd != "/w" {
		t.Fatalf("cwd %q", plan.Cwd)
	}
	if got := plan.Paths(); !reflect.DeepEqual(got, []string{"/w/d.txt", "/w/dst.txt", "/w/o.txt", "/w/src.txt", "/w/u.txt"}) {
		t.Fatalf("paths %v", got)
	}
	if len(m.ops) != 0 {
		t.Fatalf("Compute wrote: %v", m.ops)
	}
}

func TestComputeRejectsRelativeCwd(t *testing.T) {
	if _, err := Compute(context.Background(), newMemFS(nil), "rel", mustParse(t, wrap("*** Add File: a\n+x"))); err == nil {
		t.Fatal("relative cwd accepted")
	}
}

func TestApplyEmptyPlan(t *testing.T) {
	_, plan, res, err := run(t, nil, "*** Begin Patch\n*** End Patch")
	if !errors.Is(err, ErrNoFiles) || err.Error() != "No files were modified." || res != nil || !plan.Empty() {
		t.Fatalf("err %v res %v", err, res)
	}
}

// A write that fails midway stops at once and names what was written. Its
// text is Codex 0.169's: the operation and the path, not the cause (which
// the error wraps).
func TestApplyWriteFailureMidway(t *testing.T) {
	cases := []struct {
		name, failOn, wantMsg string
		wantWritten           []string
	}{
		{"write", "write /w/u.txt", "Failed to write file /w/u.txt", []string{"/w/a.txt"}},
		{"delete", "remove /w/d.txt", "Failed to delete file /w/d.txt", []string{"/w/a.txt", "/w/u.txt"}},
		{"move source removal", "remove /w/m.txt", "Failed to remove original /w/m.txt",
			[]string{"/w/a.txt", "/w/u.txt", "/w/d.txt", "/w/new/m2.txt"}},
		{"parent creation", "mkdir /w/new", "Failed to create parent directories for /w/new/m2.txt",
			[]string{"/w/a.txt", "/w/u.txt", "/w/d.txt"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newMemFS(map[string]string{"/w/u.txt": "u\n", "/w/d.txt": "d\n", "/w/m.txt": "m\n"})
			m.failOn, m.failErr = c.failOn, &fs.PathError{Op: "x", Path: "p", Err: syscall.EACCES}
			p := mustParse(t, wrap("*** Add File: a.txt\n+a\n*** Update File: u.txt\n@@\n-u\n+U\n*** Delete File: d.txt\n*** Update File: m.txt\n*** Move to: new/m2.txt\n@@\n-m\n+M\n*** Add File: z.txt\n+z"))
			plan, err := Compute(context.Background(), m, "/w", p)
			if err != nil {
				t.Fatal(err)
			}
			_, err = plan.Apply(context.Background(), m)
			var we *WriteError
			if !errors.As(err, &we) {
				t.Fatalf("error %v (%T)", err, err)
			}
			if we.Error() != c.wantMsg || !reflect.DeepEqual(we.Written, c.wantWritten) || !errors.Is(err, syscall.EACCES) {
				t.Fatalf("got %q written %v", we.Error(), we.Written)
			}
			if _, ok := m.files["/w/z.txt"]; ok {
				t.Fatal("a change after the failure was applied")
			}
			if m.ops[len(m.ops)-1] != c.failOn {
				t.Fatalf("calls after the failure: %v", m.ops)
			}
		})
	}
}

func TestApplyCallOrder(t *testing.T) {
	m, _, res, err := run(t, map[string]string{"/w/m.txt": "m\n"},
		wrap("*** Add File: a/b.txt\n+x\n*** Update File: m.txt\n*** Move to: n.txt\n@@\n-m\n+M"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"write /w/a/b.txt", "mkdir /w/a", "write /w/a/b.txt", "write /w/n.txt", "remove /w/m.txt"}
	if !reflect.DeepEqual(m.ops, want) {
		t.Fatalf("ops %v", m.ops)
	}
	if !reflect.DeepEqual(res.Written, []string{"/w/a/b.txt", "/w/n.txt", "/w/m.txt"}) {
		t.Fatalf("written %v", res.Written)
	}
}

func TestApplyCancelled(t *testing.T) {
	m := newMemFS(nil)
	plan, err := Compute(context.Background(), m, "/w", mustParse(t, wrap("*** Add File: a\n+x")))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = plan.Apply(ctx, m)
	var we *WriteError
	if !errors.As(err, &we) || !errors.Is(err, context.Canceled) || len(m.ops) != 0 {
		t.Fatalf("err %v ops %v", err, m.ops)
	}
}

func TestIOMessage(t *testing.T) {
	cases := map[error]string{
		fs.ErrNotExist:   "No such file or directory (os error 2)",
		fs.ErrPermission: "Permission denied (os error 13)",
		&fs.PathError{Op: "open", Path: "/x", Err: syscall.ENOSPC}: "No space left on device (os error 28)",
		errors.New("remote: boom"):                                 "remote: boom",
	}
	for err, want := range cases {
		if got := ioMessage(err); got != want {
			t.Errorf("%v: got %q want %q", err, got, want)
		}
	}
	if got := utf8Problem([]byte("ab\xe2\x82")); got != "incomplete utf-8 byte sequence from index 2" {
		t.Errorf("truncated: %q", got)
	}
}
