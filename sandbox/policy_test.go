package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestWrap(t *testing.T) {
	p := Policy{Mode: WorkspaceWrite, Cwd: "/work", WritableRoots: []string{"/cache"}, NetworkAccess: true}
	got, err := Wrap(p, []string{"sh", "-c", "make"}, "/usr/bin/codexd")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/usr/bin/codexd", HelperArg, `{"mode":"workspace-write","cwd":"/work","writableRoots":["/cache"],"networkAccess":true}`, "--", "sh", "-c", "make"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
	back, err := decodePolicy(got[2])
	if err != nil || !reflect.DeepEqual(back, p) {
		t.Fatalf("decoded %+v %v", back, err)
	}
	if got, _ := Wrap(Policy{Mode: DangerFullAccess}, []string{"ls"}, "/x"); !reflect.DeepEqual(got, []string{"ls"}) {
		t.Fatalf("danger-full-access: %q", got)
	}
	for name, c := range map[string]struct {
		p    Policy
		argv []string
		self string
	}{
		"relative self":      {Policy{Mode: ReadOnly}, []string{"ls"}, "codexd"},
		"empty argv":         {Policy{Mode: ReadOnly}, nil, "/x"},
		"unknown mode":       {Policy{Mode: "full"}, []string{"ls"}, "/x"},
		"no cwd":             {Policy{Mode: WorkspaceWrite}, []string{"ls"}, "/x"},
		"relative root":      {Policy{Mode: WorkspaceWrite, Cwd: "/w", WritableRoots: []string{"rel"}}, []string{"ls"}, "/x"},
		"empty mode":         {Policy{}, []string{"ls"}, "/x"},
		"relative cwd":       {Policy{Mode: WorkspaceWrite, Cwd: "w"}, []string{"ls"}, "/x"},
		"danger, empty argv": {Policy{Mode: DangerFullAccess}, nil, "/x"},
	} {
		if _, err := Wrap(c.p, c.argv, c.self); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestResolveWritableRoots(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	extra := filepath.Join(base, "extra")
	gitdir := filepath.Join(base, "real.git")
	for _, d := range []string{filepath.Join(ws, ".git"), filepath.Join(ws, ".agents"), filepath.Join(extra, ".codex"), gitdir, filepath.Join(base, "wt")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A worktree whose .git file points at the real git directory.
	wt := filepath.Join(base, "wt")
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: ../real.git\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := Policy{Mode: WorkspaceWrite, Cwd: ws, WritableRoots: []string{extra, wt}, ExcludeSlashTmp: true}
	env := map[string]string{"TMPDIR": base + "/tmpdir/"}
	got := p.ResolveWritableRoots(func(k string) string { return env[k] })
	want := []WritableRoot{
		{Root: extra, ReadOnlySubpaths: []string{filepath.Join(extra, ".codex")}},
		{Root: wt, ReadOnlySubpaths: []string{gitdir, filepath.Join(wt, ".git")}},
		{Root: ws, ReadOnlySubpaths: []string{filepath.Join(ws, ".git"), filepath.Join(ws, ".agents"), filepath.Join(ws, ".codex")}},
		{Root: base + "/tmpdir"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("roots\n got %+v\nwant %+v", got, want)
	}
	w := got[2]
	for path, ok := range map[string]bool{
		ws:                                 true,
		filepath.Join(ws, "src/main.go"):   true,
		filepath.Join(ws, ".gitignore"):    true,
		filepath.Join(ws, ".git"):          false,
		filepath.Join(ws, ".git/hooks/x"):  false,
		filepath.Join(ws, ".codex/config"): false,
		filepath.Join(ws, "..", "other"):   false,
		ws + "2/file":                      false,
	} {
		if w.IsPathWritable(path) != ok {
			t.Errorf("IsPathWritable(%s) = %v", path, !ok)
		}
	}
	p.ExcludeTmpdirEnvVar = true
	if n := len(p.ResolveWritableRoots(func(k string) string { return env[k] })); n != 3 {
		t.Fatalf("TMPDIR excluded: %d roots", n)
	}
	p = Policy{Mode: WorkspaceWrite, Cwd: ws, ExcludeTmpdirEnvVar: true}
	if roots := p.ResolveWritableRoots(nil); len(roots) != 2 || roots[1].Root != "/tmp" {
		t.Fatalf("/tmp by default: %+v", roots)
	}
	if roots := (Policy{Mode: ReadOnly}).ResolveWritableRoots(nil); roots != nil {
		t.Fatalf("read-only roots: %+v", roots)
	}
}

// TestResolveWritableRootsOnAnotherHost: the roots are resolved with the
// host's view (a remote exec-server's filesystem and the commands'
// environment), not this machine's.
func TestResolveWritableRootsOnAnotherHost(t *testing.T) {
	files := map[string]fs.FileMode{
		"/ws":              fs.ModeDir,
		"/ws/.git":         0, // a worktree's .git file
		"/repo/.git/wt/ws": fs.ModeDir,
		"/extra":           fs.ModeDir,
		"/extra/.agents":   fs.ModeDir,
	}
	h := Host{
		Getenv: func(k string) string { return map[string]string{"TMPDIR": "/var/tmp/x"}[k] },
		Stat: func(p string) (fs.FileMode, error) {
			if m, ok := files[p]; ok {
				return m, nil
			}
			return 0, fs.ErrNotExist
		},
		ReadFile: func(p string) ([]byte, error) {
			if p == "/ws/.git" {
				return []byte("gitdir: /repo/.git/wt/ws\n"), nil
			}
			return nil, fs.ErrNotExist
		},
	}
	p := Policy{Mode: WorkspaceWrite, Cwd: "/ws", WritableRoots: []string{"/extra"}}
	got := p.ResolveWritableRootsOn(h)
	want := []WritableRoot{
		{Root: "/extra", ReadOnlySubpaths: []string{"/extra/.agents"}},
		{Root: "/ws", ReadOnlySubpaths: []string{"/repo/.git/wt/ws", "/ws/.git", "/ws/.codex"}},
		{Root: "/var/tmp/x"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if got[1].IsPathWritable("/ws/.git") || got[1].IsPathWritable("/ws/.codex/x") || !got[1].IsPathWritable("/ws/src/x") {
		t.Fatal("IsPathWritable")
	}
}

func TestLikelyDenied(t *testing.T) {
	cases := []struct {
		name string
		mode Mode
		code int
		outs []string
		want bool
	}{
		{"success", WorkspaceWrite, 0, []string{"Permission denied"}, false},
		{"unconfined", DangerFullAccess, 1, []string{"Operation not permitted"}, false},
		{"no keyword", WorkspaceWrite, 1, []string{"", ""}, false},
		{"EPERM in stderr", WorkspaceWrite, 1, []string{"", "socket: Operation not permitted"}, true},
		{"EACCES in stdout", ReadOnly, 1, []string{"sh: 1: cannot create /x: Permission denied", ""}, true},
		{"read-only fs in aggregated output", WorkspaceWrite, 101, []string{"cargo failed: Read-only file system when writing target"}, true},
		{"keyword beats quick reject", ReadOnly, 126, []string{"codexd sandbox: landlock unavailable"}, true},
		{"command not found", WorkspaceWrite, 127, []string{"bash: foo: command not found"}, false},
		{"builtin misuse", WorkspaceWrite, 2, []string{"usage"}, false},
		{"not executable", WorkspaceWrite, 126, []string{"cannot execute"}, false},
		{"SIGSYS", WorkspaceWrite, 159, nil, true},
		{"other signal", WorkspaceWrite, 137, nil, false},
		{"upper case", WorkspaceWrite, 1, []string{"SECCOMP"}, true},
	}
	for _, c := range cases {
		if got := LikelyDenied(c.mode, c.code, c.outs...); got != c.want {
			t.Errorf("%s: got %v", c.name, got)
		}
	}
}

func TestPolicyJSONNames(t *testing.T) {
	enc, _ := encodePolicy(Policy{Mode: WorkspaceWrite, Cwd: "/w", ExcludeSlashTmp: true, ExcludeTmpdirEnvVar: true})
	for _, name := range []string{`"excludeSlashTmp":true`, `"excludeTmpdirEnvVar":true`} {
		if !strings.Contains(enc, name) {
			t.Fatalf("%s missing from %s", name, enc)
		}
	}
}

// FuzzDecodePolicy checks that the helper's policy decoder never panics,
// and that what it accepts is valid and encodes back to the same policy.
// Seeds: testdata/fuzz/FuzzDecodePolicy.
func FuzzDecodePolicy(f *testing.F) {
	f.Add(`{"mode":"workspace-write","cwd":"/w","writableRoots":["/c"],"networkAccess":true}`)
	f.Fuzz(func(t *testing.T, s string) {
		p, err := decodePolicy(s)
		if err != nil {
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("accepted an invalid policy %+v: %v", p, err)
		}
		enc, err := encodePolicy(p)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodePolicy(enc)
		if err != nil || !reflect.DeepEqual(back, p) {
			t.Fatalf("%+v does not round-trip: %+v %v", p, back, err)
		}
	})
}
