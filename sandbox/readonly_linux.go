package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// Landlock can only grant, never carve out, so the read-only subpaths of
// the writable roots (.git, the directory a .git file points to, .codex,
// .agents) are kept read-only with a mount namespace of the command's own:
// each is bind-mounted onto itself and remounted read-only, so a write, a
// creation, a removal or a rename there fails with EROFS or EBUSY, while
// Landlock still grants the rest of the root. Nothing of this is visible
// outside the command: the namespace's mounts are made slaves first, so
// none propagates back.
//
// A helper that may mount (root, or CAP_SYS_ADMIN) unshares the mount
// namespace on its locked thread, which then execs the command. Without
// that privilege, unsharing a user namespace is the only way, and the
// kernel refuses that to a multithreaded process (any Go program): the
// helper then starts itself again in a new user and mount namespace (its
// uid and gid mapped to themselves, so files keep their owners) and waits
// for it, passing its exit status on (see runInUserNS). When neither works
// the command is refused, never run with .git writable.

// helperUserNSArg makes this program the second stage of the helper,
// started by the first in a user namespace of its own.
const helperUserNSArg = "__codexd_sandbox_userns"

// errNeedUserNS: this process may not unshare its mount namespace.
var errNeedUserNS = errors.New("no privilege to unshare the mount namespace")

// readOnlyPaths are the existing read-only subpaths of p's writable roots,
// as the helper sees them (a missing one cannot be mounted over; the
// approval layer still refuses to auto-approve writes there).
func readOnlyPaths(p Policy, getenv func(string) string) []string {
	var out []string
	for _, r := range p.ResolveWritableRoots(getenv) {
		if _, err := os.Stat(r.Root); err != nil {
			continue
		}
		for _, s := range r.ReadOnlySubpaths {
			if _, err := os.Stat(s); err == nil {
				out = append(out, s)
			}
		}
	}
	return out
}

// protectReadOnly makes paths read-only for the calling thread, which must
// be locked, and what it executes: the thread unshares its mount namespace
// (in the second stage too, so that the stage, run by hand, never mounts in
// the namespace it was started in).
func protectReadOnly(paths []string) error {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		if err == unix.EPERM {
			return errNeedUserNS
		}
		return fmt.Errorf("unshare the mount namespace: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	for _, p := range paths {
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s: %w", p, err)
		}
		// A remount must keep the flags the kernel locked (nosuid, nodev,
		// noexec... of the mount it came from), or it is refused.
		var st unix.Statfs_t
		if err := unix.Statfs(p, &st); err != nil {
			return fmt.Errorf("statfs %s: %w", p, err)
		}
		keep := uintptr(st.Flags) & (unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_NOATIME | unix.MS_NODIRATIME | unix.MS_RELATIME)
		if err := unix.Mount("", p, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|keep, ""); err != nil {
			return fmt.Errorf("make %s read-only: %w", p, err)
		}
	}
	return nil
}

// userNSCommand is the second stage of the helper for args (the helper's
// own): this program in a new user namespace where its uid and gid map to
// themselves, dying with the thread that starts it (PR_SET_PDEATHSIG).
func userNSCommand(self string, args, env []string) *exec.Cmd {
	cmd := exec.Command(self, append([]string{helperUserNSArg}, args...)...)
	cmd.Env = env
	uid, gid := os.Getuid(), os.Getgid()
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
	}
	return cmd
}

// runInUserNS runs the second stage with this process's stdio, from the
// calling (locked) thread, and exits as it does. Terminal signals are
// ignored here: the exec-server signals the whole process group, the
// second stage included, and the command decides.
func runInUserNS(args, env []string, stderr io.Writer) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "codexd sandbox: cannot keep .git read-only: %v; refusing to run the command\n", err)
		return ExitCannotRun
	}
	signal.Ignore(syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGHUP)
	cmd := userNSCommand(self, args, env)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "codexd sandbox: cannot keep .git read-only: no user namespace (%v); refusing to run the command (allow unprivileged user namespaces, or use danger-full-access)\n", err)
		return ExitCannotRun
	}
	_ = cmd.Wait()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		sig := ws.Signal()
		signal.Reset(sig)
		_ = syscall.Kill(os.Getpid(), sig)
		return 128 + int(sig)
	}
	return ws.ExitStatus()
}
