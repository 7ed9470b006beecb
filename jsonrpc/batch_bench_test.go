package jsonrpc

import (
	"io"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// BenchmarkBatchStream streams batches of 8 KiB notifications, as a process
// output pump does, through a socket pair whose other end is drained.
func BenchmarkBatchStream(b *testing.B) {
	a, other := socketPair(b)
	c := NewConn(NewLineStream(a, 0), Options{})
	drained := make(chan struct{})
	go func() { io.Copy(io.Discard, other); close(drained) }()
	payload := make([]byte, 6<<10)
	for i := range payload {
		payload[i] = 'x'
	}
	b.SetBytes(32 * int64(len(payload)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		batch := c.Batch()
		for range 32 {
			batch.NotifyAppend("process/output", len(payload)+16, func(dst []byte) []byte {
				dst, _ = jsontext.AppendQuote(dst, string(payload))
				return dst
			})
		}
		if err := batch.Send(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	c.Close()
	other.Close()
	<-drained
}
