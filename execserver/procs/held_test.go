//go:build linux

package procs

import (
	"context"
	"testing"
	"time"
)

// TestHeldFromStartLosesNothing starts a child that writes far more than
// the ring holds, with its output held from the start; the consumer takes
// its time, and still gets every byte, in seq order, with no eviction.
func TestHeldFromStartLosesNothing(t *testing.T) {
	m := NewManager(Config{RingBytes: 16 << 10, ChunkSize: 4 << 10})
	defer m.Close()
	const total = 200000
	p, err := m.Start(StartOptions{ID: "p", Argv: []string{"head", "-c", "200000", "/dev/zero"}, Env: testPath, Held: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var after uint64
	got := 0
	for {
		if err := p.Wait(ctx, after); err != nil {
			t.Fatalf("after seq %d (%d bytes): %v", after, got, err)
		}
		b := p.Events(after, -1)
		if b.Evicted != 0 {
			t.Fatalf("%d chunks evicted after seq %d while held", b.Evicted, after)
		}
		closed := false
		for _, ev := range b.Events {
			if ev.Seq != after+1 {
				t.Fatalf("seq %d after %d", ev.Seq, after)
			}
			after = ev.Seq
			got += len(ev.Data)
			closed = closed || ev.Kind == EventClosed
		}
		p.Ack(after)
		if closed {
			break
		}
	}
	if got != total {
		t.Fatalf("got %d bytes, want %d", got, total)
	}
}
