package procs

import (
	"bytes"
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// How a session's processes are found and killed without ever signalling
// a stranger.
//
// Every child is started with setsid, so its pid G is also its process
// group and session id. Linux does not hand out a pid while any process,
// zombie or not, still bears it as its pid, group or session id. So while
// the leader G is not reaped, G names our group and session and nothing
// else, and kill(-G) is safe. The leader is therefore kept unreaped (a
// zombie, "pinned") after it exits for as long as anything of its group or
// session is alive (see Manager.sweepPins), and only then reaped: from then
// on G is never signalled again. Without the pin, a member seen with group
// G might as well belong to a stranger who got G after our group emptied.
//
// Processes outside the group are reached one by one, through pidfds: a
// process is identified by its pid and start time as read from /proc, and
// signalled through a pidfd opened before that identity is checked again,
// so a pid reused in between is never signalled.

// procInfo is what /proc/PID/stat says of a process.
type procInfo struct {
	pid, ppid, pgrp, sid int
	start                uint64 // clock ticks after boot
	zombie               bool
}

// readProcInfo reads /proc/PID/stat into buf. It uses the system calls
// directly: an os.File would cost a descriptor's poller set-up and five
// more system calls (fcntl, epoll_ctl) for each of the hundreds of
// processes that a look at /proc reads, and sweepPins looks after every
// command.
func readProcInfo(pid int, buf []byte) (procInfo, error) {
	var path [32]byte
	p := strconv.AppendInt(append(path[:0], "/proc/"...), int64(pid), 10)
	p = append(p, "/stat"...)
	var fd int
	var err error
	for {
		fd, err = unix.Open(string(p), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return procInfo{}, err
	}
	var n int
	for {
		n, err = unix.Read(fd, buf)
		if err != unix.EINTR {
			break
		}
	}
	unix.Close(fd)
	if err != nil {
		return procInfo{}, err
	}
	return parseStat(pid, buf[:n])
}

var errBadStat = errors.New("procs: unreadable /proc stat")

// parseStat parses a stat line. The command name is in parentheses and may
// hold anything, so fields are counted from the last ')'.
func parseStat(pid int, b []byte) (procInfo, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procInfo{}, errBadStat
	}
	// state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	// cmajflt utime stime cutime cstime priority nice num_threads
	// itrealvalue starttime
	var f [20][]byte
	n := 0
	for rest := b[i+1:]; n < len(f); n++ {
		rest = bytes.TrimLeft(rest, " \t\n")
		if len(rest) == 0 {
			break
		}
		end := bytes.IndexAny(rest, " \t\n")
		if end < 0 {
			end = len(rest)
		}
		f[n], rest = rest[:end], rest[end:]
	}
	if n < len(f) {
		return procInfo{}, errBadStat
	}
	info := procInfo{pid: pid, zombie: len(f[0]) == 1 && (f[0][0] == 'Z' || f[0][0] == 'X')}
	var err error
	if info.ppid, err = strconv.Atoi(string(f[1])); err != nil {
		return procInfo{}, errBadStat
	}
	if info.pgrp, err = strconv.Atoi(string(f[2])); err != nil {
		return procInfo{}, errBadStat
	}
	if info.sid, err = strconv.Atoi(string(f[3])); err != nil {
		return procInfo{}, errBadStat
	}
	if info.start, err = strconv.ParseUint(string(f[19]), 10, 64); err != nil {
		return procInfo{}, errBadStat
	}
	return info, nil
}

// scanProcs reads every process of the system.
func scanProcs() ([]procInfo, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 1024)
	out := make([]procInfo, 0, len(names))
	for _, name := range names {
		if name == "" || name[0] < '0' || name[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		info, err := readProcInfo(pid, buf)
		if err != nil {
			continue // gone meanwhile
		}
		out = append(out, info)
	}
	return out, nil
}

// signalVerified sends sig to the process info describes, if it is still
// that process: the pidfd is opened first, then the start time is checked,
// so the signal cannot reach a process that got the pid since the scan.
func signalVerified(info procInfo, sig unix.Signal) {
	fd, err := unix.PidfdOpen(info.pid, 0)
	if err != nil {
		return // gone, or no pidfds (Linux < 5.3): never guess
	}
	defer unix.Close(fd)
	cur, err := readProcInfo(info.pid, make([]byte, 1024))
	if err != nil || cur.start != info.start {
		return
	}
	_ = unix.PidfdSendSignal(fd, sig, nil, 0)
}

// groupMembersAlive reports, for each of the ids, whether a process that is
// not a zombie has it as its group or session id.
func groupMembersAlive(ids map[int]bool) (map[int]bool, error) {
	infos, err := scanProcs()
	if err != nil {
		return nil, err
	}
	alive := map[int]bool{}
	for _, in := range infos {
		if in.zombie {
			continue
		}
		if ids[in.pgrp] {
			alive[in.pgrp] = true
		}
		if ids[in.sid] {
			alive[in.sid] = true
		}
	}
	return alive, nil
}

// stopTree stops (SIGSTOP) what belongs to the groups in ids but is out of
// reach of kill(-G): members of the sessions that moved to another group,
// and descendants that left with setsid, found by their parent links. It
// returns them, for killTree. Stopped processes cannot fork, so two passes
// find whatever forked while the first was under way.
func stopTree(ids map[int]bool) []procInfo {
	var found []procInfo
	seen := map[int]bool{}
	for pass := 0; pass < 2; pass++ {
		infos, err := scanProcs()
		if err != nil {
			return found
		}
		byParent := map[int][]procInfo{}
		ours := map[int]bool{} // pids known to be of the session
		for _, in := range infos {
			byParent[in.ppid] = append(byParent[in.ppid], in)
			if ids[in.pgrp] || ids[in.sid] || ids[in.pid] {
				ours[in.pid] = true
			}
		}
		// Breadth-first from the session's processes along parent links.
		queue := make([]int, 0, len(ours))
		for pid := range ours {
			queue = append(queue, pid)
		}
		for len(queue) > 0 {
			parent := queue[0]
			queue = queue[1:]
			for _, ch := range byParent[parent] {
				if ours[ch.pid] && (ids[ch.pgrp]) {
					continue // reached by kill(-G)
				}
				if seen[ch.pid] {
					continue
				}
				seen[ch.pid] = true
				ours[ch.pid] = true
				queue = append(queue, ch.pid)
				if !ch.zombie {
					signalVerified(ch, unix.SIGSTOP)
					found = append(found, ch)
				}
			}
		}
		// Members of the sessions in other groups that no parent link
		// reached (their parent died and they were reparented).
		for _, in := range infos {
			if !seen[in.pid] && !in.zombie && ids[in.sid] && !ids[in.pgrp] {
				seen[in.pid] = true
				signalVerified(in, unix.SIGSTOP)
				found = append(found, in)
			}
		}
	}
	return found
}
