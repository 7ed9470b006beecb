package procs

import (
	"os"

	"golang.org/x/sys/unix"
)

// growPipe does nothing: macOS pipes grow by themselves (up to 64 KiB)
// and cannot be asked for more.
func growPipe(f *os.File) bool { return false }

// unreadBytes reports how many bytes wait in a pipe or pty to be read.
func unreadBytes(f *os.File) int {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	_ = rc.Control(func(fd uintptr) {
		n, _ = unix.IoctlGetInt(int(fd), fionread)
	})
	return n
}

// fionread is FIONREAD on macOS, _IOR('f', 127, int), which x/sys/unix
// does not name.
const fionread = 0x4004667f
