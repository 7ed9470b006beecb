package procs

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// defaultPath is what musl's execvp searches when the child's environment
// has no PATH; Codex (a musl binary) resolves programs that way.
const defaultPath = "/usr/local/bin:/bin:/usr/bin"

// output is one stream the parent reads.
type output struct {
	f      *os.File
	stream Stream
}

// spawned holds what the parent keeps of a started child. Every *os.File in
// it is non-blocking and registered with Go's poller, so closing it from
// another goroutine unblocks a pending Read or Write: that is what lets
// KillAll and close reclaim goroutines stuck on a descendant that keeps a
// pipe open.
type spawned struct {
	proc    *os.Process
	stdin   *os.File // pipe write end or pty master; nil without stdin
	outputs []output
	closers []*os.File // every parent-side file, closed once at the end
}

func spawn(opts *StartOptions, rows, cols uint16) (*spawned, error) {
	prog, err := resolveProgram(opts.Argv[0], opts.Env, opts.Cwd, opts.TTY)
	if err != nil {
		return nil, err
	}
	argv := slices.Clone(opts.Argv)
	if opts.Arg0 != "" {
		argv[0] = opts.Arg0
	}
	// A nil Env would make os.StartProcess inherit ours; Codex replaces the
	// environment entirely.
	env := make([]string, 0, len(opts.Env))
	for _, k := range slices.Sorted(maps.Keys(opts.Env)) {
		env = append(env, k+"="+opts.Env[k])
	}
	if opts.TTY {
		return spawnPTY(prog, argv, env, opts.Cwd, rows, cols)
	}
	return spawnPipes(prog, argv, env, opts.Cwd, opts.PipeStdin)
}

func spawnPipes(prog string, argv, env []string, cwd string, pipeStdin bool) (s *spawned, err error) {
	var childEnds, parentEnds []*os.File
	defer func() {
		for _, f := range childEnds {
			f.Close()
		}
		if err != nil {
			for _, f := range parentEnds {
				f.Close()
			}
		}
	}()
	s = &spawned{}
	var stdin *os.File
	if pipeStdin {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		childEnds = append(childEnds, r)
		parentEnds = append(parentEnds, w)
		stdin, s.stdin = r, w
	} else {
		f, err := os.Open(os.DevNull)
		if err != nil {
			return nil, err
		}
		childEnds = append(childEnds, f)
		stdin = f
	}
	files := []*os.File{stdin}
	for _, stream := range []Stream{StreamStdout, StreamStderr} {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		childEnds = append(childEnds, w)
		parentEnds = append(parentEnds, r)
		files = append(files, w)
		s.outputs = append(s.outputs, output{f: r, stream: stream})
	}
	// Setsid rather than only Setpgid: Codex puts pipe children in their
	// own session too, so they cannot reach the server's terminal.
	proc, err := os.StartProcess(prog, argv, &os.ProcAttr{
		Dir:   cwd,
		Env:   env,
		Files: files,
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		return nil, err
	}
	s.proc = proc
	s.closers = parentEnds
	return s, nil
}

func spawnPTY(prog string, argv, env []string, cwd string, rows, cols uint16) (s *spawned, err error) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		return nil, err
	}
	defer tty.Close()
	defer func() {
		if err != nil {
			ptmx.Close()
		}
	}()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: rows, Cols: cols}); err != nil {
		return nil, err
	}
	// pty.Open leaves the master in blocking mode (it calls Fd()), and a
	// blocking read cannot be interrupted by Close. Re-wrap a non-blocking
	// duplicate so that the poller owns it.
	master, err := pollableDup(ptmx)
	if err != nil {
		return nil, err
	}
	ptmx.Close()
	ptmx = master
	proc, err := os.StartProcess(prog, argv, &os.ProcAttr{
		Dir:   cwd,
		Env:   env,
		Files: []*os.File{tty, tty, tty},
		// The child leads a new session whose controlling terminal is the
		// pty (its fd 0), so ^C and job control behave as in a terminal.
		Sys: &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0},
	})
	if err != nil {
		return nil, err
	}
	return &spawned{
		proc:    proc,
		stdin:   master,
		outputs: []output{{f: master, stream: StreamPty}},
		closers: []*os.File{master},
	}, nil
}

func pollableDup(f *os.File) (*os.File, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	// os.NewFile registers a non-blocking descriptor with the poller.
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// resolveProgram finds argv[0] the way Codex's spawn does: a name with a
// slash is used as is (relative to cwd, after the child's chdir); any other
// name is searched in the PATH of the child's environment, not the server's.
func resolveProgram(name string, env map[string]string, cwd string, tty bool) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path, ok := env["PATH"]
	if !ok {
		if tty {
			// Codex's pty backend (portable-pty) refuses rather than
			// falling back to a default PATH.
			return "", newError(ErrSpawn, "", "Unable to spawn "+name+" because:\nUnable to resolve the PATH", nil)
		}
		path = defaultPath
	}
	sawEACCES := false
	for _, dir := range strings.Split(path, ":") {
		cand := name
		if dir != "" {
			cand = dir + "/" + name
		}
		statPath := cand
		if !filepath.IsAbs(statPath) && cwd != "" {
			statPath = filepath.Join(cwd, statPath)
		}
		fi, err := os.Stat(statPath)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if fi.Mode()&0o111 == 0 {
			sawEACCES = true
			continue
		}
		if !strings.Contains(cand, "/") {
			// An empty PATH entry means the current directory; keep a slash
			// so that the kernel does not search again.
			cand = "./" + cand
		}
		return cand, nil
	}
	if tty {
		return "", newError(ErrSpawn, "", "Unable to spawn "+name+" because:\nNo viable candidates found in PATH \""+path+"\"", nil)
	}
	if sawEACCES {
		return "", syscall.EACCES
	}
	return "", syscall.ENOENT
}

// Codes of siginfo_t.si_code for SIGCHLD.
const (
	cldExited = 1
	cldKilled = 2
	cldDumped = 3
)

// waitExit blocks until pid has terminated and returns its exit code, with
// 128+N for death by signal N, without reaping it. The zombie keeps the pid,
// and so the process group id, from being reused until we reap it, which is
// what makes a later kill(-pgid) safe.
func waitExit(pid int) (int, error) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EINTR) {
			return -1, err
		}
	}
	// x/sys leaves the SIGCHLD fields of the union opaque: si_pid, si_uid
	// and si_status follow the three ints of the header, which on 64-bit
	// targets are padded to 16 bytes.
	base := unsafe.Pointer(&info)
	off := uintptr(12)
	if unsafe.Sizeof(uintptr(0)) == 8 {
		off = 16
	}
	status := *(*int32)(unsafe.Add(base, off+8))
	switch info.Code {
	case cldExited:
		return int(status), nil
	case cldKilled, cldDumped:
		return 128 + int(status), nil
	}
	return -1, nil
}

// killGroupMembers SIGKILLs the processes of the process groups pgids
// other than each group's leader (pid == pgid): after a leader was reaped, a
// process with that pid is a stranger who reused it, while the members it
// left behind still carry the old group id. /proc is read once, however
// many groups there are: a session that ran thousands of commands keeps
// them all for the closed-process TTL, and scanning the machine's process
// table once per group cost seconds of CPU at teardown.
func killGroupMembers(pgids map[int]struct{}) {
	if len(pgids) == 0 {
		return
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The command name is in parentheses and may hold anything; the
		// fields after it are: state ppid pgrp ...
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 3 {
			continue
		}
		if pgrp, err := strconv.Atoi(f[2]); err == nil && pgrp != pid {
			if _, ok := pgids[pgrp]; ok {
				_ = unix.Kill(pid, unix.SIGKILL)
			}
		}
	}
}
