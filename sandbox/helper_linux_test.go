package sandbox

import (
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// The fallback for kernels (or seccomp profiles) without close_range.
func TestCloexecFromProc(t *testing.T) {
	fd, err := syscall.Dup(2) // dup(2) leaves close-on-exec off
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := cloexecFromProc(); err != nil {
		t.Fatal(err)
	}
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Fatalf("fd %d flags %#x: %v", fd, flags, err)
	}
	if flags, _ := unix.FcntlInt(2, unix.F_GETFD, 0); flags&unix.FD_CLOEXEC != 0 {
		t.Fatal("stderr was marked close-on-exec")
	}
}
