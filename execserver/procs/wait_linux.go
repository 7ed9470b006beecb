package procs

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Codes of siginfo_t.si_code for SIGCHLD.
const (
	cldExited = 1
	cldKilled = 2
	cldDumped = 3
)

// waitExit blocks until pid has terminated and returns its exit code, with
// 128+N for death by signal N, without reaping it. The zombie keeps the pid,
// and so the process group id, from being reused until we reap it, which is
// what makes a later kill(-pgid) safe.
func waitExit(pid int) (int, error) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EINTR) {
			return -1, err
		}
	}
	// x/sys leaves the SIGCHLD fields of the union opaque: si_pid, si_uid
	// and si_status follow the three ints of the header, which on 64-bit
	// targets are padded to 16 bytes.
	base := unsafe.Pointer(&info)
	off := uintptr(12)
	if unsafe.Sizeof(uintptr(0)) == 8 {
		off = 16
	}
	status := *(*int32)(unsafe.Add(base, off+8))
	switch info.Code {
	case cldExited:
		return int(status), nil
	case cldKilled, cldDumped:
		return 128 + int(status), nil
	}
	return -1, nil
}

// waitReaps says whether waitExit reaps the child: on Linux it does not
// (see group_linux.go).
const waitReaps = false
