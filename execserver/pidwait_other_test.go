//go:build !linux

package execserver

import (
	"testing"
	"time"
)

// diesWithin reports whether pid has terminated or does within d. Without
// pidfds, it looks every 10 ms.
func diesWithin(t *testing.T, pid int, d time.Duration) bool {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if !alive(pid) {
			return true
		}
	}
	return !alive(pid)
}
