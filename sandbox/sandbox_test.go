//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// dialEnv makes the test binary, run as a wrapped command, dial
// NETWORK!ADDRESS and exit 0 if it connected, 1 otherwise.
const dialEnv = "CODEXD_SANDBOX_TEST_DIAL"

func TestMain(m *testing.M) {
	RunHelperIfRequested()
	if target := os.Getenv(dialEnv); target != "" {
		network, addr, _ := strings.Cut(target, "!")
		if network == "stdin" {
			// Connect the socket the parent passed as stdin.
			ap, err := netip.ParseAddrPort(addr)
			if err != nil {
				panic(err)
			}
			if err := syscall.Connect(0, &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}); err != nil {
				fmt.Println("connect:", err)
				os.Exit(1)
			}
			fmt.Println("connected")
			os.Exit(0)
		}
		c, err := net.DialTimeout(network, addr, 5*time.Second)
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(1)
		}
		if network == "udp" {
			if _, err := c.Write([]byte("x")); err != nil {
				fmt.Println("send:", err)
				os.Exit(1)
			}
		}
		c.Close()
		fmt.Println("connected")
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

func needLandlock(t *testing.T) {
	t.Helper()
	if _, err := Available(); err != nil {
		t.Skipf("no Landlock on this kernel: %v", err)
	}
}

func self(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// runWrapped runs argv confined by p, with the test binary as the helper,
// and returns its exit code and combined output.
func runWrapped(t *testing.T, p Policy, env []string, argv ...string) (int, string) {
	t.Helper()
	return runWrappedFiles(t, p, env, nil, nil, argv...)
}

// runWrappedFiles is runWrapped with stdin (nil: /dev/null) and files
// passed as fds 3 and up.
func runWrappedFiles(t *testing.T, p Policy, env []string, stdin *os.File, files []*os.File, argv ...string) (int, string) {
	t.Helper()
	wrapped, err := Wrap(p, argv, self(t))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(wrapped[0], wrapped[1:]...)
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir(), "TMPDIR="}, env...)
	cmd.ExtraFiles = files
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String()
	}
	t.Fatalf("running %v: %v", wrapped, err)
	return 0, ""
}

// workspacePolicy confines writes to ws alone (no /tmp, no $TMPDIR: the
// test directories are under them).
func workspacePolicy(ws string) Policy {
	return Policy{Mode: WorkspaceWrite, Cwd: ws, ExcludeSlashTmp: true, ExcludeTmpdirEnvVar: true}
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func TestAvailable(t *testing.T) {
	abi, err := Available()
	if err != nil {
		t.Skipf("no Landlock: %v", err)
	}
	t.Logf("Landlock ABI %d", abi)
	if abi < 1 {
		t.Fatalf("abi %d with no error", abi)
	}
	if err := Check(ReadOnly); err != nil {
		t.Fatal(err)
	}
}

func TestWorkspaceWriteDeniesWritesOutside(t *testing.T) {
	needLandlock(t)
	ws, outside := t.TempDir(), t.TempDir()
	code, out := runWrapped(t, workspacePolicy(ws), nil, "sh", "-c",
		fmt.Sprintf("echo in > %s/in.txt && mkdir %s/sub && mv %s/in.txt %s/sub/in.txt && echo out > %s/x.txt",
			ws, ws, ws, ws, outside))
	if code == 0 {
		t.Fatalf("write outside the workspace succeeded: %s", out)
	}
	if !exists(filepath.Join(ws, "sub", "in.txt")) {
		t.Fatalf("write (and rename) inside the workspace failed: %s", out)
	}
	if exists(filepath.Join(outside, "x.txt")) {
		t.Fatal("file written outside the workspace")
	}
	if !strings.Contains(out, "Permission denied") || !LikelyDenied(WorkspaceWrite, code, out) {
		t.Fatalf("exit %d, output %q: not reported as a sandbox denial", code, out)
	}
}

func TestDangerFullAccessAllowsWritesOutside(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	p := Policy{Mode: DangerFullAccess}
	wrapped, err := Wrap(p, []string{"sh", "-c", "echo out > " + outside + "/x.txt"}, self(t))
	if err != nil || wrapped[0] != "sh" {
		t.Fatalf("danger-full-access wrapped: %v %v", wrapped, err)
	}
	code, out := runWrapped(t, p, nil, "sh", "-c", "echo out > "+outside+"/x.txt && echo in > "+ws+"/y.txt")
	if code != 0 || !exists(filepath.Join(outside, "x.txt")) || !exists(filepath.Join(ws, "y.txt")) {
		t.Fatalf("exit %d: %s", code, out)
	}
}

func TestReadOnlyDeniesWritesButReads(t *testing.T) {
	needLandlock(t)
	ws, other := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "data.txt"), []byte("readable\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := Policy{Mode: ReadOnly, Cwd: ws}
	code, out := runWrapped(t, p, nil, "sh", "-c", "cat "+other+"/data.txt && ls "+ws+" >/dev/null && echo ok > /dev/null")
	if code != 0 || !strings.Contains(out, "readable") {
		t.Fatalf("reads failed under read-only: exit %d: %s", code, out)
	}
	code, out = runWrapped(t, p, nil, "sh", "-c", "echo x > "+ws+"/f.txt")
	if code == 0 || exists(filepath.Join(ws, "f.txt")) {
		t.Fatalf("write in the workspace allowed under read-only: exit %d %s", code, out)
	}
	if !LikelyDenied(ReadOnly, code, out) {
		t.Fatalf("not reported as denied: %d %q", code, out)
	}
}

func TestWritableRootsAndTmp(t *testing.T) {
	needLandlock(t)
	ws, extra, denied := t.TempDir(), t.TempDir(), t.TempDir()
	p := workspacePolicy(ws)
	p.WritableRoots = []string{extra, filepath.Join(extra, "missing")}
	code, out := runWrapped(t, p, nil, "sh", "-c", "echo x > "+extra+"/e.txt; echo y > "+denied+"/d.txt")
	if !exists(filepath.Join(extra, "e.txt")) || exists(filepath.Join(denied, "d.txt")) || code == 0 {
		t.Fatalf("extra root: exit %d %s", code, out)
	}
	// By default $TMPDIR is writable: point it at a directory of its own.
	tmp := t.TempDir()
	p = Policy{Mode: WorkspaceWrite, Cwd: ws, ExcludeSlashTmp: true}
	code, out = runWrapped(t, p, []string{"TMPDIR=" + tmp}, "sh", "-c", "echo t > $TMPDIR/t.txt")
	if code != 0 || !exists(filepath.Join(tmp, "t.txt")) {
		t.Fatalf("$TMPDIR not writable: exit %d %s", code, out)
	}
	p.ExcludeTmpdirEnvVar = true
	code, _ = runWrapped(t, p, []string{"TMPDIR=" + tmp}, "sh", "-c", "echo t > $TMPDIR/u.txt")
	if code == 0 || exists(filepath.Join(tmp, "u.txt")) {
		t.Fatal("$TMPDIR writable although excluded")
	}
}

// listen accepts connections on a loopback port until the test ends.
func listen(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String()
}

func TestNetworkDeniedWithoutNetworkAccess(t *testing.T) {
	needLandlock(t)
	addr := listen(t)
	ws := t.TempDir()
	for _, target := range []string{"tcp!" + addr, "udp!" + addr, "tcp6![::1]:1"} {
		code, out := runWrapped(t, workspacePolicy(ws), []string{dialEnv + "=" + target}, self(t))
		t.Logf("%s: exit %d: %s", target, code, strings.TrimSpace(out))
		if code == 0 || strings.Contains(out, "connected") {
			t.Fatalf("%s: connected from the sandbox: %s", target, out)
		}
		if !LikelyDenied(WorkspaceWrite, code, out) {
			t.Fatalf("%s: exit %d %q not reported as denied", target, code, out)
		}
	}
	// Read-only denies the network too.
	if code, out := runWrapped(t, Policy{Mode: ReadOnly}, []string{dialEnv + "=tcp!" + addr}, self(t)); code == 0 {
		t.Fatalf("read-only connected: %s", out)
	}
	// And with network_access the same dial works.
	p := workspacePolicy(ws)
	p.NetworkAccess = true
	if code, out := runWrapped(t, p, []string{dialEnv + "=tcp!" + addr}, self(t)); code != 0 || !strings.Contains(out, "connected") {
		t.Fatalf("network_access: exit %d %s", code, out)
	}
	// AF_UNIX stays available (socketpair, local IPC).
	if code, out := runWrapped(t, workspacePolicy(ws), nil, "sh", "-c", "echo hi | cat"); code != 0 {
		t.Fatalf("pipes: exit %d %s", code, out)
	}
}

// A TCP socket created outside the sandbox, where the seccomp filter never
// saw it, and handed to the command (as its stdin, which it keeps) still
// cannot connect without network access.
func TestPassedSocketCannotConnect(t *testing.T) {
	needLandlock(t)
	addr := listen(t)
	run := func(p Policy) (int, string) {
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		sock := os.NewFile(uintptr(fd), "socket")
		defer sock.Close()
		return runWrappedFiles(t, p, []string{dialEnv + "=stdin!" + addr}, sock, nil, self(t))
	}
	code, out := run(workspacePolicy(t.TempDir()))
	if code == 0 || !strings.Contains(out, "connect: operation not permitted") {
		t.Fatalf("passed socket: exit %d %q", code, out)
	}
	p := workspacePolicy(t.TempDir())
	p.NetworkAccess = true
	if code, out := run(p); code != 0 {
		t.Fatalf("passed socket with network access: exit %d %q", code, out)
	}
}

func TestHelperExitCodes(t *testing.T) {
	needLandlock(t)
	ws := t.TempDir()
	script := filepath.Join(ws, "noexec.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		argv     []string
		wantCode int
		wantOut  string
	}{
		{"not found", []string{"no-such-command-xyz"}, ExitNotFound, "codexd sandbox: no-such-command-xyz: command not found"},
		{"missing path", []string{"/nonexistent/cmd"}, ExitNotFound, "command not found"},
		{"not executable", []string{script}, ExitCannotRun, "codexd sandbox: " + script + ": permission denied"},
		{"command's own code", []string{"sh", "-c", "exit 7"}, 7, ""},
		{"runs", []string{"echo", "hello"}, 0, "hello"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out := runWrapped(t, workspacePolicy(ws), nil, c.argv...)
			if code != c.wantCode || !strings.Contains(out, c.wantOut) {
				t.Fatalf("exit %d %q, want %d %q", code, out, c.wantCode, c.wantOut)
			}
		})
	}
	bad := map[string][]string{
		"no separator":  {"{}", "true"},
		"bad json":      {"{", "--", "true"},
		"unknown field": {`{"mode":"read-only","bogus":1}`, "--", "true"},
		"unknown mode":  {`{"mode":"yolo"}`, "--", "true"},
		"relative cwd":  {`{"mode":"workspace-write","cwd":"rel"}`, "--", "true"},
		"no command":    {`{"mode":"read-only"}`, "--"},
	}
	for name, args := range bad {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(self(t), append([]string{HelperArg}, args...)...)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != ExitCannotRun || !strings.HasPrefix(string(out), "codexd sandbox: ") {
				t.Fatalf("err %v output %q", err, out)
			}
		})
	}
}

// Where the kernel has no Landlock the confined modes are refused, by the
// helper and by Check; nothing runs.
func TestRefusedWithoutLandlock(t *testing.T) {
	noLandlock := func() (int, error) { return 0, syscall.ENOSYS }
	marker := filepath.Join(t.TempDir(), "ran")
	for _, mode := range []Mode{ReadOnly, WorkspaceWrite} {
		p := Policy{Mode: mode, Cwd: t.TempDir()}
		enc, _ := encodePolicy(p)
		var stderr bytes.Buffer
		code := helperMain([]string{enc, "--", "touch", marker}, []string{"PATH=/usr/bin:/bin"}, noLandlock, &stderr, false)
		if code != ExitCannotRun || exists(marker) {
			t.Fatalf("%s: exit %d, ran=%v", mode, code, exists(marker))
		}
		if !strings.Contains(stderr.String(), "cannot be enforced") || !strings.Contains(stderr.String(), "refusing") {
			t.Fatalf("%s: message %q", mode, stderr.String())
		}
	}
	saved := probeABI
	t.Cleanup(func() { probeABI = saved })
	probeABI = noLandlock
	if _, err := Available(); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Available: %v", err)
	}
	for _, mode := range []Mode{ReadOnly, WorkspaceWrite} {
		if err := Check(mode); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "refusing") {
			t.Fatalf("Check(%s) = %v", mode, err)
		}
	}
	if err := Check(DangerFullAccess); err != nil {
		t.Fatalf("danger-full-access refused: %v", err)
	}
	if err := Check("bogus"); !errors.Is(err, ErrUnknownMode) {
		t.Fatalf("unknown mode: %v", err)
	}
	probeABI = func() (int, error) { return 0, nil }
	if _, err := Available(); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("ABI 0 accepted: %v", err)
	}
}

// Landlock checks a file when it is opened, not when an open descriptor is
// written: a descriptor the helper inherited (leaked by whatever started
// the server, say) would let a confined command write outside the
// workspace. The command gets stdin, stdout and stderr only.
func TestInheritedDescriptorsAreClosed(t *testing.T) {
	needLandlock(t)
	ws, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "leaked.txt")
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range []Policy{workspacePolicy(ws), {Mode: ReadOnly}} {
		code, out := runWrappedFiles(t, p, nil, nil, []*os.File{f}, "sh", "-c", "echo escaped >&3")
		if data, _ := os.ReadFile(target); len(data) != 0 || code == 0 {
			t.Fatalf("%s: wrote %q outside the workspace through fd 3 (exit %d: %s)", p.Mode, data, code, out)
		}
	}
	// The standard descriptors still work.
	if code, out := runWrapped(t, workspacePolicy(ws), nil, "sh", "-c", "echo out; echo err >&2"); code != 0 || out != "out\nerr\n" {
		t.Fatalf("stdio: exit %d %q", code, out)
	}
}

// Landlock does not take capabilities away, and a command run as root
// would keep them: mknod a block device in the workspace and write the
// disk through it, load a kernel module, attach BPF. A confined command
// has no capabilities, whoever runs it.
func TestConfinedCommandsHaveNoCapabilities(t *testing.T) {
	needLandlock(t)
	ws := t.TempDir()
	for _, p := range []Policy{workspacePolicy(ws), {Mode: ReadOnly}} {
		code, out := runWrapped(t, p, nil, "grep", "^Cap", "/proc/self/status")
		if code != 0 {
			t.Fatalf("%s: exit %d %s", p.Mode, code, out)
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if _, set, _ := strings.Cut(line, "\t"); set != "0000000000000000" {
				t.Fatalf("%s: %s", p.Mode, out)
			}
		}
	}
	// A character device like /dev/null's: harmless even if it were made.
	code, out := runWrapped(t, workspacePolicy(ws), nil, "mknod", filepath.Join(ws, "null"), "c", "1", "3")
	if code == 0 || exists(filepath.Join(ws, "null")) {
		t.Fatalf("mknod in the workspace: exit %d %s", code, out)
	}
}

// A service listening on a UNIX socket outside the sandbox (the Docker
// daemon, the session bus that systemd-run --user talks to, an ssh-agent)
// would run or write whatever a confined command asks for: without network
// access, a confined command cannot connect to one. With it, it can.
func TestUnixServicesOutsideAreUnreachableWithoutNetwork(t *testing.T) {
	needLandlock(t)
	path := filepath.Join(t.TempDir(), "service.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	ws := t.TempDir()
	for _, p := range []Policy{workspacePolicy(ws), {Mode: ReadOnly}} {
		code, out := runWrapped(t, p, []string{dialEnv + "=unix!" + path}, self(t))
		if code == 0 || strings.Contains(out, "connected") {
			t.Fatalf("%s: reached a UNIX service outside the sandbox: %s", p.Mode, out)
		}
		if !LikelyDenied(p.Mode, code, out) {
			t.Fatalf("%s: exit %d %q not reported as denied", p.Mode, code, out)
		}
	}
	p := workspacePolicy(ws)
	p.NetworkAccess = true
	if code, out := runWrapped(t, p, []string{dialEnv + "=unix!" + path}, self(t)); code != 0 || !strings.Contains(out, "connected") {
		t.Fatalf("network access: exit %d %s", code, out)
	}
}
