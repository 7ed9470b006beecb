package procs

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// Cgroups are Linux-only; see cgroup_linux.go.

var errNoCgroups = errors.New("procs: cgroups need Linux")

// CheckCgroupRoot refuses: there are no cgroups here.
func CheckCgroupRoot(dir string) error { return errNoCgroups }

type cgroups struct{ root, dir string }

func (cg *cgroups) newProcess() (string, *os.File, error) { return "", nil, errNoCgroups }

func killCgroup(dir string) error                    { return nil }
func removeCgroup(dir string, d time.Duration) error { return nil }

func inCgroup(attr *syscall.SysProcAttr, cgroup *os.File) *syscall.SysProcAttr { return attr }

// childCwd is Cwd: there is no /proc/self/fd to change into an open
// directory before exec, so the path is used (degraded, next to Linux).
func childCwd(opts *StartOptions) string { return opts.Cwd }
