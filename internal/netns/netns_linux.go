package netns

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// Reexec runs this program again, with its arguments, in a new network
// namespace whose only interface is loopback (still down: the child calls
// LoopbackUp), with env=1 in its environment so that it knows. As a user
// other than root it also maps that user to root in a new user namespace.
// It returns the child's exit code; the child dies with the caller.
func Reexec(env string) (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), env+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
	if uid, gid := os.Getuid(), os.Getgid(); uid != 0 {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}}
	}
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), nil
		}
		return 0, fmt.Errorf("cannot run in a new network namespace (%v); run as root, or pass -netns=false inside `unshare -n`", err)
	}
	return 0, nil
}

// LoopbackUp brings up lo, the only interface of a new network namespace.
func LoopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("SIOCGIFFLAGS lo: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// Isolate makes the rest of the program run in a network namespace with
// only loopback: a program started without env=1 re-executes itself there
// (when reexec is set) and exits with the copy's exit code; the copy, which
// has env=1, brings lo up and goes on. With reexec unset and no env=1 (the
// caller is already inside `unshare -n`, say), it does nothing.
func Isolate(env string, reexec bool) error {
	if os.Getenv(env) == "1" {
		if err := LoopbackUp(); err != nil {
			return fmt.Errorf("bringing up lo: %w", err)
		}
		return nil
	}
	if !reexec {
		return nil
	}
	code, err := Reexec(env)
	if err != nil {
		return err
	}
	os.Exit(code)
	return nil
}
