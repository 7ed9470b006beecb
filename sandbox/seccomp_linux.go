package sandbox

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Classic BPF opcodes for the seccomp filter.
const (
	bpfLdAbs  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq    = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJge    = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfRet    = unix.BPF_RET | unix.BPF_K
	retAllow  = unix.SECCOMP_RET_ALLOW
	retEPERM  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retKill   = unix.SECCOMP_RET_KILL_PROCESS
	x32Bit    = 0x40000000
	offNr     = 0  // seccomp_data.nr
	offArch   = 4  // seccomp_data.arch
	offArg0Lo = 16 // low 32 bits of seccomp_data.args[0] (little-endian)
)

// auditArch is the seccomp architecture of this build, or 0 where the
// filter is not implemented.
func auditArch() uint32 {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64
	}
	return 0
}

// socketFilter refuses socket(2) and socketpair(2) with EPERM unless the
// family is AF_UNIX, and io_uring_setup(2) (whose operations would bypass
// the filter), as Codex's Linux sandbox does. Syscalls of another
// architecture (i386 or x32 on amd64) kill the process: they could reach
// the same calls under other numbers.
func socketFilter(arch uint32) []unix.SockFilter {
	return []unix.SockFilter{
		/* 0 */ {Code: bpfLdAbs, K: offArch},
		/* 1 */ {Code: bpfJeq, Jt: 1, K: arch},
		/* 2 */ {Code: bpfRet, K: retKill},
		/* 3 */ {Code: bpfLdAbs, K: offNr},
		/* 4 */ {Code: bpfJge, Jt: 7, K: x32Bit}, // -> 12 kill
		/* 5 */ {Code: bpfJeq, Jt: 3, K: uint32(unix.SYS_SOCKET)}, // -> 9
		/* 6 */ {Code: bpfJeq, Jt: 2, K: uint32(unix.SYS_SOCKETPAIR)}, // -> 9
		/* 7 */ {Code: bpfJeq, Jt: 3, K: uint32(unix.SYS_IO_URING_SETUP)}, // -> 11
		/* 8 */ {Code: bpfRet, K: retAllow},
		/* 9 */ {Code: bpfLdAbs, K: offArg0Lo},
		/* 10 */ {Code: bpfJeq, Jf: 0, Jt: 2, K: unix.AF_UNIX}, // -> 13 allow, else 11
		/* 11 */ {Code: bpfRet, K: retEPERM},
		/* 12 */ {Code: bpfRet, K: retKill},
		/* 13 */ {Code: bpfRet, K: retAllow},
	}
}

// denySockets installs socketFilter on the calling thread. no_new_privs
// must already be set. On architectures without the filter it does
// nothing, and Landlock's TCP rules are the only network restriction.
func denySockets() error {
	arch := auditArch()
	if arch == 0 {
		return nil
	}
	filter := socketFilter(arch)
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	_, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(filter)
	if errno != 0 {
		return errno
	}
	return nil
}
