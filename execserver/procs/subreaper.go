package procs

import (
	"os"
	"sync"
)

// The children this process started, and, in subreaper mode, the orphans
// it adopted.
//
// A descendant whose parent dies is normally reparented to init, out of
// reach. EnableSubreaper makes this process a child subreaper: orphans of
// its descendants come back to it instead, so it reaps them (no zombie is
// left to init) and can kill them. Which session an adopted orphan came
// from is known by its group or session id while that id is pinned (see
// group_linux.go); one that left with setsid and then lost its parent can
// no longer be told apart, and is killed by KillAdopted when the server
// shuts down (or, exactly, through a cgroup: Config.CgroupRoot).
var children struct {
	// spawn holds the read side while it forks and records the child; a
	// pass of the orphan reaper holds the write side, so that it never
	// takes a child being started for an orphan.
	spawn sync.RWMutex

	mu         sync.Mutex
	tracked    map[int]bool // leaders started here and not yet reaped
	subreaper  bool
	enableOnce sync.Once
	enableErr  error
}

func track(pid int) {
	children.mu.Lock()
	if children.tracked == nil {
		children.tracked = map[int]bool{}
	}
	children.tracked[pid] = true
	children.mu.Unlock()
}

func untrack(pid int) {
	children.mu.Lock()
	delete(children.tracked, pid)
	children.mu.Unlock()
	spawnReaped(pid)
}

func isTracked(pid int) bool {
	children.mu.Lock()
	defer children.mu.Unlock()
	return children.tracked[pid]
}

// spawnTracked spawns a child and records it before an orphan reaper can
// look at the children.
func spawnTracked(opts *StartOptions, rows, cols uint16, cgroup *os.File) (*spawned, error) {
	ensureGuard() // before children.spawn, which its start takes
	children.spawn.RLock()
	defer children.spawn.RUnlock()
	var sp *spawned
	var err error
	slot := onSpawnThread(func() { sp, err = spawn(opts, rows, cols, cgroup) }) // see pdeathsig_linux.go
	if err == nil {
		spawnForked(slot, sp.proc.Pid)
		track(sp.proc.Pid)
		guardWatch(sp.proc.Pid)
	} else {
		spawnReleased(slot)
	}
	return sp, err
}
