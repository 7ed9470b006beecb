//go:build !linux

package procs

// GuardArg is the guard's argument; the guard is for Linux only (it reads
// /proc). Elsewhere a command's own children may outlive a server killed
// with SIGKILL.
const GuardArg = "__codexd-procs-guard"

// EnableGuard does nothing here.
func EnableGuard() {}

// GuardError reports nothing here.
func GuardError() error { return nil }

// RunGuardIfRequested does nothing here.
func RunGuardIfRequested() {}

func ensureGuard()     {}
func guardWatch(int)   {}
func guardRelease(int) {}
