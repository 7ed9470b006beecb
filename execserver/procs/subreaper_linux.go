package procs

import (
	"errors"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// EnableSubreaper makes this process a child subreaper (PR_SET_CHILD_SUBREAPER)
// and starts reaping the orphans it adopts. It is for a process whose every
// child is started by this package, such as the codexd binary: a child
// started otherwise (os/exec) would be reaped under its owner's feet. It
// cannot be undone; calling it again does nothing.
func EnableSubreaper() error {
	children.enableOnce.Do(func() {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			children.enableErr = err
			return
		}
		children.mu.Lock()
		children.subreaper = true
		children.mu.Unlock()
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, unix.SIGCHLD)
		go func() {
			for range sigs {
				reapAdopted()
			}
		}()
	})
	return children.enableErr
}

// ownChildren lists this process's children.
func ownChildren() ([]int, error) {
	self := strconv.Itoa(os.Getpid())
	tasks, err := os.ReadDir("/proc/" + self + "/task")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/" + self + "/task/" + t.Name() + "/children")
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return nil, err
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out, nil
}

// reapAdopted reaps the adopted orphans that have exited.
func reapAdopted() {
	children.spawn.Lock()
	defer children.spawn.Unlock()
	pids, err := ownChildren()
	if err != nil {
		return
	}
	for _, pid := range pids {
		if isTracked(pid) {
			continue
		}
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
	}
}

// KillAdopted kills every orphan this process adopted as a subreaper (they
// are all descendants of its sessions) and reaps those that have exited.
// It does nothing unless EnableSubreaper was called. A server calls it when
// it shuts down, after its sessions are closed.
func KillAdopted() {
	children.mu.Lock()
	on := children.subreaper
	children.mu.Unlock()
	if !on {
		return
	}
	children.spawn.Lock()
	pids, err := ownChildren()
	if err == nil {
		for _, pid := range pids {
			// Our child: its pid cannot be reused before we reap it, and
			// reaping happens under the lock held here.
			if !isTracked(pid) {
				_ = unix.Kill(pid, unix.SIGKILL)
			}
		}
	}
	children.spawn.Unlock()
	reapAdopted()
}
