package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProfileAllows(t *testing.T) {
	work := t.TempDir()
	git := filepath.Join(work, ".git")
	if err := os.Mkdir(git, 0o755); err != nil {
		t.Fatal(err)
	}
	p := Profile{Rules: []Rule{
		{Path: "/", Access: AccessRead},
		{Path: work, Access: AccessWrite},
		{Path: git, Access: AccessRead, SkipMissing: true},
		{Path: filepath.Join(work, "secret"), Access: AccessNone},
		{Path: filepath.Join(work, "missing-ro"), Access: AccessRead, SkipMissing: true},
	}}
	for _, tc := range []struct {
		path  string
		write bool
		want  error
	}{
		{"/etc/passwd", false, nil},
		{"/etc/passwd", true, ErrReadOnly},
		{filepath.Join(work, "a"), true, nil},
		{filepath.Join(git, "hooks/pre-commit"), true, ErrReadOnly},
		{filepath.Join(git, "config"), false, nil},
		{filepath.Join(work, "secret/x"), false, ErrNoAccess},
		{filepath.Join(work, "missing-ro/x"), true, nil}, // skipped: it does not exist
	} {
		if err := p.Allows(tc.path, tc.write); !errors.Is(err, tc.want) && err != tc.want {
			t.Errorf("Allows(%s, write=%v) = %v, want %v", tc.path, tc.write, err, tc.want)
		}
	}
	if err := (Profile{Rules: []Rule{{Path: work, Access: AccessRead}}}).Allows("/etc/passwd", false); !errors.Is(err, ErrHidden) {
		t.Errorf("a path no rule covers: %v", err)
	}
	// For the same path the most restrictive rule wins.
	if err := (Profile{Rules: []Rule{{Path: "/", Access: AccessWrite}, {Path: "/", Access: AccessRead}}}).Allows("/x", true); !errors.Is(err, ErrReadOnly) {
		t.Errorf("tie: %v", err)
	}
	if (Profile{Unconfined: true}).Allows("/x", true) != nil || (Profile{FullDisk: true}).Allows("/x", true) != nil {
		t.Error("an unconfined or full-disk profile refused a write")
	}
}

func TestProfilePolicy(t *testing.T) {
	work, extra := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(work, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	root := Rule{Path: "/", Access: AccessRead}
	pol, err := Profile{Rules: []Rule{root}}.Policy()
	if err != nil || pol.Mode != ReadOnly || pol.NetworkAccess {
		t.Fatalf("read-only: %+v %v", pol, err)
	}
	pol, err = Profile{Network: true, Rules: []Rule{root, {Path: work, Access: AccessWrite}, {Path: extra, Access: AccessWrite},
		{Path: filepath.Join(work, ".git"), Access: AccessRead, SkipMissing: true},
		{Path: filepath.Join(work, ".aws"), Access: AccessRead, SkipMissing: true}}}.Policy()
	if err != nil || pol.Mode != WorkspaceWrite || pol.Cwd != work || len(pol.WritableRoots) != 1 || pol.WritableRoots[0] != extra ||
		!pol.NetworkAccess || !pol.ExcludeSlashTmp || !pol.ExcludeTmpdirEnvVar {
		t.Fatalf("workspace-write: %+v %v", pol, err)
	}
	for name, p := range map[string]Profile{
		"no read of /":            {Rules: []Rule{{Path: work, Access: AccessWrite}}},
		"an existing path denied": {Rules: []Rule{root, {Path: extra, Access: AccessNone}}},
		"a read-only carve-out":   {Rules: []Rule{root, {Path: "/", Access: AccessWrite}, {Path: extra, Access: AccessRead}}},
	} {
		if _, err := p.Policy(); err == nil || !strings.Contains(err.Error(), "cannot") {
			t.Errorf("%s: %v, want a refusal", name, err)
		}
	}
	if pol, err := (Profile{FullDisk: true}).Policy(); err != nil || pol.Mode != WorkspaceWrite || pol.Cwd != "/" || pol.NetworkAccess {
		t.Errorf("full disk without network: %+v %v", pol, err)
	}
	if pol, err := (Profile{Unconfined: true}).Policy(); err != nil || pol.Mode != DangerFullAccess {
		t.Errorf("unconfined: %+v %v", pol, err)
	}
}
