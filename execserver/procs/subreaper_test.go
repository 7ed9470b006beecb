//go:build linux

package procs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const subreaperHelperEnv = "CODEXD_TEST_SUBREAPER_HELPER"

// TestSubreaper runs subreaperHelper in a child test process.
func TestSubreaper(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), subreaperHelperEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("helper: %v\n%s", err, out)
	}
}

// subreaperHelper: orphans of the session's descendants come back to this
// process; those of a pinned group die with their session, one that left
// with setsid dies with KillAdopted; all are reaped.
func subreaperHelper() int {
	fail := func(format string, args ...any) int {
		fmt.Printf(format+"\n", args...)
		return 1
	}
	if err := EnableSubreaper(); err != nil {
		return fail("EnableSubreaper: %v", err)
	}
	m := NewManager(Config{})
	defer m.Close()
	startRead := func(id, script string) (*Process, int, error) {
		p, err := m.Start(StartOptions{ID: id, Argv: []string{"sh", "-c", script}, Env: testPath})
		if err != nil {
			return nil, 0, err
		}
		var out string
		var after uint64
		for {
			r, err := p.Read(nil, ReadOptions{AfterSeq: after, MaxBytes: NoByteLimit})
			if err != nil {
				return nil, 0, err
			}
			for _, c := range r.Chunks {
				out += string(c.Data)
			}
			after = r.NextSeq - 1
			if r.Closed {
				break
			}
			<-waitChange(p, after)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(out))
		return p, pid, err
	}
	// The leaders exit at once, leaving a member of the group and a
	// descendant in a session of its own.
	_, member, err := startRead("member", "sleep 100 >/dev/null 2>&1 & echo $!")
	if err != nil {
		return fail("member: %v", err)
	}
	defer unix.Kill(member, unix.SIGKILL)
	_, escaped, err := startRead("escaped", `setsid sh -c 'echo $$; exec sleep 100 >/dev/null 2>&1' &`)
	if err != nil {
		return fail("escaped: %v", err)
	}
	defer unix.Kill(escaped, unix.SIGKILL)
	for _, pid := range []int{member, escaped} {
		in, err := readProcInfo(pid, make([]byte, 1024))
		if err != nil || in.ppid != os.Getpid() {
			return fail("orphan %d: ppid %d (%v), want this process %d", pid, in.ppid, err, os.Getpid())
		}
	}
	// Killing the session reaches the member, through its pinned group.
	m.KillAll()
	if !exitsWithin(member, 5*time.Second) {
		return fail("member %d survived KillAll", member)
	}
	if !exitsWithin(escaped, 200*time.Millisecond) {
		// Expected: nothing says which session it came from any more.
	} else {
		return fail("the escaped orphan died with KillAll: the test did not exercise KillAdopted")
	}
	KillAdopted()
	if !exitsWithin(escaped, 5*time.Second) {
		return fail("escaped orphan %d survived KillAdopted", escaped)
	}
	// Both were this process's children: reaped, no zombie left.
	reapAdopted()
	for _, pid := range []int{member, escaped} {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); !errors.Is(err, os.ErrNotExist) {
			return fail("orphan %d not reaped: %v", pid, err)
		}
	}
	fmt.Println("ok")
	return 0
}

// exitsWithin waits on a pidfd for pid to exit.
func exitsWithin(pid int, d time.Duration) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return true
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(d.Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && n == 1
	}
}

// waitChange returns a channel closed when p has an event after seq.
func waitChange(p *Process, after uint64) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.nextSeq-1 > after {
		c := make(chan struct{})
		close(c)
		return c
	}
	return p.changed
}
