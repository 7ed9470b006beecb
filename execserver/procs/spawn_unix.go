//go:build linux || darwin

package procs

import (
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"

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

// spawn starts the child. cgroup, when not nil, is the directory of the
// cgroup it is born in.
func spawn(opts *StartOptions, rows, cols uint16, cgroup *os.File) (*spawned, error) {
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
	cwd := childCwd(opts)
	defer runtime.KeepAlive(opts.CwdDir)
	if opts.TTY {
		return spawnPTY(prog, argv, env, cwd, rows, cols, cgroup)
	}
	return spawnPipes(prog, argv, env, cwd, opts.PipeStdin, cgroup)
}

func spawnPipes(prog string, argv, env []string, cwd string, pipeStdin bool, cgroup *os.File) (s *spawned, err error) {
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
		Sys:   dieWithServer(inCgroup(&syscall.SysProcAttr{Setsid: true}, cgroup)),
	})
	if err != nil {
		return nil, err
	}
	s.proc = proc
	s.closers = parentEnds
	return s, nil
}

func spawnPTY(prog string, argv, env []string, cwd string, rows, cols uint16, cgroup *os.File) (s *spawned, err error) {
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
		Sys: dieWithServer(inCgroup(&syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}, cgroup)),
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
