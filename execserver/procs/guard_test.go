//go:build linux

package procs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const guardServerEnv = "CODEXD_TEST_GUARD_SERVER"

// A server killed with SIGKILL leaves nothing running: not the command it
// started (PR_SET_PDEATHSIG did that much before), nor the command's own
// children, in its group or gone to a session of their own, nor the
// guard. The server is this test binary run as guardServer, in a process
// of its own; its command starts a grandchild in its group and one with
// setsid, each writing its pid to a file. Without the guard, both
// grandchildren were reparented to init and kept running.
func TestGuardKillsWhatAKilledServerLeft(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), guardServerEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	server := cmd.Process.Pid
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- strings.TrimSpace(line)
	}()
	var guardPid int
	select {
	case line := <-lines:
		if _, err := fmt.Sscanf(line, "ready guard=%d", &guardPid); err != nil || guardPid <= 0 {
			t.Fatalf("server: %q", line)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not start its command")
	}
	// Each process is watched through a pidfd opened before the kill, so
	// that its pid cannot have been reused when it is found gone.
	watch := map[string]int{"guard": guardPid}
	for _, name := range []string{"child", "grandchild", "setsid"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("%s: %q", name, b)
		}
		watch[name] = pid
	}
	fds := map[string]int{}
	for name, pid := range watch {
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			t.Fatalf("%s (pid %d) is not running before the kill: %v", name, pid, err)
		}
		defer unix.Close(fd)
		fds[name] = fd
	}
	if err := unix.Kill(server, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(20 * time.Second)
	for name, fd := range fds {
		if err := waitPidfd(fd, deadline); err != nil {
			_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) // leave nothing behind
			t.Errorf("%s (pid %d) outlived the server killed with SIGKILL: %v", name, watch[name], err)
		}
	}
}

// waitPidfd waits until the process of fd has exited (a pidfd polls
// readable then), or the deadline.
func waitPidfd(fd int, deadline time.Time) error {
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return errors.New("still running")
		}
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(left.Milliseconds())+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
	}
}

// guardServer is the server of TestGuardKillsWhatAKilledServerLeft: with
// the guard on, it starts a command whose children outlive it unless
// killed, says so with the guard's pid, and waits to be killed.
func guardServer(dir string) int {
	_ = EnableSubreaper() // as codexd does
	EnableGuard()
	m := NewManager(Config{})
	script := fmt.Sprintf(`sleep 1000 >/dev/null 2>&1 & echo $! > %[1]s/grandchild
setsid sleep 1000 >/dev/null 2>&1 & echo $! > %[1]s/setsid
echo $$ > %[1]s/child
echo started
exec sleep 1000`, dir)
	p, err := m.Start(StartOptions{ID: "guarded", Argv: []string{"sh", "-c", script}, Env: testPath})
	if err != nil {
		fmt.Println("start:", err)
		return 1
	}
	var out string
	var after uint64
	for !strings.Contains(out, "started") {
		r, err := p.Read(context.Background(), ReadOptions{AfterSeq: after, MaxBytes: NoByteLimit, Wait: 10 * time.Second})
		if err != nil || r.Closed {
			fmt.Println("read:", err, out)
			return 1
		}
		for _, c := range r.Chunks {
			out += string(c.Data)
		}
		after = r.NextSeq - 1
	}
	if err := GuardError(); err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Printf("ready guard=%d\n", guardPidForTest())
	select {} // until killed
}

// The guard lets go of a group the server released, and kills only
// processes of the groups it holds whose start is not before their
// leader's.
func TestGuardKillsOnlyTheGroupsItHolds(t *testing.T) {
	start := func() (*exec.Cmd, procInfo) {
		t.Helper()
		c := exec.Command("sleep", "1000")
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		info, err := readProcInfo(c.Process.Pid, make([]byte, 1024))
		if err != nil {
			t.Fatal(err)
		}
		return c, info
	}
	released, a := start()
	younger, b := start() // its leader's start, as the guard got it, is after its own
	held, c := start()
	input := fmt.Sprintf("+%d %d\n-%d\n+%d %d\n+%d %d\nnot a line\n+x\n",
		a.pid, a.start, a.pid, b.pid, b.start+1_000_000, c.pid, c.start)
	if code := guardMain(strings.NewReader(input)); code != 0 {
		t.Fatalf("guardMain: %d", code)
	}
	if err := held.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the held group's leader: %v", err)
	}
	for name, cmd := range map[string]*exec.Cmd{"released": released, "younger": younger} {
		if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
			t.Errorf("the %s group's leader was killed: %v", name, err)
		}
	}
}

func guardPidForTest() int {
	guard.mu.Lock()
	defer guard.mu.Unlock()
	return guard.pid
}
