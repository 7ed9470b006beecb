package jsonrpc

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"
)

func mustDecode(t *testing.T, s string) Message {
	t.Helper()
	m, err := Decode([]byte(s), Limits{})
	if err != nil {
		t.Fatalf("Decode(%s): %v", s, err)
	}
	return m
}

func TestRoundTripFourKinds(t *testing.T) {
	cases := []struct {
		in   string
		want string // re-encoded form; "" means same as in
	}{
		{`{"id":1,"method":"process/start","params":{"a":[1,2]}}`, ""},
		{`{"id":"abc","method":"x"}`, ""},
		{`{"method":"initialized"}`, ""},
		{`{"method":"n","params":[true,null]}`, ""},
		{`{"id":7,"result":{"ok":true}}`, ""},
		{`{"id":"7","result":null}`, ""},
		{`{"id":9,"error":{"code":-32601,"message":"nope","data":{"x":1}}}`, ""},
		{`{"id":-3,"error":{"code":-32600,"message":"bad"}}`, ""},
		// A peer's "jsonrpc" member and unknown members are accepted and
		// never written back.
		{`{"jsonrpc":"2.0","id":2,"method":"m","extra":{"deep":[1]}}`, `{"id":2,"method":"m"}`},
		{`{"id":1,"method":"m","trace":{"traceparent":"00-abc-def-01","tracestate":"k=v"}}`, ""},
	}
	for _, tc := range cases {
		m := mustDecode(t, tc.in)
		got := string(EncodeMessage(m))
		want := tc.want
		if want == "" {
			want = tc.in
		}
		if got != want {
			t.Errorf("round trip of %s:\n got %s\nwant %s", tc.in, got, want)
		}
	}
}

func TestKindsAndIDs(t *testing.T) {
	req := mustDecode(t, `{"id":1,"method":"m"}`).(*Request)
	if !req.IsCall() || req.ID != Int64ID(1) {
		t.Fatalf("request: %+v", req)
	}
	sreq := mustDecode(t, `{"id":"1","method":"m"}`).(*Request)
	if sreq.ID != StringID("1") || sreq.ID == req.ID {
		t.Fatalf(`"1" and 1 must be different ids: %v %v`, sreq.ID, req.ID)
	}
	note := mustDecode(t, `{"method":"m"}`).(*Request)
	if note.IsCall() || note.Params != nil {
		t.Fatalf("notification: %+v", note)
	}
	resp := mustDecode(t, `{"id":9223372036854775807,"result":1}`).(*Response)
	if resp.ID != Int64ID(9223372036854775807) || string(resp.Result) != "1" {
		t.Fatalf("response: %+v", resp)
	}
	if e := mustDecode(t, `{"id":1,"error":{"\u0063ode":-32600,"message":"m"}}`).(*Response).Error; e == nil || e.Code != -32600 {
		t.Fatalf("escaped member name in error: %+v", e)
	}
	er := mustDecode(t, `{"id":"x","error":{"code":-32001,"message":"Server overloaded; retry later."}}`).(*Response)
	if er.Error == nil || er.Error.Code != CodeOverloaded || er.ID != StringID("x") {
		t.Fatalf("error: %+v", er)
	}
	for _, bad := range []string{
		`{"id":1.5,"method":"m"}`,
		`{"id":1e3,"method":"m"}`,
		`{"id":null,"method":"m"}`,
		`{"id":true,"method":"m"}`,
		`{"id":{"a":1},"method":"m"}`,
		`{"id":[1],"method":"m"}`,
		`{"id":92233720368547758070,"method":"m"}`,
		`{"id":-0,"method":"m"}`,
		`{"id":1,"error":{"code":-0,"message":"m"}}`,
		`{"id":1,"method":"m","trace":{"tr\u0061ceparent":5}}`,
		`{"id":1}`,
		`{"id":1,"error":{"code":"x","message":"m"}}`,
		`{"id":1,"error":{"message":"m"}}`,
		`{"id":1,"error":5}`,
		`{"result":1}`,
		`{"method":5}`,
		`[]`,
		`"hello"`,
		``,
		`{"id":1,"method":"m"} {}`,
		`{"id":1,"method":"m"`,
	} {
		if _, err := Decode([]byte(bad), Limits{}); !errors.Is(err, ErrInvalidMessage) {
			t.Errorf("Decode(%s) = %v, want an invalid-message error", bad, err)
		}
	}
}

func TestNumbersKeptExactly(t *testing.T) {
	in := `{"id":1,"method":"m","params":{"big":123456789012345678901234567890,"huge":1e400,"neg":-0.000000000000000000000001,"list":[1E+2,0.1]}}`
	req := mustDecode(t, in).(*Request)
	want := `{"big":123456789012345678901234567890,"huge":1e400,"neg":-0.000000000000000000000001,"list":[1E+2,0.1]}`
	if string(req.Params) != want {
		t.Fatalf("params changed:\n got %s\nwant %s", req.Params, want)
	}
	if got := string(EncodeMessage(req)); got != in {
		t.Fatalf("re-encoded:\n got %s\nwant %s", got, in)
	}
	resp := mustDecode(t, `{"id":1,"result":1e400}`).(*Response)
	if string(resp.Result) != "1e400" {
		t.Fatalf("result = %s", resp.Result)
	}
}

func compactZeros(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"id":1,"method":"m","params":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('0')
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// heapDuring reports the bytes allocated while f runs.
func heapDuring(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestBudgetRejectsCompactArrayEarly(t *testing.T) {
	msg := compactZeros(1_000_000)
	var err error
	used := heapDuring(func() { _, err = Decode(msg, Limits{}) })
	var de *DecodeError
	if !errors.As(err, &de) || !strings.Contains(de.Reason, "more than 262144 JSON values") {
		t.Fatalf("err = %v, want the value budget exceeded", err)
	}
	if de.Pointer != "/params/262140" && !strings.HasPrefix(de.Pointer, "/params/") {
		t.Fatalf("pointer %q does not say where", de.Pointer)
	}
	// Rejected before allocation proportional to the message: far below
	// the message itself, let alone 2x.
	if used > uint64(len(msg))/8 {
		t.Fatalf("decoding a %d-byte hostile array allocated %d bytes", len(msg), used)
	}
	// A smaller budget stops sooner, at the exact count.
	_, err = Decode(compactZeros(10), Limits{MaxValues: 10})
	if !errors.As(err, &de) || !strings.Contains(de.Reason, "more than 10 JSON values") {
		t.Fatalf("small budget: %v", err)
	}
	// Root (1) + id + method + params array (3) + 6 elements = 10 values.
	if _, err := Decode(compactZeros(6), Limits{MaxValues: 10}); err != nil {
		t.Fatalf("10 values within a budget of 10: %v", err)
	}
	if _, err := Decode(compactZeros(7), Limits{MaxValues: 10}); err == nil {
		t.Fatal("11 values within a budget of 10 were accepted")
	}
}

func TestDeepNestingRejected(t *testing.T) {
	deep := `{"id":1,"method":"m","params":` + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + `}`
	msg := []byte(deep)
	var err error
	used := heapDuring(func() { _, err = Decode(msg, Limits{}) })
	var de *DecodeError
	if !errors.As(err, &de) || !strings.Contains(de.Reason, "nesting deeper than 128") {
		t.Fatalf("err = %v, want nesting rejected", err)
	}
	if used > uint64(len(msg))/8 {
		t.Fatalf("decoding %d bytes of nesting allocated %d bytes", len(deep), used)
	}
	// 128 levels including the message object are fine; 129 are not.
	ok := `{"id":1,"method":"m","params":` + strings.Repeat("[", 127) + strings.Repeat("]", 127) + `}`
	if _, err := Decode([]byte(ok), Limits{}); err != nil {
		t.Fatalf("128 levels: %v", err)
	}
	tooDeep := `{"id":1,"method":"m","params":` + strings.Repeat("[", 128) + strings.Repeat("]", 128) + `}`
	if _, err := Decode([]byte(tooDeep), Limits{}); err == nil {
		t.Fatal("129 levels accepted")
	}
	if _, err := Decode([]byte(`{"id":1,"method":"m","params":[[[{"a":[1]}]]]}`), Limits{MaxDepth: 4}); err == nil {
		t.Fatal("MaxDepth 4 not enforced")
	}
}

func TestDuplicateKeysRejectedAtEveryDepth(t *testing.T) {
	cases := map[string]string{
		"depth 1": `{"id":1,"method":"m","id":2}`,
		"depth 2": `{"id":1,"method":"m","params":{"a":1,"a":2}}`,
		"depth 5": `{"id":1,"method":"m","params":{"x":{"y":{"z":{"k":1,"k":1}}}}}`,
		"escaped": `{"id":1,"method":"m","params":{"a":1,"\u0061":2}}`,
		"result":  `{"id":1,"result":[{"b":[{"c":0,"c":0}]}]}`,
	}
	for name, in := range cases {
		_, err := Decode([]byte(in), Limits{})
		var de *DecodeError
		if !errors.As(err, &de) || !strings.Contains(de.Reason, "duplicate") {
			t.Errorf("%s: err = %v, want a duplicate-name rejection", name, err)
			continue
		}
		if name == "depth 5" && de.Pointer != "/params/x/y/z/k" {
			t.Errorf("depth 5: pointer = %q, want /params/x/y/z/k", de.Pointer)
		}
	}
	// 10,000 copies of one key: rejected at the second, without growth.
	var b strings.Builder
	b.WriteString(`{"id":1,"method":"m","params":{`)
	for i := 0; i < 10_000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k":0`)
	}
	b.WriteString(`}}`)
	msg := []byte(b.String())
	var err error
	used := heapDuring(func() { _, err = Decode(msg, Limits{}) })
	if err == nil {
		t.Fatal("10,000 duplicate keys accepted")
	}
	if used > 2*uint64(len(msg)) {
		t.Fatalf("10,000 duplicate keys: allocated %d bytes for a %d-byte message", used, len(msg))
	}
}

func TestDecodeErrorsSayWhere(t *testing.T) {
	_, err := Decode([]byte(`{"id":1,"method":"m","params":{"a":[1,2,}}`), Limits{})
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("err = %v", err)
	}
	if de.Offset == 0 || !strings.Contains(err.Error(), "byte") {
		t.Fatalf("error %q does not give an offset", err)
	}
	if de.ID != Int64ID(1) || !de.Request {
		t.Fatalf("id/request not recorded: %+v", de)
	}
}

func TestDecodeDoesNotAllocateProportionally(t *testing.T) {
	// A legal message: its params are not copied.
	msg := []byte(`{"id":1,"method":"m","params":"` + strings.Repeat("x", 1<<20) + `"}`)
	var req Message
	used := heapDuring(func() { req, _ = Decode(msg, Limits{}) })
	if used > 64<<10 {
		t.Fatalf("decoding a 1 MiB string param allocated %d bytes", used)
	}
	if p := req.(*Request).Params; &p[1] != &msg[31] {
		t.Fatal("params were copied instead of aliasing the message")
	}
}
