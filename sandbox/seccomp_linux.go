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

// socketFilter refuses with EPERM: socket(2) and socketpair(2) unless the
// family is AF_UNIX; connect(2), so that no UNIX socket outside the sandbox
// (the Docker daemon, the session bus systemd-run talks to, an ssh-agent:
// each would run or write what it is asked) can be reached; and
// io_uring_setup(2), whose operations would bypass the filter. That is
// Codex's restricted network mode, less the calls it also refuses that reach
// nothing without a connection. Syscalls of another architecture (i386 or
// x32 on amd64) kill the process: they could reach the same calls under
// other numbers.
func socketFilter(arch uint32) []unix.SockFilter {
	refused := []uint32{uint32(unix.SYS_CONNECT), uint32(unix.SYS_IO_URING_SETUP)}
	// Where each jump lands, after the refused syscalls' checks.
	n := len(refused)
	family, eperm, kill, allow := 8+n, 10+n, 11+n, 12+n
	jump := func(from, to int) uint8 { return uint8(to - from - 1) }
	f := []unix.SockFilter{
		/* 0 */ {Code: bpfLdAbs, K: offArch},
		/* 1 */ {Code: bpfJeq, Jt: 1, K: arch},
		/* 2 */ {Code: bpfRet, K: retKill},
		/* 3 */ {Code: bpfLdAbs, K: offNr},
		/* 4 */ {Code: bpfJge, Jt: jump(4, kill), K: x32Bit},
		/* 5 */ {Code: bpfJeq, Jt: jump(5, family), K: uint32(unix.SYS_SOCKET)},
		/* 6 */ {Code: bpfJeq, Jt: jump(6, family), K: uint32(unix.SYS_SOCKETPAIR)},
	}
	for i, nr := range refused {
		f = append(f, unix.SockFilter{Code: bpfJeq, Jt: jump(7+i, eperm), K: nr})
	}
	return append(f,
		/* 7+n */ unix.SockFilter{Code: bpfRet, K: retAllow},
		/* family */ unix.SockFilter{Code: bpfLdAbs, K: offArg0Lo},
		/* 9+n */ unix.SockFilter{Code: bpfJeq, Jt: jump(9+n, allow), K: unix.AF_UNIX},
		/* eperm */ unix.SockFilter{Code: bpfRet, K: retEPERM},
		/* kill */ unix.SockFilter{Code: bpfRet, K: retKill},
		/* allow */ unix.SockFilter{Code: bpfRet, K: retAllow},
	)
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
