//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/codexd/codexd/internal/procstat"
)

// serverLog copies the servers' stderr to ours (-server-log).
var serverLog bool

// server is one exec-server under test, started as a child process.
type server struct {
	name string
	cmd  *exec.Cmd
	url  string
	home string // throwaway CODEX_HOME, removed at stop
	log  bytes.Buffer
}

// startServer starts argv (an exec-server listening on ws://127.0.0.1:0)
// and reads the URL it prints as the first line on stdout.
func startServer(ctx context.Context, name string, argv []string) (*server, error) {
	s := &server{name: name}
	home, err := os.MkdirTemp("", "execbench-home-")
	if err != nil {
		return nil, err
	}
	s.home = home
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home, "RUST_LOG=error")
	cmd.Dir = home
	cmd.Stderr = &s.log
	if serverLog {
		cmd.Stderr = io.MultiWriter(&s.log, os.Stderr)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(home)
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s.cmd = cmd
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	select {
	case l := <-lines:
		s.url = strings.TrimSpace(l)
	case <-time.After(30 * time.Second):
		s.stop()
		return nil, fmt.Errorf("%s printed no URL within 30s; stderr: %s", name, s.log.String())
	case <-ctx.Done():
		s.stop()
		return nil, ctx.Err()
	}
	if !strings.HasPrefix(s.url, "ws://") {
		s.stop()
		return nil, fmt.Errorf("%s printed %q, not a ws:// URL", name, s.url)
	}
	return s, nil
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// stop ends the server and every process it started (they share its
// process group unless they made their own; those are ended by their
// session's teardown, or by SIGPIPE once the server is gone).
func (s *server) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	if s.home != "" {
		os.RemoveAll(s.home)
	}
}

// resetPeak resets VmHWM, so that it then reports the peak from now on.
func resetPeak(pid int) {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// cpuTime is the user+system CPU time the process has used.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ is 100 on Linux
}

// sampler records the maximum RSS of a process until stopped.
type sampler struct {
	stopc chan struct{}
	done  chan struct{}
	max   int64
	trace []int64 // every sample, in kB
}

func sampleRSS(pid int, every time.Duration, limitKB int64, onLimit func()) *sampler {
	sm := &sampler{stopc: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(sm.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			v := procstat.RSSKB(pid)
			sm.trace = append(sm.trace, v)
			if v > sm.max {
				sm.max = v
			}
			if limitKB > 0 && v > limitKB && onLimit != nil {
				onLimit()
				onLimit = nil
			}
			select {
			case <-sm.stopc:
				return
			case <-t.C:
			}
		}
	}()
	return sm
}

func (sm *sampler) stop() int64 {
	close(sm.stopc)
	<-sm.done
	return sm.max
}

// descendants lists the pids of every process below pid.
func descendants(pid int) []int {
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", p))
		for _, f := range tasks {
			b, _ := os.ReadFile(f)
			for _, field := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(field); err == nil {
					out = append(out, c)
					queue = append(queue, c)
				}
			}
		}
	}
	return out
}

// wcharOf reads how many bytes the process has written (/proc/PID/io).
func wcharOf(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return -1
}

// commOf is the process's command name.
func commOf(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// selfCPU is the CPU time this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
