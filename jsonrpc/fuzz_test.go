package jsonrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// FuzzDecode checks the decoder's promises on arbitrary input: it never
// panics; it rejects with a DecodeError or accepts; what it accepts is
// valid JSON with no duplicate names, and re-encodes to a message that
// decodes to the same thing.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"method":"initialize","params":{"clientName":"x"}}`,
		`{"method":"initialized"}`,
		`{"id":"a","result":{"n":123456789012345678901234567890}}`,
		`{"id":2,"error":{"code":-32601,"message":"m","data":[1e400]}}`,
		`{"jsonrpc":"2.0","id":-1,"method":"m","params":[[[]]],"trace":{"traceparent":"00-x-y-01"}}`,
		`{"id":1,"method":"m","params":{"a":1,"a":2}}`,
		`{"id":1.0,"method":"m"}`,
		`[{"id":1,"method":"m"}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data, Limits{MaxValues: 512, MaxDepth: 16})
		if err != nil {
			if !errors.Is(err, ErrInvalidMessage) {
				t.Fatalf("error %v is not a DecodeError", err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		out := EncodeMessage(m)
		if bytes.Contains(out, []byte(`"jsonrpc"`)) {
			t.Fatalf("re-encoded with a jsonrpc member: %s", out)
		}
		m2, err := Decode(out, Limits{MaxValues: 1 << 20, MaxDepth: 64})
		if err != nil {
			t.Fatalf("re-encoded %s does not decode: %v", out, err)
		}
		if !bytes.Equal(EncodeMessage(m2), out) {
			t.Fatalf("round trip changed %s into %s", out, EncodeMessage(m2))
		}
	})
}

// FuzzGuard checks that the transport's guard never refuses a message the
// decoder would accept, however the message is split into pieces.
func FuzzGuard(f *testing.F) {
	f.Add([]byte(`{"id":1,"method":"m","params":["[[[\"\\",{"a":"]]]"}]}`), uint8(3))
	f.Add([]byte(`{"id":1,"method":"m","params":[1,2,3,4,5,6,7,8,9]}`), uint8(1))
	f.Add([]byte(`{"id":1,"method":"m","params":"\\\\\\\"[[[[[[[[[["}`), uint8(7))
	f.Fuzz(func(t *testing.T, data []byte, split uint8) {
		lim := Limits{MaxValues: 8, MaxDepth: 4}
		_, decErr := Decode(data, lim)
		var g guard
		g.reset(lim)
		step := int(split%16) + 1
		var gErr error
		for i := 0; i < len(data) && gErr == nil; i += step {
			gErr = g.scan(data[i:min(i+step, len(data))])
		}
		if gErr != nil && decErr == nil {
			t.Fatalf("guard refused %q (%v), which the decoder accepts", data, gErr)
		}
	})
}

// FuzzLineStream checks the JSONL framer on arbitrary input, with a read
// buffer of 16 bytes so that most lines take the long path (gathered in
// chunks, joined once): a line over the limit (counted before trimming) is
// refused and skipped; every other non-blank line comes out whole, in
// order, without its newline or trailing carriage returns, in a buffer of
// its exact size; blank lines are skipped.
func FuzzLineStream(f *testing.F) {
	f.Add([]byte("{\"id\":1,\"method\":\"m\"}\n\n{\"method\":\"n\"}\r\n"), uint8(40))
	f.Add([]byte(strings.Repeat("x", 100)+"\nshort\n"+strings.Repeat("y", 70)), uint8(64))
	f.Add([]byte("\r\n \n\t\nlast"), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, limit uint8) {
		lim := int64(limit) + 1
		s := &lineStream{r: bufio.NewReaderSize(bytes.NewReader(data), 16), limit: lim}
		type outcome struct {
			line    []byte
			raw     int // the line's length before trimming
			refused bool
		}
		var want []outcome
		raw := bytes.Split(data, []byte("\n"))
		if len(raw[len(raw)-1]) == 0 {
			raw = raw[:len(raw)-1] // the input ends with a newline
		}
		for _, l := range raw {
			switch trimmed := bytes.TrimRight(l, "\r"); {
			case int64(len(l)) > lim:
				want = append(want, outcome{refused: true})
			case len(bytes.TrimSpace(trimmed)) > 0:
				want = append(want, outcome{line: trimmed, raw: len(l)})
			}
		}
		for i := 0; ; i++ {
			got, err := s.Read()
			if errors.Is(err, io.EOF) {
				if i < len(want) {
					t.Fatalf("EOF after %d results of %d", i, len(want))
				}
				return
			}
			if i >= len(want) {
				t.Fatalf("result %d (%q, %v) beyond the %d expected", i, got, err, len(want))
			}
			var de *DecodeError
			switch w := want[i]; {
			case w.refused:
				if !errors.As(err, &de) {
					t.Fatalf("result %d: %q, %v; want a refusal", i, got, err)
				}
			case err != nil:
				t.Fatalf("result %d: %v; want %q", i, err, w.line)
			case !bytes.Equal(got, w.line):
				t.Fatalf("result %d: got %q, want %q", i, got, w.line)
			case cap(got) > w.raw:
				t.Fatalf("result %d: %d bytes kept in %d", i, len(got), cap(got))
			}
		}
	})
}
