//go:build linux

package procs

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// readProcInfo reads this process as the kernel sees it, and a pid that
// does not exist is an error, never a zero procInfo.
func TestReadProcInfoSelf(t *testing.T) {
	buf := make([]byte, 1024)
	in, err := readProcInfo(os.Getpid(), buf)
	if err != nil {
		t.Fatal(err)
	}
	sid, err := unix.Getsid(0)
	if err != nil {
		t.Fatal(err)
	}
	if in.pid != os.Getpid() || in.ppid != os.Getppid() || in.pgrp != unix.Getpgrp() || in.sid != sid || in.zombie || in.start == 0 {
		t.Fatalf("got %+v; want pid %d ppid %d pgrp %d sid %d, running, a start time", in, os.Getpid(), os.Getppid(), unix.Getpgrp(), sid)
	}
	if _, err := readProcInfo(1<<30, buf); !errors.Is(err, unix.ENOENT) {
		t.Fatalf("pid 1<<30: err %v, want ENOENT", err)
	}
	infos, err := scanProcs()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, i := range infos {
		found = found || i == in
	}
	if !found {
		t.Fatalf("scanProcs did not list this process (%+v) among %d", in, len(infos))
	}
}

// BenchmarkGroupMembersAlive measures one look at /proc for pinned groups:
// sweepPins does it about 50 ms after each command closes, so codexd
// app-server does it about three times a turn (turnbench's turns run three
// commands). Its cost grows with the number of processes on the machine.
func BenchmarkGroupMembersAlive(b *testing.B) {
	ids := map[int]bool{1 << 30: true} // no such group
	infos, err := scanProcs()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		alive, err := groupMembersAlive(ids)
		if err != nil || len(alive) != 0 {
			b.Fatalf("alive %v, err %v", alive, err)
		}
	}
	b.ReportMetric(float64(len(infos)), "procs")
}
