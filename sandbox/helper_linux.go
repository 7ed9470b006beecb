package sandbox

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// RunHelperIfRequested makes this process the sandbox helper when it was
// started by an argv from [Wrap]: it confines itself and execve's the
// command, never returning (it exits 126 or 127 if it cannot). Otherwise it
// returns at once. Call it first thing in main, and in TestMain of any test
// that runs wrapped commands with the test binary as self.
func RunHelperIfRequested() {
	if len(os.Args) < 2 || os.Args[1] != HelperArg && os.Args[1] != helperUserNSArg {
		return
	}
	os.Exit(helperMain(os.Args[2:], os.Environ(), probeABI, os.Stderr, os.Args[1] == helperUserNSArg))
}

// helperMain runs the helper on args (POLICY "--" argv...): it does not
// return if the command starts, and otherwise returns the exit code after
// writing why to stderr.
func helperMain(args, env []string, probe func() (int, error), stderr io.Writer, inUserNS bool) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "codexd sandbox: "+format+"\n", a...)
		return code
	}
	if len(args) < 3 || args[1] != "--" {
		return fail(ExitCannotRun, "usage: %s POLICY -- COMMAND [ARG...]", HelperArg)
	}
	p, err := decodePolicy(args[0])
	if err != nil {
		return fail(ExitCannotRun, "%v", err)
	}
	argv := args[2:]
	path, err := lookPath(argv[0], env)
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return fail(ExitNotFound, "%s: command not found", argv[0])
		}
		return fail(ExitCannotRun, "%s: %v", argv[0], err)
	}
	if p.Mode.Confined() {
		abi, err := available(probe)
		if err != nil {
			return fail(ExitCannotRun, "the %s sandbox cannot be enforced: %v; refusing to run %q unconfined", p.Mode, err, argv[0])
		}
		// Confinement applies to this thread only; it must be the one that
		// execs, so it is never unlocked.
		runtime.LockOSThread()
		if p.Mode == WorkspaceWrite {
			if ro := readOnlyPaths(p, func(k string) string { return envValue(env, k) }); len(ro) > 0 {
				err := protectReadOnly(ro)
				if errors.Is(err, errNeedUserNS) && !inUserNS {
					return runInUserNS(args, env, stderr)
				}
				if err != nil {
					return fail(ExitCannotRun, "cannot keep %s read-only for %q: %v; refusing to run it", strings.Join(ro, ", "), argv[0], err)
				}
			}
		}
		if err := confine(p, abi, env); err != nil {
			return fail(ExitCannotRun, "cannot confine %q (%s, Landlock ABI %d): %v", argv[0], p.Mode, abi, err)
		}
		// Landlock checks a file when it is opened, so a descriptor this
		// process inherited (leaked by whatever started the server) would
		// still write wherever it points. The command gets stdio only.
		if err := closeInherited(); err != nil {
			return fail(ExitCannotRun, "cannot close inherited descriptors for %q: %v", argv[0], err)
		}
	}
	err = syscall.Exec(path, argv, env)
	if errors.Is(err, syscall.ENOENT) {
		return fail(ExitNotFound, "%s: %v", argv[0], err)
	}
	return fail(ExitCannotRun, "%s: %v", argv[0], err)
}

// closeInherited marks every descriptor but stdin, stdout and stderr
// close-on-exec.
func closeInherited() error {
	err := unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
	if err != unix.ENOSYS && err != unix.EINVAL && err != unix.EPERM {
		return err
	}
	// A kernel before 5.11, or a seccomp profile without close_range.
	return cloexecFromProc()
}

// cloexecFromProc is closeInherited through /proc/self/fd.
func cloexecFromProc() error {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			// EBADF: the descriptor ReadDir read the directory through.
			if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && err != unix.EBADF {
				return err
			}
		}
	}
	return nil
}

// lookPath finds a command as the shell would, with the command's PATH.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		info, err := os.Stat(name)
		if err != nil {
			return "", err
		}
		if info.IsDir() || info.Mode()&0o111 == 0 {
			return "", syscall.EACCES
		}
		return name, nil
	}
	for _, dir := range strings.Split(envValue(env, "PATH"), ":") {
		if dir == "" {
			dir = "." // an empty element is the working directory, as in sh
		}
		cand := dir + "/" + name
		if info, err := os.Stat(cand); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
			return cand, nil
		}
	}
	return "", exec.ErrNotFound
}

// envValue is key's value in env; the last entry wins, as with os/exec.
func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}

// devices a confined command may read and write.
var writableDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// presets are go-landlock's configurations by ABI version (index = ABI-1).
var presets = []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6,
	landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}

// rulesetConfig is what the ruleset for p handles at Landlock ABI abi:
// everything the ABI can restrict, but for what the modes leave allowed.
func rulesetConfig(p Policy, abi int) landlock.Config {
	cfg := presets[min(abi, len(presets))-1]
	cfg.Scoped = 0 // signals stay allowed: a command may kill what an earlier one started
	if p.HasFullNetworkAccess() {
		// ABI 9 can refuse UNIX sockets created outside the sandbox (no
		// rule grants them); with the network, local services are allowed
		// too.
		cfg.HandledAccessFS &^= ll.AccessFSResolveUnix
		cfg.HandledAccessNet = 0
	} else if abi >= 6 {
		cfg.Scoped = landlock.ScopedSet(ll.ScopeAbstractUnixSocket)
	}
	return cfg
}

// stdioTerminals are the terminals that stdin, stdout and stderr are
// (/dev/pts/N under exec_command's tty). The command writes to them through
// those descriptors anyway; by name (`> /dev/stderr` opens /dev/pts/N) it
// needs a rule.
func stdioTerminals() []string {
	var out []string
	for fd := range 3 {
		if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err != nil {
			continue
		}
		if p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd)); err == nil && strings.HasPrefix(p, "/dev/pts/") {
			out = append(out, p)
		}
	}
	return out
}

// confine restricts the calling (locked) thread: no_new_privs, the Landlock
// ruleset for p, no capabilities, and the network seccomp filter unless p
// allows network.
func confine(p Policy, abi int, env []string) error {
	if abi >= 6 {
		// go-landlock treats a kernel without the signal-scoping fix as
		// ABI 5; follow it so that the preset is accepted.
		if errata, err := ll.LandlockGetErrata(); err != nil || errata&0x2 == 0 {
			abi = 5
		}
	}
	cfg := rulesetConfig(p, abi)
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWFiles(writableDevices...).IgnoreIfMissing(),
		landlock.RWFiles("/dev/tty").WithIoctlDev().IgnoreIfMissing(),
	}
	if ttys := stdioTerminals(); len(ttys) > 0 {
		rules = append(rules, landlock.RWFiles(ttys...).WithIoctlDev().IgnoreIfMissing())
	}
	cwd := filepath.Clean(p.Cwd)
	getenv := func(k string) string { return envValue(env, k) }
	for _, r := range p.ResolveWritableRoots(getenv) {
		rule := landlock.RWDirs(r.Root)
		if abi >= 2 {
			rule = rule.WithRefer() // renames and links within and between roots
		}
		if r.Root != cwd {
			rule = rule.IgnoreIfMissing() // the workspace itself must exist
		}
		rules = append(rules, rule)
		if r.Root == "/tmp" {
			rules = append(rules, landlock.RWDirs("/dev/shm").IgnoreIfMissing())
		}
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return err
	}
	if fd < 0 {
		return errors.New("empty Landlock ruleset")
	}
	defer unix.Close(fd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	if err := dropCapabilities(); err != nil {
		return err
	}
	if !p.HasFullNetworkAccess() {
		if err := denySockets(); err != nil {
			return fmt.Errorf("seccomp: %w", err)
		}
	}
	return nil
}

// dropCapabilities leaves the calling thread, and what it executes, without
// any capability. Landlock takes none away, and root's would undo it: mknod
// the disk in the workspace and write it, load a kernel module, attach BPF.
func dropCapabilities() error {
	if os.Getuid() == 0 || os.Geteuid() == 0 {
		// Executing as root refills the permitted set from the bounding
		// set, so that must go too.
		for c := 0; c < 64; c++ {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
				if err == unix.EINVAL {
					break // past the kernel's last capability
				}
				return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
			}
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	var none [2]unix.CapUserData // version 3: two 32-bit halves
	if err := unix.Capset(&unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}, &none[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}
