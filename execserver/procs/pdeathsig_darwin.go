package procs

import "syscall"

// macOS has no PR_SET_PDEATHSIG: a child may outlive a server that is
// killed with SIGKILL (see pdeathsig_linux.go).
func onSpawnThread(f func()) int { f(); return 0 }

func spawnForked(slot, pid int) {}
func spawnReaped(pid int)       {}
func spawnReleased(slot int)    {}

func dieWithServer(attr *syscall.SysProcAttr) *syscall.SysProcAttr { return attr }
