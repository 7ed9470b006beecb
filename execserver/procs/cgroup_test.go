//go:build linux

package procs

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestCheckCgroupRootRefusesOtherDirectories(t *testing.T) {
	for _, dir := range []string{t.TempDir(), "relative/dir", "/nonexistent-codexd-dir"} {
		if err := CheckCgroupRoot(dir); err == nil {
			t.Errorf("CheckCgroupRoot(%q) accepted", dir)
		}
	}
}

// TestCgroupKillReachesEscapedOrphans needs a cgroup v2 directory delegated
// to the test (CODEXD_TEST_CGROUP_ROOT); nothing is created anywhere else.
func TestCgroupKillReachesEscapedOrphans(t *testing.T) {
	root := os.Getenv("CODEXD_TEST_CGROUP_ROOT")
	if root == "" {
		t.Skip("CODEXD_TEST_CGROUP_ROOT names no delegated cgroup v2 directory")
	}
	if err := CheckCgroupRoot(root); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadDir(root)
	m := NewManager(Config{CgroupRoot: root})
	// The leader exits at once; its descendant leaves the session and is
	// reparented away: only the cgroup still knows where it came from.
	p := start(t, m, StartOptions{ID: "esc", Argv: []string{"sh", "-c", `setsid sh -c 'echo $$; exec sleep 100 >/dev/null 2>&1' &`}})
	o := summarize(t, pump(t, p))
	pid, err := strconv.Atoi(strings.TrimSpace(o.out[StreamStdout]))
	if err != nil {
		t.Fatalf("escaped pid %q", o.out[StreamStdout])
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	cg, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil || !strings.Contains(string(cg), "/codexd-") {
		t.Fatalf("escaped process's cgroup: %q %v", cg, err)
	}
	m.Close()
	if !diesWithin(t, pid, 5*time.Second) {
		t.Fatalf("escaped orphan %d survived its session", pid)
	}
	after, _ := os.ReadDir(root)
	if len(after) != len(before) {
		var names []string
		for _, e := range after {
			names = append(names, e.Name())
		}
		t.Fatalf("cgroups left in %s: %v", root, names)
	}
	if _, err := os.Stat(filepath.Join(root, "cgroup.procs")); errors.Is(err, os.ErrNotExist) {
		t.Fatal("the root is gone")
	}
}
