package procs

import (
	"runtime"
	"sync"
	"syscall"
)

// A command must not outlive the server: when the server is killed (even
// with SIGKILL, which leaves it no chance to clean up), the kernel kills
// each child it started, through PR_SET_PDEATHSIG. That signal fires when
// the *thread* that forked the child ends, not the process, and Go may end
// a thread (one whose goroutine exits locked to it); so every child is
// forked from one thread, locked to a goroutine that does not return while
// any child it forked is unreaped. With no child left it unlocks and
// returns, leaving the thread to Go's pool (and tests with no goroutine
// behind); the next spawn starts it again.
//
// It reaches the child the server started (the shell, or what the shell
// exec'd), not that child's own children: those are left to the process
// group and session kill, the subreaper, and a cgroup (Config.CgroupRoot).
var spawner struct {
	mu   sync.Mutex
	live int         // children forked here and not yet reaped, or being forked
	work chan func() // the spawn thread's queue; nil when it is not running
}

// onSpawnThread runs f, which forks one child, on the spawn thread, and
// waits for it. The caller calls spawnReleased once that child is reaped,
// or at once if f forked nothing.
func onSpawnThread(f func()) {
	spawner.mu.Lock()
	if spawner.work == nil {
		spawner.work = make(chan func())
		go spawnLoop(spawner.work)
	}
	w := spawner.work
	spawner.live++ // w stays open while this is counted
	spawner.mu.Unlock()
	done := make(chan struct{})
	w <- func() {
		defer close(done)
		f()
	}
	<-done
}

func spawnLoop(w chan func()) {
	runtime.LockOSThread()
	for f := range w {
		f()
	}
	runtime.UnlockOSThread()
}

// spawnReleased says a child forked through onSpawnThread is reaped (or
// was never forked).
func spawnReleased() {
	spawner.mu.Lock()
	defer spawner.mu.Unlock()
	spawner.live--
	if spawner.live == 0 && spawner.work != nil {
		close(spawner.work)
		spawner.work = nil
	}
}

// dieWithServer makes the child get SIGKILL when the server dies.
func dieWithServer(attr *syscall.SysProcAttr) *syscall.SysProcAttr {
	attr.Pdeathsig = syscall.SIGKILL
	return attr
}
