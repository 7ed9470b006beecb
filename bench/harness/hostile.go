package harness

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"time"
)

// Payload is a hostile params value.
type Payload struct {
	Name string
	Data []byte
}

// Payloads are the hostile inputs: a compact array of 1,000,000 zeros,
// 100,000 levels of array nesting, and an object with one name repeated
// 10,000 times.
func Payloads() []Payload {
	zeros := make([]byte, 0, 2_000_001)
	zeros = append(zeros, '[')
	for i := range 1_000_000 {
		if i > 0 {
			zeros = append(zeros, ',')
		}
		zeros = append(zeros, '0')
	}
	zeros = append(zeros, ']')

	const depth = 100_000
	nest := append(bytes.Repeat([]byte{'['}, depth), bytes.Repeat([]byte{']'}, depth)...)

	var dup bytes.Buffer
	dup.WriteByte('{')
	for i := range 10_000 {
		if i > 0 {
			dup.WriteByte(',')
		}
		dup.WriteString(`"k":0`)
	}
	dup.WriteByte('}')
	return []Payload{
		{Name: "1M zeros array", Data: zeros},
		{Name: "100k nesting", Data: nest},
		{Name: "10k duplicate keys", Data: dup.Bytes()},
	}
}

// HostileResult is what one message cost a server.
type HostileResult struct {
	Impl, Transport, Input string
	MsgSize                int
	// PeakHeap is the largest growth of heap objects (live and not yet
	// swept) sampled while the server handled the message.
	PeakHeap uint64
	// Alloc is every byte allocated while the server handled it.
	Alloc   uint64
	Outcome string
	// Rejected reports an error response or a closed connection.
	Rejected bool
	Elapsed  time.Duration
	Err      error
}

var heapSamples = []metrics.Sample{
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/gc/heap/allocs:bytes"},
}

func readHeap() (inUse, allocs uint64) {
	s := make([]metrics.Sample, len(heapSamples))
	copy(s, heapSamples)
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

// RunHostile sends p, framed for impl, as one message to a fresh server and
// measures the heap while the server handles it.
func RunHostile(impl Impl, t Transport, p Payload) HostileResult {
	r := HostileResult{Impl: impl.Name, Transport: t.Name, Input: p.Name}
	cli, srv, clean, err := t.Pair()
	if err != nil {
		r.Err = err
		return r
	}
	defer clean()
	defer cli.Close()
	stop, err := impl.Serve(srv)
	if err != nil {
		r.Err = err
		srv.Close()
		return r
	}
	defer stop()
	br := bufio.NewReaderSize(cli, 64<<10)
	if impl.Handshake != nil {
		cli.SetDeadline(time.Now().Add(10 * time.Second))
		if err := impl.Handshake(cli, br); err != nil {
			r.Err = err
			return r
		}
		cli.SetDeadline(time.Time{})
		time.Sleep(20 * time.Millisecond) // let the initialized notification land
	}
	msg := impl.HostileMessage(p.Data)
	r.MsgSize = len(msg)

	runtime.GC()
	runtime.GC()
	base, allocBase := readHeap()
	var peak uint64
	var mu sync.Mutex
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			h, _ := readHeap()
			mu.Lock()
			peak = max(peak, h)
			mu.Unlock()
			select {
			case <-done:
				return
			default:
				time.Sleep(50 * time.Microsecond)
			}
		}
	}()
	start := time.Now()
	go func() { cli.Write(msg) }()
	cli.SetReadDeadline(time.Now().Add(20 * time.Second))
	line, rerr := br.ReadBytes('\n')
	r.Elapsed = time.Since(start)
	end, allocEnd := readHeap()
	close(done)
	<-sampled
	peak = max(peak, end)
	if peak > base {
		r.PeakHeap = peak - base
	}
	r.Alloc = allocEnd - allocBase
	r.Outcome, r.Rejected = classify(line, rerr)
	return r
}

func classify(line []byte, err error) (string, bool) {
	if err != nil {
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, os.ErrDeadlineExceeded):
			return "no answer in 20s", false
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrClosedPipe):
			return "closed the connection", true
		}
		return "read error: " + err.Error(), true
	}
	if i := bytes.Index(line, []byte(`"error"`)); i >= 0 {
		msg := string(line[i:])
		if j := strings.Index(msg, `"message":`); j >= 0 {
			msg = msg[j+len(`"message":`):]
		}
		msg = strings.TrimRight(strings.TrimSpace(msg), "}")
		if len(msg) > 70 {
			msg = msg[:70] + "…"
		}
		return "error: " + msg, true
	}
	if bytes.Contains(line, []byte(`"result"`)) {
		return "accepted (result)", false
	}
	return fmt.Sprintf("unexpected reply %.60q", line), false
}
