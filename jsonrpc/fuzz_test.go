package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
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
