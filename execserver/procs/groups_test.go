//go:build linux

package procs

import (
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// leaveMember starts a process that leaves a member of its group running
// with its output closed, waits until the process is closed, and returns
// it with the member's pid.
func leaveMember(t *testing.T, m *Manager, id string) (*Process, int) {
	t.Helper()
	p := start(t, m, StartOptions{ID: id, Argv: []string{"sh", "-c", "sleep 100 >/dev/null 2>&1 & echo $!"}})
	o := summarize(t, pump(t, p))
	pid, err := strconv.Atoi(strings.TrimSpace(o.out[StreamStdout]))
	if err != nil {
		t.Fatalf("member pid %q", o.out[StreamStdout])
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	<-p.Done()
	return p, pid
}

// TestClosedLeaderPinsItsGroup: a closed process whose group still has a
// member keeps its leader unreaped, so that the group id cannot go to
// anyone else; once the group is empty the leader is reaped.
func TestClosedLeaderPinsItsGroup(t *testing.T) {
	m := newManager(t, Config{})
	p, member := leaveMember(t, m, "pinned")
	if st := procState(p.Pid()); st != "Z" {
		t.Fatalf("leader %d of a group with a live member: state %q, want a zombie", p.Pid(), st)
	}
	syscall.Kill(member, syscall.SIGKILL)
	waitUnpinned(t, m, deadline(t, 20*time.Second))
	if st := procState(p.Pid()); st != "" && st != "Z" {
		t.Fatalf("pid %d: %q", p.Pid(), st)
	}
	p.mu.Lock()
	reaped := p.reaped
	p.mu.Unlock()
	if !reaped {
		t.Fatal("the leader was not reaped once its group was empty")
	}
}

// TestKillAllNeverSignalsAReusedGroupID: a process that closed with an
// empty group is reaped, and its pid may then be reused by anyone, here
// (simulated) by the leader of another session's group. KillAll of the
// first session must not touch that group or its members.
func TestKillAllNeverSignalsAReusedGroupID(t *testing.T) {
	a, b := newManager(t, Config{}), newManager(t, Config{})
	gone := start(t, a, StartOptions{ID: "gone", Argv: []string{"true"}})
	<-gone.Done()
	waitUnpinned(t, a, deadline(t, 20*time.Second))
	// Another session's process, with a member of its group.
	other := start(t, b, StartOptions{ID: "other", Argv: []string{"sh", "-c", "sleep 100 & echo $!; wait"}})
	member, err := strconv.Atoi(strings.TrimSpace(readUntil(t, other, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(member, syscall.SIGKILL) })
	// The reaped leader's pid now names the other session's group.
	gone.mu.Lock()
	gone.pid = other.Pid()
	gone.mu.Unlock()
	a.KillAll()
	if st := procState(member); st != "S" && st != "R" {
		t.Fatalf("a member of another session's group was signalled: state %q", st)
	}
	if st := procState(other.Pid()); st != "S" && st != "R" {
		t.Fatalf("another session's leader was signalled: state %q", st)
	}
}

// TestKillAllSparesOtherSessions: with members left behind in one session,
// killing it leaves another session's processes alone.
func TestKillAllSparesOtherSessions(t *testing.T) {
	a, b := newManager(t, Config{}), newManager(t, Config{})
	_, memberA := leaveMember(t, a, "a")
	_, memberB := leaveMember(t, b, "b")
	running := start(t, b, StartOptions{ID: "running", Argv: []string{"sh", "-c", "setsid sleep 100 & echo $!; wait"}})
	escapedB, err := strconv.Atoi(strings.TrimSpace(readUntil(t, running, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(escapedB, syscall.SIGKILL) })
	a.KillAll()
	if !diesWithin(t, memberA, 5*time.Second) {
		t.Fatalf("member %d of the killed session survived", memberA)
	}
	for _, pid := range []int{memberB, escapedB, running.Pid()} {
		if st := procState(pid); st != "S" && st != "R" {
			t.Fatalf("pid %d of the other session: state %q", pid, st)
		}
	}
	b.KillAll()
	for _, pid := range []int{memberB, escapedB} {
		if !diesWithin(t, pid, 5*time.Second) {
			t.Fatalf("pid %d survived its session's KillAll", pid)
		}
	}
}
