package store

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/codexd/codexd/agent"
)

// A reader that finds a rollout the index does not know indexes what it
// read; if the thread is written meanwhile, what it read is older than
// what the writer recorded, and must not replace it. (TestConcurrentThreads
// saw a thread listed without the name it had been given, in a fresh-clone
// CI run: a Read that looked for the thread before its writer's first
// index update recorded the rollout as it had been after its first turn,
// after the writer's last update.)
func TestIndexingAReadDoesNotUndoAWrite(t *testing.T) {
	e := newEnv(t)
	id := testID(7)
	w, err := e.s.Create(bg, meta(id, 7))
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, w, turnRecords("t0", 0, "first")...)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// The index does not know the thread (it was written while the index
	// was unavailable, say): the next lookup reads the rollout.
	if err := e.s.ix.remove(bg, id); err != nil {
		t.Fatal(err)
	}
	read, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	e.s.testHookIndexRead = func(string) {
		if !first.CompareAndSwap(false, true) {
			return
		}
		close(read)
		select {
		case <-release:
		case <-time.After(30 * time.Second):
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := e.s.Read(bg, id)
		done <- err
	}()
	<-read // the reader has read the rollout, unnamed
	if err := e.s.SetName(bg, id, "named"); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	p, err := e.s.List(bg, agent.ThreadQuery{Limit: 10})
	if err != nil || len(p.Threads) != 1 {
		t.Fatalf("listed %+v: %v", p, err)
	}
	if got := p.Threads[0]; got.Name != "named" {
		t.Fatalf("listed %+v, want it named", got)
	}
}
