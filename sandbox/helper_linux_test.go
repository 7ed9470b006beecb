package sandbox

import (
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/creack/pty"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
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

// What the ruleset handles at every ABI go-landlock knows, including those
// newer than this machine's kernel.
func TestRulesetConfig(t *testing.T) {
	denied, allowed := Policy{Mode: WorkspaceWrite, Cwd: "/w"}, Policy{Mode: WorkspaceWrite, Cwd: "/w", NetworkAccess: true}
	for abi := 1; abi <= len(presets)+1; abi++ {
		for _, p := range []Policy{denied, allowed} {
			cfg := rulesetConfig(p, abi)
			// Handled, nothing grants it: refused outside the sandbox.
			wantUnix := abi >= 9 && !p.NetworkAccess
			if (cfg.HandledAccessFS&ll.AccessFSResolveUnix != 0) != wantUnix {
				t.Errorf("ABI %d, network access %v: UNIX sockets outside refused %v", abi, p.NetworkAccess, !wantUnix)
			}
			if cfg.HandledAccessFS&ll.AccessFSWriteFile == 0 {
				t.Errorf("ABI %d: writes are not handled", abi)
			}
			if cfg.Scoped&ll.ScopeSignal != 0 {
				t.Errorf("ABI %d: signals are scoped", abi)
			}
			wantNet := abi >= 4 && !p.NetworkAccess
			if (cfg.HandledAccessNet != 0) != wantNet {
				t.Errorf("ABI %d, network access %v: handled net %v", abi, p.NetworkAccess, cfg.HandledAccessNet)
			}
			wantScoped := abi >= 6 && !p.NetworkAccess
			if (cfg.Scoped&ll.ScopeAbstractUnixSocket != 0) != wantScoped {
				t.Errorf("ABI %d, network access %v: abstract sockets scoped %v", abi, p.NetworkAccess, !wantScoped)
			}
		}
	}
}

// A command on a terminal (exec_command with tty) writes to it by name too:
// `echo error > /dev/stderr` opens /dev/pts/N, its own terminal.
func TestOwnTerminalIsWritableByName(t *testing.T) {
	needLandlock(t)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	wrapped, err := Wrap(workspacePolicy(t.TempDir()), []string{"sh", "-c", "echo by-name > /dev/stderr && echo ok > /dev/stdout"}, self(t))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(wrapped[0], wrapped[1:]...)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	out, _ := io.ReadAll(ptmx) // EIO once the command, the last holder of the tty, exits
	if err := cmd.Wait(); err != nil || !strings.Contains(string(out), "by-name") || !strings.Contains(string(out), "ok") {
		t.Fatalf("%v: %q", err, out)
	}
}
