package main

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// watchPid opens a pidfd on pid now; the function it returns waits, up to
// its deadline, for that very process to exit (a pidfd polls readable when
// it does, zombie or reaped), without polling /proc in a loop.
func watchPid(t *testing.T, pid int) func(time.Duration) error {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return func(time.Duration) error { return nil } // gone already
	}
	if err != nil {
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return func(d time.Duration) error {
		deadline := time.Now().Add(d)
		for {
			left := time.Until(deadline)
			if left <= 0 {
				// Do not leave it running after the test.
				_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
				return fmt.Errorf("pid %d still running after %v (killed now)", pid, d)
			}
			n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(left.Milliseconds())+1)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
		}
	}
}
