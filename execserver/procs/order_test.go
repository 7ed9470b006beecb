//go:build linux

package procs

import (
	"fmt"
	"testing"
)

// TestOutputNumberedBeforeExit checks that what a child writes before it
// exits gets its seq before the exit does, as Codex reports it.
func TestOutputNumberedBeforeExit(t *testing.T) {
	m := NewManager(Config{})
	defer m.Close()
	bad := 0
	for i := 0; i < 200; i++ {
		p, err := m.Start(StartOptions{ID: fmt.Sprint(i), Argv: []string{"/bin/echo", "hi"}})
		if err != nil {
			t.Fatal(err)
		}
		<-p.Done()
		b := p.Events(0, -1)
		if b.Events[0].Kind != EventOutput {
			bad++
			t.Logf("%d: %v", i, b.Events)
		}
	}
	if bad > 0 {
		t.Fatalf("%d bad", bad)
	}
}
