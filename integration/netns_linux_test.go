package integration

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/codexd/codexd/internal/netns"
)

// netnsEnv marks the copy of the test binary that runs inside its own
// network namespace.
const netnsEnv = "CODEXD_INTEGRATION_NETNS"

// inNetns reports whether this process is the copy started by runInNetns.
func inNetns() bool { return os.Getenv(netnsEnv) == "1" }

// runInNetns runs the named test again, in a copy of this test binary placed
// in a new network namespace that has only a loopback interface: whatever
// the real Codex tries to reach, it can reach nothing but the servers this
// test starts on 127.0.0.1. As root it needs only CLONE_NEWNET; otherwise it
// also maps the user to root in a new user namespace. The child's log is
// copied into this test's log; a skip in the child skips this test.
func runInNetns(t *testing.T, name string, timeout time.Duration) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("os.Executable: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^"+name+"$", "-test.v", "-test.count=1",
		"-test.timeout="+timeout.String())
	cmd.Env = append(os.Environ(), netnsEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
	if uid, gid := os.Getuid(), os.Getgid(); uid != 0 {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Start()
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) {
		t.Skipf("cannot create a loopback-only network namespace to run the real Codex in (%v); "+
			"run as root or enable unprivileged user namespaces", err)
	}
	if err != nil {
		t.Fatalf("starting %s in a new network namespace: %v", exe, err)
	}
	err = cmd.Wait()
	t.Logf("test run inside a network namespace:\n%s", out.String())
	if ctx.Err() != nil {
		t.Fatalf("the test inside the network namespace did not finish within %s", timeout)
	}
	if err != nil {
		t.Fatalf("the test inside the network namespace failed: %v", err)
	}
	if strings.Contains(out.String(), "--- SKIP: "+name) {
		t.Skip("skipped inside the network namespace; see the log above")
	}
}

// loopbackUp brings up lo, the only interface of a new network namespace,
// without depending on ip(8).
func loopbackUp() error { return netns.LoopbackUp() }
