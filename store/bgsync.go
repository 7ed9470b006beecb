package store

import (
	"log/slog"
	"os"
	"sync"
)

// syncer runs a rollout's turn-boundary fsyncs off the append path: the
// TurnCompleted record is written (write(2)) before Append returns, as
// every record is, but its fsync is started, not waited for, so that the
// end of a turn never waits for the disk. An fsync on a busy disk takes
// from under a millisecond to a tenth of a second (longbench measured
// p50 1.1 ms, p99 120 ms on a shared 2-core VM), and the turn's end, and so
// the client's turn/completed, used to wait for it. At most one fsync runs
// per rollout; boundaries that come while it runs are covered by one more.
// The writer's synchronous sync (Sync, Close, archive, revert) waits for
// the fsync in flight first.
//
// It never takes the writer's lock, so that a sync under that lock can
// wait for it.
type syncer struct {
	mu    sync.Mutex
	busy  bool
	again bool          // a boundary came while an fsync ran: one more
	err   error         // the first failure since the last wait
	done  chan struct{} // closed when the fsyncs in flight have ended
}

// fsyncFile is f.Sync (a variable, so that tests can hold or fail it).
var fsyncFile = func(f *os.File) error { return f.Sync() }

// kick asks for an fsync of everything written to f so far and returns at
// once.
func (s *syncer) kick(f *os.File, log *slog.Logger) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy {
		// The running fsync may have started before this write.
		s.again = true
		return
	}
	s.busy = true
	s.done = make(chan struct{})
	go s.run(f, log)
}

func (s *syncer) run(f *os.File, log *slog.Logger) {
	for {
		err := fsyncFile(f)
		s.mu.Lock()
		if err != nil {
			log.Warn("store: syncing a rollout failed", "path", f.Name(), "err", err)
			if s.err == nil {
				s.err = err
			}
		}
		if !s.again {
			s.busy = false
			close(s.done)
			s.mu.Unlock()
			return
		}
		s.again = false
		s.mu.Unlock()
	}
}

// wait waits for the fsyncs in flight and returns the first failure since
// the last wait.
func (s *syncer) wait() error {
	s.mu.Lock()
	busy, done := s.busy, s.done
	s.mu.Unlock()
	if busy {
		<-done
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.err
	s.err = nil
	return err
}
