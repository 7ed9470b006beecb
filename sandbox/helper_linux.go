package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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
	if len(os.Args) < 2 || os.Args[1] != HelperArg {
		return
	}
	os.Exit(helperMain(os.Args[2:], os.Environ(), probeABI, os.Stderr))
}

// helperMain runs the helper on args (POLICY "--" argv...): it does not
// return if the command starts, and otherwise returns the exit code after
// writing why to stderr.
func helperMain(args, env []string, probe func() (int, error), stderr io.Writer) int {
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
		if err := confine(p, abi, env); err != nil {
			return fail(ExitCannotRun, "cannot confine %q (%s, Landlock ABI %d): %v", argv[0], p.Mode, abi, err)
		}
	}
	err = syscall.Exec(path, argv, env)
	if errors.Is(err, syscall.ENOENT) {
		return fail(ExitNotFound, "%s: %v", argv[0], err)
	}
	return fail(ExitCannotRun, "%s: %v", argv[0], err)
}

// lookPath finds a command as the shell would, with the command's PATH.
func lookPath(name string, env []string) (string, error) {
	if containsSlash(name) {
		info, err := os.Stat(name)
		if err != nil {
			return "", err
		}
		if info.IsDir() || info.Mode()&0o111 == 0 {
			return "", syscall.EACCES
		}
		return name, nil
	}
	path := ""
	for _, kv := range env {
		if len(kv) > 5 && kv[:5] == "PATH=" {
			path = kv[5:]
		}
	}
	for _, dir := range splitPath(path) {
		if dir == "" {
			dir = "."
		}
		cand := dir + "/" + name
		if info, err := os.Stat(cand); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
			return cand, nil
		}
	}
	return "", exec.ErrNotFound
}

func containsSlash(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return true
		}
	}
	return false
}

func splitPath(p string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == ':' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return out
}

// devices a confined command may read and write.
var writableDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// presets are go-landlock's configurations by ABI version (index = ABI-1).
var presets = []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6,
	landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}

// confine restricts the calling (locked) thread: no_new_privs, the Landlock
// ruleset for p, and the network seccomp filter unless p allows network.
func confine(p Policy, abi int, env []string) error {
	if abi >= 6 {
		// go-landlock treats a kernel without the signal-scoping fix as
		// ABI 5; follow it so that the preset is accepted.
		if errata, err := ll.LandlockGetErrata(); err != nil || errata&0x2 == 0 {
			abi = 5
		}
	}
	cfg := presets[min(abi, len(presets))-1]
	cfg.Scoped = 0 // signals stay allowed: a command may kill what an earlier one started
	if p.HasFullNetworkAccess() {
		cfg.HandledAccessNet = 0
	} else if abi >= 6 {
		cfg.Scoped = landlock.ScopedSet(ll.ScopeAbstractUnixSocket)
	}
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWFiles(writableDevices...).IgnoreIfMissing(),
		landlock.RWFiles("/dev/tty").WithIoctlDev().IgnoreIfMissing(),
	}
	getenv := func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if len(env[i]) > len(k) && env[i][:len(k)] == k && env[i][len(k)] == '=' {
				return env[i][len(k)+1:]
			}
		}
		return ""
	}
	cwd := filepath.Clean(p.Cwd)
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
	if !p.HasFullNetworkAccess() {
		if err := denySockets(); err != nil {
			return fmt.Errorf("seccomp: %w", err)
		}
	}
	return nil
}
