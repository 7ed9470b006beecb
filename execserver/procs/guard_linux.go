package procs

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// The guard: no command outlives the server, even one killed with SIGKILL.
//
// PR_SET_PDEATHSIG (pdeathsig_linux.go) kills the children the server
// forked when it dies, but not their own children: `sh -c 'sleep 1000 &
// sleep 1000'` leaves the first sleep running, reparented to init. A
// SIGKILLed server runs no code, so something else must act: a small
// helper process, the server's own binary re-executed with GuardArg, in a
// session of its own. It reads, on a pipe whose only writer is the server,
// the process groups the server starts ("+G START", START the leader's
// start time) and those it lets go ("-G", written before the leader is
// reaped, after which the server never signals G again). When the pipe
// hits end of file the server is gone, however it went, and the guard
// kills what is left of each group it still holds, then exits. After a
// clean shutdown nothing is left and the guard just exits.
//
// Identity, as everywhere in this package, is checked before a signal: a
// process is killed only if its group or session is one of those groups
// (or it descends from such a process), it started no earlier than the
// group's leader, and its pid still has the start time the scan read
// (signalVerified, through a pidfd). A group id stays ours while any
// member is alive, since Linux gives no process a pid that is still some
// group's id; it could only name a stranger after everything of the group
// died and the pid counter wrapped round to it, in the instant between the
// server's death and the guard's scan.

// GuardArg, as the first argument of the server's binary, makes it the
// guard (RunGuardIfRequested).
const GuardArg = "__codexd-procs-guard"

var guard struct {
	// mu serialises the start; it is held while the start takes
	// children.spawn, so a spawn, which holds children.spawn, never
	// takes it: the writes have wmu.
	mu      sync.Mutex
	enabled bool
	started bool
	pid     int
	err     error

	wmu sync.Mutex
	w   *os.File // the pipe to the guard; nil if it is not running
}

// EnableGuard makes this process start a guard (its own executable run
// with GuardArg) at its first spawn, so that what its commands leave
// behind dies with it, even when it is killed with SIGKILL. The binary
// must call RunGuardIfRequested first thing in main. Like EnableSubreaper
// it is for a server process whose children are all started by this
// package; it cannot be undone.
func EnableGuard() {
	guard.mu.Lock()
	guard.enabled = true
	guard.mu.Unlock()
}

// GuardError reports why the guard could not be started, if it could not.
func GuardError() error {
	guard.mu.Lock()
	defer guard.mu.Unlock()
	return guard.err
}

// RunGuardIfRequested runs the guard and exits, if this process was
// started as one; otherwise it returns at once.
func RunGuardIfRequested() {
	if len(os.Args) < 2 || os.Args[1] != GuardArg {
		return
	}
	// Signals meant for the server's terminal or group are not for the
	// guard: it must outlive the server to act.
	signal.Ignore(unix.SIGINT, unix.SIGHUP, unix.SIGQUIT, unix.SIGPIPE, unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU)
	os.Exit(guardMain(os.Stdin))
}

// ensureGuard starts the guard if it is enabled and not started yet. It
// is called before a spawn, outside children.spawn.
func ensureGuard() {
	guard.mu.Lock()
	defer guard.mu.Unlock()
	if !guard.enabled || guard.started {
		return
	}
	guard.started = true
	exe, err := os.Executable()
	if err != nil {
		guard.err = fmt.Errorf("procs guard: %w", err)
		return
	}
	r, w, err := os.Pipe() // close-on-exec: no command inherits the write side
	if err != nil {
		guard.err = fmt.Errorf("procs guard: %w", err)
		return
	}
	cmd := exec.Command(exe, GuardArg)
	cmd.Stdin = r
	// Its own session: neither a signal to the server's group nor a
	// hang-up of its terminal reaches it, and no pdeathsig.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// The orphan reaper must not take it for an orphan (subreaper.go).
	children.spawn.RLock()
	err = cmd.Start()
	if err == nil {
		track(cmd.Process.Pid)
	}
	children.spawn.RUnlock()
	r.Close()
	if err != nil {
		w.Close()
		guard.err = fmt.Errorf("procs guard: %w", err)
		return
	}
	pid := cmd.Process.Pid
	guard.pid = pid
	guard.wmu.Lock()
	guard.w = w
	guard.wmu.Unlock()
	go func() {
		_ = cmd.Wait()
		// A guard that died (it never exits while the server lives)
		// protects nothing: children started from now on die by
		// pdeathsig again.
		guard.wmu.Lock()
		if guard.w != nil {
			guard.w.Close()
			guard.w = nil
		}
		guard.wmu.Unlock()
		untrack(pid)
	}()
}

// guardRunning reports whether a guard watches this process's groups.
func guardRunning() bool {
	guard.wmu.Lock()
	defer guard.wmu.Unlock()
	return guard.w != nil
}

// guardWatch tells the guard that pid leads a new process group.
func guardWatch(pid int) {
	guard.wmu.Lock()
	defer guard.wmu.Unlock()
	if guard.w == nil {
		return
	}
	info, err := readProcInfo(pid, make([]byte, 1024))
	if err != nil {
		return // cannot be: the leader is not reaped yet
	}
	// One write of a short line: atomic on a pipe. A guard that died
	// makes it fail (EPIPE), which changes nothing here.
	_, _ = guard.w.WriteString("+" + strconv.Itoa(pid) + " " + strconv.FormatUint(info.start, 10) + "\n")
}

// guardRelease tells the guard that the group pid leads is let go: it is
// called before the leader is reaped, so the guard never holds a group id
// that could name a stranger's group.
func guardRelease(pid int) {
	guard.wmu.Lock()
	defer guard.wmu.Unlock()
	if guard.w == nil {
		return
	}
	_, _ = guard.w.WriteString("-" + strconv.Itoa(pid) + "\n")
}

// guardMain reads the server's groups from r until end of file, then
// kills what is left of them.
func guardMain(r io.Reader) int {
	groups := map[int]uint64{} // leader pid -> its start time
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if len(line) < 2 {
			continue
		}
		switch line[0] {
		case '+':
			f := strings.Fields(line[1:])
			if len(f) != 2 {
				continue
			}
			pid, err1 := strconv.Atoi(f[0])
			start, err2 := strconv.ParseUint(f[1], 10, 64)
			if err1 == nil && err2 == nil && pid > 0 {
				groups[pid] = start
			}
		case '-':
			if pid, err := strconv.Atoi(line[1:]); err == nil {
				delete(groups, pid)
			}
		}
	}
	// End of file (or a read error, which means the same): the server is
	// gone.
	killLeftovers(groups)
	return 0
}

// killLeftovers kills every live process of the groups (leader pid ->
// start time): members of the groups or sessions, and their descendants
// by parent links. Each found process is stopped first, so that it can
// neither fork out of reach nor die and orphan its children before they
// are found; scans go on until one finds nothing new; then all are
// killed.
func killLeftovers(groups map[int]uint64) {
	if len(groups) == 0 {
		return
	}
	var found []procInfo
	seen := map[int]bool{}
	for pass := 0; pass < 50; pass++ {
		infos, err := scanProcs()
		if err != nil {
			break
		}
		byParent := map[int][]procInfo{}
		var queue []procInfo
		for _, in := range infos {
			byParent[in.ppid] = append(byParent[in.ppid], in)
			if in.zombie || seen[in.pid] {
				continue
			}
			if s, ok := groups[in.pgrp]; ok && in.start >= s {
				queue = append(queue, in)
			} else if s, ok := groups[in.sid]; ok && in.start >= s {
				queue = append(queue, in)
			}
		}
		// Descendants of what was found before are found again by their
		// parents: the stopped ones are still there.
		for _, f := range found {
			queue = append(queue, f)
		}
		more := 0
		for len(queue) > 0 {
			in := queue[0]
			queue = queue[1:]
			if !seen[in.pid] {
				seen[in.pid] = true
				signalVerified(in, unix.SIGSTOP)
				found = append(found, in)
				more++
			}
			for _, ch := range byParent[in.pid] {
				if !ch.zombie && !seen[ch.pid] && ch.start >= in.start {
					queue = append(queue, ch)
				}
			}
		}
		if more == 0 {
			break
		}
	}
	for _, in := range found {
		signalVerified(in, unix.SIGKILL)
	}
}
