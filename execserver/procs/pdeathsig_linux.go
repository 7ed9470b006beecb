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
// forked from one of a few spawn threads, each locked to a goroutine that
// does not return while a child it forked is unreaped. With no child left
// it unlocks and returns, leaving the thread to Go's pool (and tests with
// no goroutine behind); the next spawn on that slot starts it again.
// Several slots let forks run in parallel, as they did before.
//
// It reaches the child the server started (the shell, or what the shell
// exec'd), not that child's own children: those are left to the process
// group and session kill, the subreaper, a cgroup (Config.CgroupRoot), and,
// when the server is killed, the guard (EnableGuard), which then takes the
// place of this signal.

// spawnSlots is how many forks can run at once.
const spawnSlots = 4

var spawner struct {
	mu    sync.Mutex
	next  int
	slots [spawnSlots]spawnSlot
	owner map[int]int // child pid -> its slot
}

type spawnSlot struct {
	live int         // children forked here and not yet reaped, or being forked
	work chan func() // the thread's queue; nil when it is not running
}

// onSpawnThread runs f, which forks at most one child, on a spawn thread,
// and waits for it. It returns the slot, which the caller passes to
// spawnForked with the child's pid, or to spawnReleased if f forked
// nothing.
func onSpawnThread(f func()) int {
	spawner.mu.Lock()
	i := spawner.next
	spawner.next = (i + 1) % spawnSlots
	s := &spawner.slots[i]
	if s.work == nil {
		s.work = make(chan func())
		go spawnLoop(s.work)
	}
	w := s.work
	s.live++ // w stays open while this is counted
	spawner.mu.Unlock()
	done := make(chan struct{})
	w <- func() {
		defer close(done)
		f()
	}
	<-done
	return i
}

func spawnLoop(w chan func()) {
	runtime.LockOSThread()
	for f := range w {
		f()
	}
	runtime.UnlockOSThread()
}

// spawnForked records that slot forked pid.
func spawnForked(slot, pid int) {
	spawner.mu.Lock()
	defer spawner.mu.Unlock()
	if spawner.owner == nil {
		spawner.owner = map[int]int{}
	}
	spawner.owner[pid] = slot
}

// spawnReaped says the child pid is reaped.
func spawnReaped(pid int) {
	spawner.mu.Lock()
	slot, ok := spawner.owner[pid]
	delete(spawner.owner, pid)
	spawner.mu.Unlock()
	if ok {
		spawnReleased(slot)
	}
}

// spawnReleased ends one count of slot: a child reaped, or none forked.
func spawnReleased(slot int) {
	spawner.mu.Lock()
	defer spawner.mu.Unlock()
	s := &spawner.slots[slot]
	s.live--
	if s.live == 0 && s.work != nil {
		close(s.work)
		s.work = nil
	}
}

// dieWithServer makes the child get SIGKILL when the server dies. With a
// guard running (guard_linux.go) the guard does it instead: it stops the
// child and everything below it before it kills any of them, whereas a
// child that the kernel killed first would orphan its own children (one
// that left with setsid would then be out of the guard's reach).
func dieWithServer(attr *syscall.SysProcAttr) *syscall.SysProcAttr {
	if !guardRunning() {
		attr.Pdeathsig = syscall.SIGKILL
	}
	return attr
}
