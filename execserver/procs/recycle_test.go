//go:build linux

package procs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// seqOutput is what `seq 1 n` prints.
func seqOutput(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

// TestRecycledBuffersKeepOutputIntact streams far more output than the
// ring holds through a consumer that encodes inside VisitEvents, as the
// output pump does, while the ring reuses its read buffers: every byte
// arrives, in order, unchanged.
func TestRecycledBuffersKeepOutputIntact(t *testing.T) {
	m := newManager(t, Config{RingBytes: 32 << 10, ChunkSize: 4 << 10})
	const n = 300000 // about 2 MB
	p, err := m.Start(StartOptions{ID: "s", Argv: []string{"seq", "1", fmt.Sprint(n)}, Env: testPath, Held: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got bytes.Buffer
	var after uint64
	for closed := false; !closed; {
		if err := p.Wait(ctx, after); err != nil {
			t.Fatalf("after seq %d (%d bytes): %v", after, got.Len(), err)
		}
		p.VisitEvents(after, 16<<10, func(b EventBatch) {
			for _, ev := range b.Events {
				got.Write(ev.Data)
				after = ev.Seq
				closed = closed || ev.Kind == EventClosed
			}
		})
		p.Ack(after)
	}
	want := seqOutput(n)
	if got.String() != want {
		t.Fatalf("got %d bytes that differ from the %d of seq's output", got.Len(), len(want))
	}
	// Once the output has ended, the ring keeps its data in read buffers
	// it uses at least half of, or in copies of the exact size.
	p.mu.Lock()
	defer p.mu.Unlock()
	var kept []byte
	used := map[*readBuf]int{}
	for _, c := range p.ring.chunks {
		if c.owner == nil && cap(c.Data) != len(c.Data) {
			t.Fatalf("chunk %d: %d bytes kept in a buffer of %d", c.Seq, len(c.Data), cap(c.Data))
		}
		if c.owner != nil {
			used[c.owner] += len(c.Data)
		}
		kept = append(kept, c.Data...)
	}
	for b, n := range used {
		if 2*n < cap(b.b) {
			t.Fatalf("a read buffer of %d bytes is kept for %d bytes of output", cap(b.b), n)
		}
	}
	if len(p.spare) != 0 || !strings.HasSuffix(want, string(kept)) || len(kept) == 0 {
		t.Fatalf("closed process keeps %d spare buffers and %d bytes of output", len(p.spare), len(kept))
	}
}

// TestReadResultsOutliveRecycling: what Read and Events return is a copy,
// which the ring's reuse of its buffers never changes.
func TestReadResultsOutliveRecycling(t *testing.T) {
	m := newManager(t, Config{RingBytes: 16 << 10, ChunkSize: 4 << 10})
	p := start(t, m, StartOptions{ID: "r", PipeStdin: true, Argv: []string{"sh", "-c", "seq 1 3000; read x; seq 100000 200000"}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Wait for the first part (about 13 KB), then keep what Read and
	// Events return.
	want := seqOutput(3000)
	var first []byte
	var chunks []Chunk
	for len(first) < len(want) {
		res, err := p.Read(ctx, ReadOptions{AfterSeq: 0, MaxBytes: NoByteLimit, Wait: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		first = first[:0]
		for _, c := range res.Chunks {
			first = append(first, c.Data...)
		}
		chunks = res.Chunks
	}
	events := p.Events(0, -1)
	// The rest evicts every chunk above many times over.
	if _, err := p.Write(ctx, "go", []byte("go\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-ctx.Done():
		t.Fatal("the process did not finish")
	}
	if b := p.Events(0, -1); b.Evicted == 0 {
		t.Fatal("nothing was evicted: the test proves nothing")
	}
	var again, fromEvents []byte
	for _, c := range chunks {
		again = append(again, c.Data...)
	}
	for _, ev := range events.Events {
		fromEvents = append(fromEvents, ev.Data...)
	}
	if string(again) != want || string(fromEvents) != want {
		t.Fatalf("kept output changed: read %d bytes, events %d bytes, want %d", len(again), len(fromEvents), len(want))
	}
}

// TestReadBufferReuse drives the ring by hand: a read buffer is reused
// only once no chunk in the ring is a slice of it, and then it is.
func TestReadBufferReuse(t *testing.T) {
	m := newManager(t, Config{RingBytes: 16 << 10, ChunkSize: 4 << 10})
	p := start(t, m, StartOptions{ID: "quiet", Argv: []string{"sleep", "100"}})
	defer m.Terminate(p.ID())
	check := func(step string) {
		t.Helper()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, b := range p.spare {
			if b.refs != 0 {
				t.Fatalf("%s: a spare buffer has %d references", step, b.refs)
			}
			for _, c := range p.ring.chunks {
				if c.owner == b {
					t.Fatalf("%s: chunk %d is in a spare buffer", step, c.Seq)
				}
			}
		}
	}
	fill := func(b *readBuf, v byte) {
		for i := range b.b {
			b.b[i] = v
		}
	}
	first := p.takeBuf(64 << 10)
	fill(first, 'a')
	p.appendOutput(StreamStdout, first.b[:16<<10:16<<10], first, 4<<10)
	p.mu.Lock()
	p.unref(first) // the reader moves on
	p.mu.Unlock()
	check("first buffer in the ring")
	second := p.takeBuf(64 << 10)
	if second == first {
		t.Fatal("a buffer whose chunks are in the ring was handed out again")
	}
	fill(second, 'b')
	// 16 KiB more evict the first buffer's chunks one by one.
	for i := 0; i < 4; i++ {
		p.appendOutput(StreamStdout, second.b[i<<12:(i+1)<<12:(i+1)<<12], second, 4<<10)
		check(fmt.Sprintf("after piece %d of the second buffer", i))
	}
	if third := p.takeBuf(64 << 10); third != first {
		t.Fatal("the first buffer was not reused once its chunks were evicted")
	}
	for _, ev := range p.Events(0, -1).Events {
		if ev.Kind == EventOutput && strings.Trim(string(ev.Data), "b") != "" {
			t.Fatalf("chunk %d holds %q…, not the second buffer's output", ev.Seq, ev.Data[:8])
		}
	}
}

// capacity is F_GETPIPE_SZ of f.
func capacity(t *testing.T, f *os.File) int {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	n := -1
	if err := rc.Control(func(fd uintptr) { n, _ = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0) }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestGrowPipe: growPipe enlarges a pipe, and leaves what is not a pipe
// alone.
func TestGrowPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if n := capacity(t, r); n != pipeSize {
		t.Fatalf("a new pipe holds %d bytes, want %d", n, pipeSize)
	}
	if !growPipe(r) {
		t.Fatal("growPipe failed on a pipe")
	}
	if n := capacity(t, r); n != grownPipeSize {
		t.Fatalf("a grown pipe holds %d bytes, want %d", n, grownPipeSize)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "not-a-pipe"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if growPipe(f) {
		t.Fatal("growPipe reports growing a regular file")
	}
}

// TestGrownPipesAreCapped: a manager grows at most maxGrownPipes pipes at
// once, so that its children cannot use up the user's pipe quota.
func TestGrownPipesAreCapped(t *testing.T) {
	m := newManager(t, Config{})
	var pipes []*os.File
	for i := 0; i <= maxGrownPipes; i++ {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		defer w.Close()
		pipes = append(pipes, r)
	}
	for i, r := range pipes[:maxGrownPipes] {
		if !m.growPipe(r) {
			t.Fatalf("pipe %d not grown", i)
		}
	}
	last := pipes[maxGrownPipes]
	if m.growPipe(last) || capacity(t, last) != pipeSize {
		t.Fatalf("pipe %d grown past the cap of %d", maxGrownPipes, maxGrownPipes)
	}
	m.grownPipes.Add(-1) // one grown pipe is done with
	if !m.growPipe(last) || capacity(t, last) != grownPipeSize {
		t.Fatal("a place given back is not reused")
	}
}

// TestQuietChildKeepsTheDefaultPipe: growing is for children that fill
// their pipe; one that prints a line keeps the default.
func TestQuietChildKeepsTheDefaultPipe(t *testing.T) {
	m := newManager(t, Config{})
	p := start(t, m, StartOptions{ID: "quiet", Argv: []string{"sh", "-c", "echo hi; sleep 100"}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Wait(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if n := capacity(t, p.sp.outputs[0].f); n != pipeSize {
		t.Fatalf("the quiet child's pipe holds %d bytes, want %d", n, pipeSize)
	}
}

// TestVisitEventsKeepsNoLargeSlice: a ring of many tiny chunks makes one
// large event slice, which VisitEvents must not keep for the process's
// life.
func TestVisitEventsKeepsNoLargeSlice(t *testing.T) {
	m := newManager(t, Config{})
	p := start(t, m, StartOptions{ID: "quiet", Argv: []string{"sleep", "100"}})
	defer m.Terminate(p.ID())
	for range 3 * maxKeptEvents {
		p.appendOutput(StreamStdout, []byte("x"), nil, 8<<10)
	}
	n := 0
	p.VisitEvents(0, -1, func(b EventBatch) { n = len(b.Events) })
	if n != 3*maxKeptEvents {
		t.Fatalf("visited %d events, want %d", n, 3*maxKeptEvents)
	}
	p.mu.Lock()
	kept := cap(p.visitScratch)
	p.mu.Unlock()
	if kept > maxKeptEvents {
		t.Fatalf("VisitEvents keeps a slice of %d events", kept)
	}
	// A small batch is kept for reuse.
	p.VisitEvents(uint64(3*maxKeptEvents-10), -1, func(EventBatch) {})
	p.mu.Lock()
	kept = cap(p.visitScratch)
	p.mu.Unlock()
	if kept == 0 {
		t.Fatal("a small slice is not kept")
	}
}
