package jsonrpc

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
)

// Benchmarks of the engine alone; the side-by-side comparison with other
// JSON-RPC libraries lives in bench/. Allocations are counted for both
// sides, since client and server run in this process.

func benchPair(b *testing.B) (*Conn, func()) {
	a, c := net.Pipe()
	srv := NewConn(NewLineStream(a, 0), Options{Handler: echoMux()})
	cli := NewConn(NewLineStream(c, 0), Options{})
	return cli, func() { cli.Close(); srv.Close() }
}

func BenchmarkEchoSequential(b *testing.B) {
	cli, done := benchPair(b)
	defer done()
	ctx := context.Background()
	p := echoParams{Text: "hello", N: 42}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := echo.Call(ctx, cli, p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEcho64Callers(b *testing.B) {
	cli, done := benchPair(b)
	defer done()
	ctx := context.Background()
	p := echoParams{Text: "hello", N: 42}
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	per := b.N/64 + 1
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				if _, err := echo.Call(ctx, cli, p); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func BenchmarkDecodeRequest(b *testing.B) {
	msg := []byte(`{"id":12,"method":"process/read","params":{"processId":"proc-1","afterSeq":3,"waitMs":50}}`)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Decode(msg, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEcho1MiB(b *testing.B) {
	cli, done := benchPair(b)
	defer done()
	ctx := context.Background()
	p := echoParams{Text: strings.Repeat("x", 1<<20)}
	b.ReportAllocs()
	b.SetBytes(2 << 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := echo.Call(ctx, cli, p); err != nil {
			b.Fatal(err)
		}
	}
}
