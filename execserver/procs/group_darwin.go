package procs

import "syscall"

// On macOS there is no /proc and no pidfd: the processes of a session
// are reached by their group only (degraded, next to Linux; see
// group_linux.go).

type procInfo struct{}

// signalVerified does nothing: a process cannot be signalled without the
// risk of its pid having been reused.
func signalVerified(procInfo, syscall.Signal) {}

// groupMembersAlive reports no member: leaders are reaped as they exit
// (waitReaps), so nothing is pinned.
func groupMembersAlive(map[int]bool) (map[int]bool, error) { return map[int]bool{}, nil }

// stopTree finds nothing beyond the groups.
func stopTree(map[int]bool) []procInfo { return nil }
