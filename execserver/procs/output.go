// The output side of a process: reading its pipes or pty into reused
// buffers, the ring of retained chunks and its eviction, holds and acks,
// and draining what a child wrote before it exited.

package procs

import (
	"errors"
	"os"
	"runtime"
	"sort"
	"time"
)

// readBuf is a buffer the output of a process is read into. A large read
// hands it to the ring, which keeps its chunks as slices of it; once the
// last of them is evicted, the buffer goes back to the process for the
// next read. That is why chunk data never leaves the process's lock
// without being copied (Read, Events) and is otherwise only seen inside
// VisitEvents: a streaming child then costs no allocation per read, and
// the collector has nothing to do.
type readBuf struct {
	b    []byte
	refs int // chunks in the ring, plus one while the reader fills it
}

// spareBufs is how many read buffers a process keeps for reuse.
const spareBufs = 4

func (p *Process) readLoop(idx int, o output) {
	chunk := p.m.cfg.ChunkSize
	big := 2 * max(readSize, chunk)
	// Reads fill a buffer one after the other, each chunk a slice of it,
	// until less than half of it is left; the ring gives the buffer back
	// for reuse when its last chunk is evicted. The first buffer is small,
	// so that a quiet child costs little; once a read fills all the room
	// it was given, the child writes fast and later buffers are big (two
	// pipefuls).
	size := max(smallReadBuf, chunk)
	buf, off := p.takeBuf(size), 0
	recheck, grown, triedGrow := false, false, false
	for {
		if len(buf.b)-off < len(buf.b)/2 {
			p.mu.Lock()
			p.unref(buf)
			p.mu.Unlock()
			buf, off = p.takeBuf(size), 0
		}
		n, err := o.f.Read(buf.b[off:])
		if n > 0 && n == len(buf.b)-off {
			size = big
		}
		if n > 0 {
			p.appendOutput(o.stream, buf.b[off:off+n:off+n], buf, chunk)
			off += n
		}
		if n >= pipeSize && !triedGrow {
			// The read took a whole pipeful: the child writes faster than
			// it is read, and each of them keeps waking the other. A larger
			// pipe lets both run longer between wake-ups. Quiet children
			// keep the default, and a manager grows only a few pipes at a
			// time: each takes 256 pages of the user's pipe quota (16,384
			// by default), past which Linux gives new pipes 2 pages.
			triedGrow = true
			grown = p.m.growPipe(o.f)
		}
		if recheck && err == nil {
			// Look again, now that what was there has been taken.
			recheck = false
			_ = o.f.SetReadDeadline(time.Now())
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// The exit waiter set a deadline to learn when everything the
			// child wrote before it exited has been read. A read past its
			// deadline reports it without looking at the pipe, so look:
			// if bytes wait, clear the deadline, take them, and set it
			// again.
			_ = o.f.SetReadDeadline(time.Time{})
			if unreadBytes(o.f) > 0 {
				recheck = true
				continue
			}
			// Drained: every byte written before the exit is appended.
			// Reading goes on for descendants that still write.
			p.mu.Lock()
			p.drained[idx] = true
			p.broadcast()
			p.mu.Unlock()
			continue
		}
		// EOF, EIO from a pty whose last slave closed, or a close by
		// KillAll: all end the stream.
		if err != nil {
			break
		}
	}
	if grown {
		p.m.grownPipes.Add(-1) // the pipe closes with the process
	}
	p.mu.Lock()
	p.unref(buf)
	p.compact(o.stream)
	p.ended[idx] = true
	p.openStreams--
	if p.openStreams == 0 {
		p.spare = nil // nothing is read any more
		close(p.streamsDone)
	}
	p.broadcast() // the exit waiter may be counting drained streams
	p.mu.Unlock()
}

// appendOutput numbers what one read returned, in chunks of at most
// chunk bytes, and wakes waiters once for all of them (or before it has to
// wait for room, so that the holder sees what it is waited on to take).
//
// data is a slice of owner's buffer when owner is not nil; the ring then
// gives the buffer back for reuse once its last chunk is evicted.
func (p *Process) appendOutput(stream Stream, data []byte, owner *readBuf, chunk int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fresh := false
	for len(data) > 0 {
		k := min(len(data), chunk)
		piece := data[:k:k]
		data = data[k:]
		over := func() bool {
			return p.ring.len() > 0 && (p.ring.bytes+len(piece) > p.m.cfg.RingBytes || p.ring.len()+1 > p.m.cfg.RingChunks)
		}
		for p.held && !p.stopping && over() {
			// Evict what the holder has taken; wait for it to take more.
			if p.ring.at(0).Seq <= p.ackedThrough {
				p.evict()
				continue
			}
			if fresh {
				p.broadcast()
				fresh = false
			}
			ch := p.space
			p.spaceWaiters++
			p.mu.Unlock()
			<-ch
			p.mu.Lock()
			p.spaceWaiters--
		}
		seq := p.nextSeq
		p.nextSeq++
		if owner != nil {
			owner.refs++
		}
		p.ring.push(Chunk{Seq: seq, Stream: stream, Data: piece, owner: owner})
		for p.ring.bytes > p.m.cfg.RingBytes || p.ring.len() > p.m.cfg.RingChunks {
			p.evict()
		}
		fresh = true
	}
	if fresh {
		p.broadcast()
	}
}

// evict drops the oldest chunk of the ring. Called with p.mu held.
func (p *Process) evict() {
	c := p.ring.pop()
	p.evictedThrough = c.Seq
	if c.owner != nil {
		p.unref(c.owner)
	}
}

// unref drops one reference to a read buffer, and keeps the buffer for
// reuse when it was the last. Called with p.mu held.
func (p *Process) unref(b *readBuf) {
	b.refs--
	if b.refs != 0 {
		return
	}
	if p.openStreams > 0 && len(p.spare) < spareBufs {
		p.spare = append(p.spare, b)
	}
}

// takeBuf returns a read buffer of size bytes, a spare or a new one, with
// one reference: the reader's.
func (p *Process) takeBuf(size int) *readBuf {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.spare); n > 0 {
		b := p.spare[n-1]
		p.spare[n-1] = nil
		p.spare = p.spare[:n-1]
		if cap(b.b) >= size {
			b.b, b.refs = b.b[:size], 1
			return b
		}
	}
	return &readBuf{b: make([]byte, size), refs: 1}
}

// compact runs when the output of stream has ended. The chunks of it that
// are still in the ring, and are slices of a read buffer they use less
// than half of, move into one buffer of their exact size, and the read
// buffers go: a process whose output has ended keeps about its output,
// not the buffers it arrived in. Called with p.mu held.
func (p *Process) compact(stream Stream) {
	used := map[*readBuf]int{}
	for _, c := range p.ring.chunks {
		if c.owner != nil && c.Stream == stream {
			used[c.owner] += len(c.Data)
		}
	}
	total := 0
	for b, n := range used {
		if 2*n >= cap(b.b) {
			delete(used, b) // well used: kept as it is
		} else {
			total += n
		}
	}
	if total == 0 {
		return
	}
	data := make([]byte, 0, total)
	for i := range p.ring.chunks {
		c := &p.ring.chunks[i]
		if c.owner == nil || c.Stream != stream {
			continue
		}
		if _, sparse := used[c.owner]; sparse {
			k := len(data)
			data = append(data, c.Data...)
			p.unref(c.owner)
			c.Data, c.owner = data[k:len(data):len(data)], nil
		}
	}
}

// Hold makes the caller the consumer of the output after seq: until
// Release, chunks after the acknowledged seq are never evicted, and the
// child is slowed down to the consumer's pace instead.
func (p *Process) Hold(afterSeq uint64) {
	p.mu.Lock()
	p.held = true
	p.ackedThrough = afterSeq
	p.wakeSpaceLocked()
	p.mu.Unlock()
}

// Ack records that the holder has taken every event through seq.
func (p *Process) Ack(seq uint64) {
	p.mu.Lock()
	if seq > p.ackedThrough {
		p.ackedThrough = seq
		p.wakeSpaceLocked()
	}
	p.mu.Unlock()
}

// Release ends the hold: the ring evicts again, and the child runs freely.
func (p *Process) Release() {
	p.mu.Lock()
	p.held = false
	p.wakeSpaceLocked()
	p.mu.Unlock()
}

func (p *Process) wakeSpaceLocked() {
	if p.spaceWaiters > 0 {
		close(p.space)
		p.space = make(chan struct{})
	}
}

// ring is the retained output of a process: a queue of chunks in seq order.
type ring struct {
	chunks []Chunk
	bytes  int
}

func (r *ring) len() int { return len(r.chunks) }

func (r *ring) at(i int) Chunk { return r.chunks[i] }

func (r *ring) push(c Chunk) { r.chunks = append(r.chunks, c); r.bytes += len(c.Data) }

func (r *ring) after(seq uint64) int {
	return sort.Search(len(r.chunks), func(i int) bool { return r.chunks[i].Seq > seq })
}

func (r *ring) pop() Chunk {
	c := r.chunks[0]
	// Clear the slot so that the backing array does not pin evicted data
	// until append next reallocates it.
	r.chunks[0] = Chunk{}
	r.chunks = r.chunks[1:]
	r.bytes -= len(c.Data)
	return c
}

// drainByDeadline lets the output the child wrote before it exited get its
// seq before the exit does, as Codex reports it (output, then exited). It
// sets a read deadline in the past on every output stream: a read returns
// what the pipe holds before it reports the deadline, so once every open
// stream has reported it, all that was written before the exit has been
// appended. It reports false when a stream does not support deadlines.
func (p *Process) drainByDeadline() bool {
	p.mu.Lock()
	for i := range p.drained {
		p.drained[i] = false
	}
	p.mu.Unlock()
	for _, o := range p.sp.outputs {
		if err := o.f.SetReadDeadline(time.Now()); err != nil {
			return false
		}
	}
	// A descendant that keeps the pipe full cannot hold the exit back for
	// long.
	limit := time.NewTimer(time.Second)
	defer limit.Stop()
	for {
		p.mu.Lock()
		done := true
		for i := range p.drained {
			done = done && (p.drained[i] || p.ended[i])
		}
		ch := p.changed
		p.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-ch:
		case <-limit.C:
			return true
		}
	}
}

// drainBeforeExit is the fallback of drainByDeadline: it waits, briefly,
// until no output stream has unread bytes.
//
// drainBeforeExit lets the output the child wrote before it exited get its
// seq before the exit does, as Codex reports it (output, then exited): it
// waits, briefly, until no output stream has unread bytes. A descendant that
// keeps writing cannot hold the exit back for more than the bound.
func (p *Process) drainBeforeExit() {
	deadline := time.NewTimer(100 * time.Millisecond)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		ch := p.changed
		pending := false
		if p.openStreams > 0 {
			for _, o := range p.sp.outputs {
				if unreadBytes(o.f) > 0 {
					pending = true
				}
			}
		}
		p.mu.Unlock()
		if !pending {
			// The last bytes may have been read but not yet appended: let
			// the readers run before deciding.
			for i := 0; i < 4; i++ {
				runtime.Gosched()
			}
			p.mu.Lock()
			again := ch != p.changed
			p.mu.Unlock()
			if !again {
				return
			}
			continue
		}
		select {
		case <-ch:
		case <-deadline.C:
			return
		}
	}
}

// maxGrownPipes is how many pipes a manager keeps grown at once: 8 × 256
// pages is an eighth of the default per-user quota.
const maxGrownPipes = 8

// growPipe grows the pipe f reads from if the manager has fewer than
// maxGrownPipes grown, and reports whether it did; the caller gives the
// place back (grownPipes.Add(-1)) when the pipe is done with.
func (m *Manager) growPipe(f *os.File) bool {
	if m.grownPipes.Add(1) <= maxGrownPipes && growPipe(f) {
		return true
	}
	m.grownPipes.Add(-1)
	return false
}

// readSize is how much one read of the output of a fast child asks for at
// least: several chunks, and as much as a pipe holds (64 KiB on Linux), so
// that it costs one system call per pipeful rather than per chunk. Its
// reads fill buffers of twice that, one after the other; a child starts
// with a buffer of smallReadBuf.
const (
	readSize     = 64 << 10
	smallReadBuf = 16 << 10
)

// pipeSize is the default capacity of a pipe on Linux, and grownPipeSize
// what growPipe asks for: the most an unprivileged process may
// (/proc/sys/fs/pipe-max-size).
const (
	pipeSize      = 64 << 10
	grownPipeSize = 1 << 20
)
