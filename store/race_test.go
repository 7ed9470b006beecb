//go:build race

package store

// raceEnabled: the race detector is on (tests that only move big buffers
// through one goroutine skip, as it adds nothing but minutes).
const raceEnabled = true
