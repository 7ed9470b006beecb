package modelclient

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkStream measures the client side of one streamed response of
// 200 text deltas (request encoding, SSE framing, event decoding), with
// the HTTP exchange replaced by an in-memory body.
func BenchmarkStream(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\"}}\n\n")
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&sb, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"word%03d \",\"logprobs\":[],\"sequence_number\":%d}\n\n", i, i+1)
	}
	sb.WriteString("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"usage\":{\"input_tokens\":1,\"output_tokens\":200,\"total_tokens\":201}}}\n\n")
	body := []byte(sb.String())
	c, err := New(provider("http://bench.invalid"), Options{HTTPClient: &http.Client{Transport: fakeTransport{body}}, Getenv: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	req := Request{Model: "m", Input: []Item{Message("user", "hi")}}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		s, err := c.Stream(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			_, err := s.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 202 {
			b.Fatalf("%d events", n)
		}
	}
}
