package procs

import (
	"os"

	"golang.org/x/sys/unix"
)

// growPipe enlarges the pipe f reads from, if it is one, and reports
// whether it did; a pty, or a refusal (the user's pipe quota), leaves it as
// it is.
func growPipe(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	ok := false
	_ = rc.Control(func(fd uintptr) {
		_, err := unix.FcntlInt(fd, unix.F_SETPIPE_SZ, grownPipeSize)
		ok = err == nil
	})
	return ok
}

func unreadBytes(f *os.File) int {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	_ = rc.Control(func(fd uintptr) {
		n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) // FIONREAD
	})
	return n
}
