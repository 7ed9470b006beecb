//go:build linux

package procs

import (
	"bytes"
	"testing"
)

// FuzzParseStat: any /proc/PID/stat line (the command name may hold
// anything, parentheses and newlines included) parses or is refused, and a
// parsed one has the fields after the last ')'.
func FuzzParseStat(f *testing.F) {
	f.Add([]byte("1234 (sh) S 1 1234 1234 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 5678 1000 100 18446744073709551615\n"))
	f.Add([]byte("77 (a) b) (c) Z 76 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99"))
	f.Add([]byte("1 () R 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := parseStat(42, b)
		if err != nil {
			return
		}
		if info.pid != 42 {
			t.Fatalf("pid %d", info.pid)
		}
		if bytes.LastIndexByte(b, ')') < 0 {
			t.Fatal("parsed a line without a command name")
		}
	})
}
