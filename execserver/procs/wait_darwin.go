package procs

import (
	"errors"
	"syscall"
)

// waitReaps says whether waitExit reaps the child. On macOS it does: there
// is no waitid(WNOWAIT) to learn the exit code of a child and leave it a
// zombie, so a group is only signalled while its leader runs, and leaders
// are never pinned (degraded, next to Linux).
const waitReaps = true

// waitExit blocks until pid has terminated, reaps it and returns its exit
// code, with 128+N for death by signal N.
func waitExit(pid int) (int, error) {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return -1, err
		}
		break
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return ws.ExitStatus(), nil
}
