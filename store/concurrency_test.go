package store

import (
	"fmt"
	"sync"
	"testing"

	"github.com/codexd/codexd/agent"
)

// TestConcurrentThreads has many threads append at once, each through its
// own writer, while others list, read and rename: run it with -race.
func TestConcurrentThreads(t *testing.T) {
	e := newEnv(t)
	const threads, turns = 12, 4
	var writers, readers sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 64)
	for r := range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := e.s.List(bg, agent.ThreadQuery{Limit: 5, SortKey: SortUpdatedAt}); err != nil {
					errs <- err
					return
				}
				// Reads of threads being written see whole records only.
				id := testID(100 + (i+r)%threads)
				if th, err := e.s.Read(bg, id); err == nil && th.Skipped != 0 {
					errs <- fmt.Errorf("read %s while appending: skipped %d", id, th.Skipped)
					return
				}
			}
		}()
	}
	for n := range threads {
		writers.Add(1)
		go func() {
			defer writers.Done()
			id := testID(100 + n)
			w, err := e.s.Create(bg, meta(id, n))
			if err != nil {
				errs <- err
				return
			}
			for i := range turns {
				for _, r := range turnRecords(fmt.Sprintf("t%d", i), 100*i, fmt.Sprintf("thread %d", n)) {
					if err := w.Append(r); err != nil {
						errs <- err
						return
					}
				}
				if i == 1 {
					if err := e.s.SetName(bg, id, fmt.Sprintf("name %d", n)); err != nil {
						errs <- err
						return
					}
				}
			}
			if err := w.Close(); err != nil {
				errs <- err
			}
		}()
	}
	writers.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	p, err := e.s.List(bg, agent.ThreadQuery{Limit: 100})
	if err != nil || len(p.Threads) != threads {
		t.Fatalf("listed %d: %v", len(p.Threads), err)
	}
	for _, info := range p.Threads {
		th, err := e.s.Read(bg, info.ID)
		if err != nil || len(th.Turns) != turns || th.Info.Name != info.Name || info.Name == "" || info.Preview != th.Info.Preview {
			// The store's warnings say whether an index update failed.
			t.Fatalf("%s: listed %+v, read %+v: %v; warnings %q", info.ID, info, th, err, e.logs.warnings())
		}
	}
}
