package procs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A cgroup per process, under a delegated cgroup v2 subtree
// (Config.CgroupRoot): the exact way to find everything a process started,
// whatever it did with its sessions, groups and parents, and to kill it
// all at once with cgroup.kill.
//
// Layout: <root>/codexd-<random>/ per manager (session), and in it p<N>/
// per process. The child is born in its cgroup (clone3 with
// CLONE_INTO_CGROUP), so not even its first instruction runs outside.
// Nothing is ever created or written outside <root>: the host's cgroups
// are not ours.

// CheckCgroupRoot verifies that dir can serve as Config.CgroupRoot: an
// existing directory of a cgroup v2 hierarchy, in which this process may
// create cgroups that have cgroup.kill (Linux 5.14). It creates and
// removes one probe cgroup in dir, and touches nothing else.
func CheckCgroupRoot(dir string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("cgroup root %q: not an absolute path", dir)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return fmt.Errorf("cgroup root %s: %w", dir, err)
	}
	if st.Type != unix.CGROUP2_SUPER_MAGIC {
		return fmt.Errorf("cgroup root %s: not in a cgroup v2 hierarchy", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil {
		return fmt.Errorf("cgroup root %s: not a cgroup: %w", dir, err)
	}
	probe := filepath.Join(dir, "codexd-probe-"+randomHex())
	if err := os.Mkdir(probe, 0o755); err != nil {
		return fmt.Errorf("cgroup root %s: cannot create cgroups there (is it delegated to this user?): %w", dir, err)
	}
	defer os.Remove(probe)
	if _, err := os.Stat(filepath.Join(probe, "cgroup.kill")); err != nil {
		return fmt.Errorf("cgroup root %s: no cgroup.kill (Linux 5.14 or later is needed): %w", dir, err)
	}
	return nil
}

func randomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// cgroups is a manager's part of the cgroup root.
type cgroups struct {
	root string // Config.CgroupRoot
	dir  string // the manager's own cgroup, created at the first process
	next int
}

// newProcess creates the cgroup of a new process and opens it for clone3.
// Called with m.mu held.
func (cg *cgroups) newProcess() (string, *os.File, error) {
	if cg.dir == "" {
		dir := filepath.Join(cg.root, "codexd-"+randomHex())
		if err := os.Mkdir(dir, 0o755); err != nil {
			return "", nil, err
		}
		cg.dir = dir
	}
	cg.next++
	dir := filepath.Join(cg.dir, "p"+strconv.Itoa(cg.next))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", nil, err
	}
	f, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		os.Remove(dir)
		return "", nil, err
	}
	return dir, f, nil
}

// killCgroup kills every process in the cgroup dir and below.
func killCgroup(dir string) error {
	if dir == "" {
		return nil
	}
	err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// removeCgroup removes an empty cgroup, waiting up to d for the processes
// in it to be gone (cgroup.events says "populated 0"). Child cgroups are
// removed first.
func removeCgroup(dir string, d time.Duration) error {
	if dir == "" {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	for _, e := range ents {
		if e.IsDir() {
			_ = removeCgroup(filepath.Join(dir, e.Name()), d)
		}
	}
	end := time.Now().Add(d)
	for {
		err := unix.Rmdir(dir)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) || !time.Now().Before(end) {
			return err
		}
		if err := waitUnpopulated(dir, time.Until(end)); err != nil {
			return err
		}
	}
}

// waitUnpopulated waits until cgroup.events reports no process, or d.
// The kernel signals a change of the file with POLLPRI.
func waitUnpopulated(dir string, d time.Duration) error {
	f, err := os.Open(filepath.Join(dir, "cgroup.events"))
	if err != nil {
		return err
	}
	defer f.Close()
	fd := int(f.Fd())
	end := time.Now().Add(d)
	buf := make([]byte, 256)
	for {
		n, err := unix.Pread(fd, buf, 0)
		if err != nil {
			return err
		}
		if strings.Contains(string(buf[:n]), "populated 0") {
			return nil
		}
		left := time.Until(end)
		if left <= 0 {
			return unix.EBUSY
		}
		_, err = unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLPRI}}, int(left.Milliseconds())+1)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// inCgroup makes the child be born in cgroup (clone3 with
// CLONE_INTO_CGROUP) when it is not nil.
func inCgroup(attr *syscall.SysProcAttr, cgroup *os.File) *syscall.SysProcAttr {
	if cgroup != nil {
		attr.UseCgroupFD = true
		attr.CgroupFD = int(cgroup.Fd())
	}
	return attr
}

// childCwd is the directory the child changes into: with CwdDir, the very
// directory opened. The child changes directory after fork, before its
// descriptors are rearranged and before exec: the parent's descriptor is
// still there, and /proc/self is the child.
func childCwd(opts *StartOptions) string {
	if opts.CwdDir != nil {
		return "/proc/self/fd/" + strconv.Itoa(int(opts.CwdDir.Fd()))
	}
	return opts.Cwd
}
