// The reading side of a process: its numbered events (output chunks,
// exit, close) and the calls that page through them or wait for more.

package procs

import (
	"context"
	"slices"
	"time"
)

// EventKind tells what an Event reports.
type EventKind uint8

const (
	// EventOutput carries a chunk of output (process/output).
	EventOutput EventKind = iota + 1
	// EventExited reports the exit code (process/exited).
	EventExited
	// EventClosed is the last event: the process exited and every output
	// stream reached EOF (process/closed).
	EventClosed
)

func (k EventKind) String() string {
	switch k {
	case EventOutput:
		return "output"
	case EventExited:
		return "exited"
	case EventClosed:
		return "closed"
	}
	return "unknown"
}

// Event is one numbered event of a process. Seqs start at 1 and have no
// gaps across kinds; EventClosed has the highest seq of the process.
type Event struct {
	Seq  uint64
	Kind EventKind
	// Stream and Data are set for EventOutput; Data must not be modified.
	Stream Stream
	Data   []byte
	// ExitCode is set for EventExited: the exit status, or 128+N after
	// death by signal N.
	ExitCode int
}

// EventBatch is the answer of Process.Events.
type EventBatch struct {
	// Events are in seq order and contiguous, except for evicted output.
	Events []Event
	// Evicted counts output chunks after the requested seq that the ring
	// dropped before they could be returned; their seqs are missing from
	// Events. Exited and closed events are never evicted.
	Evicted uint64
}

// ReadOptions are the arguments of process/read.
type ReadOptions struct {
	// AfterSeq selects chunks with a greater seq.
	AfterSeq uint64
	// MaxBytes caps the bytes of the chunks returned, but at least one chunk
	// is returned; NoByteLimit (any negative value) means absent, which also
	// changes NextSeq (see ReadResult).
	MaxBytes int
	// Wait long-polls: Read returns as soon as there is a chunk after
	// AfterSeq, the process is closed, or it has exited with an event after
	// AfterSeq; otherwise when Wait has elapsed.
	Wait time.Duration
}

// ReadResult is the answer of process/read.
type ReadResult struct {
	// Chunks is never nil, so that it encodes as [].
	Chunks []Chunk
	// NextSeq is the seq after the last chunk returned when MaxBytes was
	// given and a chunk was returned; otherwise the process's next unused
	// seq, which counts exited and closed events too. This is Codex's rule.
	NextSeq  uint64
	Exited   bool
	ExitCode int
	Closed   bool
}

// Read answers process/read: see ReadOptions. It returns ctx's error if ctx
// ends before the answer is ready.
func (p *Process) Read(ctx context.Context, o ReadOptions) (ReadResult, error) {
	var deadline <-chan time.Time
	if o.Wait > 0 {
		t := time.NewTimer(o.Wait)
		defer t.Stop()
		deadline = t.C
	}
	expired := o.Wait <= 0
	for {
		p.mu.Lock()
		res := p.readLocked(o.AfterSeq, o.MaxBytes)
		changed := p.changed
		p.mu.Unlock()
		// Codex's rule: an exit counts as news only if some seq after
		// AfterSeq precedes NextSeq.
		newTerminal := res.Exited && o.AfterSeq < res.NextSeq-1
		if len(res.Chunks) > 0 || res.Closed || newTerminal || expired {
			return res, nil
		}
		select {
		case <-changed:
		case <-deadline:
			expired = true
		case <-ctx.Done():
			return ReadResult{}, ctx.Err()
		}
	}
}

func (p *Process) readLocked(afterSeq uint64, maxBytes int) ReadResult {
	res := ReadResult{
		Chunks:   []Chunk{},
		NextSeq:  p.nextSeq,
		Exited:   p.exited,
		ExitCode: p.exitCode,
		Closed:   p.closed,
	}
	total := 0
	for i := p.ring.after(afterSeq); i < p.ring.len(); i++ {
		c := p.ring.at(i)
		if maxBytes >= 0 && len(res.Chunks) > 0 && total+len(c.Data) > maxBytes {
			break
		}
		total += len(c.Data)
		res.Chunks = append(res.Chunks, c)
		if maxBytes >= 0 {
			res.NextSeq = c.Seq + 1
			if total >= maxBytes {
				break
			}
		}
	}
	// The caller uses the data after the lock is released, by when the
	// ring may have reused its buffers: it gets copies, in one buffer.
	data := make([]byte, 0, total)
	for i := range res.Chunks {
		c := &res.Chunks[i]
		n := len(data)
		data = append(data, c.Data...)
		c.Data, c.owner = data[n:len(data):len(data)], nil
	}
	return res
}

// Events returns the events after afterSeq, in seq order, for a consumer
// that pushes them on: output chunks up to maxBytes of data (at least one
// event if any; maxBytes < 0 means no limit), the exit and the close. It
// never blocks; use Wait to sleep until there is more. The data is copied;
// VisitEvents saves the copy.
func (p *Process) Events(afterSeq uint64, maxBytes int) EventBatch {
	var out EventBatch
	p.VisitEvents(afterSeq, maxBytes, func(b EventBatch) {
		out = EventBatch{Events: slices.Clone(b.Events), Evicted: b.Evicted}
		total := 0
		for _, ev := range b.Events {
			total += len(ev.Data)
		}
		data := make([]byte, 0, total)
		for i := range out.Events {
			ev := &out.Events[i]
			n := len(data)
			data = append(data, ev.Data...)
			ev.Data = data[n:len(data):len(data)]
		}
	})
	return out
}

// VisitEvents calls fn with what Events would return, but with the
// process locked and without copying the data: fn must not keep the data
// beyond its return (the process reuses its buffers), nor call the
// process's methods. The output pump encodes the events there, straight
// from the ring.
func (p *Process) VisitEvents(afterSeq uint64, maxBytes int, fn func(EventBatch)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b EventBatch
	if afterSeq < p.evictedThrough {
		b.Evicted = p.evictedThrough - afterSeq
		if p.exited && p.exitSeq > afterSeq && p.exitSeq <= p.evictedThrough {
			b.Evicted--
		}
	}
	exitPending := p.exited && p.exitSeq > afterSeq
	total := 0
	b.Events = p.visitScratch[:0]
	defer func() {
		clear(b.Events)
		// Keep the slice for the next call, unless a ring of many tiny
		// chunks made it large: it would stay for the process's life.
		p.visitScratch = nil
		if cap(b.Events) <= maxKeptEvents {
			p.visitScratch = b.Events[:0]
		}
	}()
	for i := p.ring.after(afterSeq); i < p.ring.len(); i++ {
		c := p.ring.at(i)
		if exitPending && p.exitSeq < c.Seq {
			b.Events = append(b.Events, Event{Seq: p.exitSeq, Kind: EventExited, ExitCode: p.exitCode})
			exitPending = false
		}
		if maxBytes >= 0 && len(b.Events) > 0 && total+len(c.Data) > maxBytes {
			fn(b)
			return
		}
		total += len(c.Data)
		b.Events = append(b.Events, Event{Seq: c.Seq, Kind: EventOutput, Stream: c.Stream, Data: c.Data})
	}
	if exitPending {
		b.Events = append(b.Events, Event{Seq: p.exitSeq, Kind: EventExited, ExitCode: p.exitCode})
	}
	if p.closed && p.closedSeq > afterSeq {
		b.Events = append(b.Events, Event{Seq: p.closedSeq, Kind: EventClosed})
	}
	fn(b)
}

// Wait blocks until the process has an event with a seq greater than
// afterSeq (even one since evicted), or ctx is done.
func (p *Process) Wait(ctx context.Context, afterSeq uint64) error {
	for {
		p.mu.Lock()
		ready := p.nextSeq-1 > afterSeq
		changed := p.changed
		p.mu.Unlock()
		if ready {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// NoByteLimit, as ReadOptions.MaxBytes, means that maxBytes was absent.
const NoByteLimit = -1

// maxKeptEvents is the largest event slice VisitEvents keeps between calls.
const maxKeptEvents = 1024
