package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const waitLimit = 10 * time.Second

// pair connects two Conns.
func pair(t *testing.T, server, client Options) (*Conn, *Conn) {
	t.Helper()
	a, b := socketPair(t)
	s := NewConn(NewLineStream(a, 0), server)
	c := NewConn(NewLineStream(b, 0), client)
	t.Cleanup(func() { c.Close(); s.Close() })
	return s, c
}

// rawPeer connects a Conn to a bare stream the test drives by hand.
func rawPeer(t *testing.T, opts Options) (*Conn, Stream) {
	t.Helper()
	a, b := socketPair(t)
	c := NewConn(NewLineStream(a, 0), opts)
	raw := NewLineStream(b, 0)
	t.Cleanup(func() { raw.Close(); c.Close() })
	return c, raw
}

func readMsg(t *testing.T, s Stream) Message {
	t.Helper()
	type res struct {
		b   []byte
		err error
	}
	ch := make(chan res, 1)
	go func() { b, err := s.Read(); ch <- res{b, err} }()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("read: %v", r.err)
		}
		m, err := Decode(r.b, Limits{})
		if err != nil {
			t.Fatalf("decode %s: %v", r.b, err)
		}
		return m
	case <-time.After(waitLimit):
		t.Fatal("no message within the deadline")
	}
	return nil
}

func writeRaw(t *testing.T, s Stream, msg string) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.Write([]byte(msg)) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("write: %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("write blocked")
	}
}

func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatal("nothing arrived within the deadline")
	}
	var zero T
	return zero
}

type echoParams struct {
	Text string `json:"text"`
	N    int    `json:"n,omitempty"`
}

type echoResult struct {
	Text string `json:"text"`
}

var echo = Method[echoParams, echoResult]("test/echo")

func echoMux() *Mux {
	mux := NewMux()
	echo.Register(mux, func(ctx context.Context, p echoParams) (echoResult, error) {
		return echoResult{Text: p.Text}, nil
	})
	return mux
}

func TestTypedCallRoundTrip(t *testing.T) {
	_, c := pair(t, Options{Handler: echoMux()}, Options{})
	res, err := echo.Call(context.Background(), c, echoParams{Text: "hi"})
	if err != nil || res.Text != "hi" {
		t.Fatalf("echo = %+v, %v", res, err)
	}
}

func TestTypedParamsDecoding(t *testing.T) {
	type strict struct {
		N int `json:"n"`
	}
	var got = make(chan any, 4)
	mux := NewMux()
	Method[strict, int]("strict").Register(mux, func(ctx context.Context, p strict) (int, error) {
		got <- p
		return p.N, nil
	})
	Method[[]int, int]("list").Register(mux, func(ctx context.Context, p []int) (int, error) {
		got <- p
		return len(p), nil
	})
	c, raw := rawPeer(t, Options{Handler: mux})
	_ = c
	// Missing params decode as null: the zero value.
	writeRaw(t, raw, `{"id":1,"method":"strict"}`)
	if r := readMsg(t, raw).(*Response); string(r.Result) != "0" {
		t.Fatalf("missing params: %s %v", r.Result, r.Error)
	}
	recv(t, got)
	// {} that does not fit []int is retried as null.
	writeRaw(t, raw, `{"id":2,"method":"list","params":{}}`)
	if r := readMsg(t, raw).(*Response); string(r.Result) != "0" {
		t.Fatalf("{} as null: %s %v", r.Result, r.Error)
	}
	recv(t, got)
	// A real mismatch is -32602 with the decoder's message.
	writeRaw(t, raw, `{"id":3,"method":"strict","params":{"n":"seven"}}`)
	r := readMsg(t, raw).(*Response)
	if r.Error == nil || r.Error.Code != CodeInvalidParams || !strings.Contains(r.Error.Message, "n") {
		t.Fatalf("bad params: %+v", r.Error)
	}
	// An unknown method is -32601.
	writeRaw(t, raw, `{"id":"u","method":"nope"}`)
	r = readMsg(t, raw).(*Response)
	if r.Error == nil || r.Error.Code != CodeMethodNotFound || r.ID != StringID("u") {
		t.Fatalf("unknown method: %+v", r)
	}
}

func TestNotFoundRemap(t *testing.T) {
	mux := NewMux()
	mux.NotFound = HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		return nil, &Error{Code: CodeInvalidRequest, Message: "unknown: " + req.Method}
	})
	_, raw := rawPeer(t, Options{Handler: mux})
	writeRaw(t, raw, `{"id":1,"method":"zz"}`)
	if r := readMsg(t, raw).(*Response); r.Error.Code != CodeInvalidRequest || r.Error.Message != "unknown: zz" {
		t.Fatalf("remap: %+v", r.Error)
	}
}

func TestStringAndIntIDsAreDistinct(t *testing.T) {
	release := make(chan struct{})
	mux := NewMux()
	mux.HandleFunc("wait", func(ctx context.Context, req *Request) (any, error) {
		<-release
		return req.ID.String(), nil
	})
	_, raw := rawPeer(t, Options{Handler: mux})
	writeRaw(t, raw, `{"id":1,"method":"wait"}`)
	writeRaw(t, raw, `{"id":"1","method":"wait"}`)
	close(release)
	seen := map[ID]string{}
	for i := 0; i < 2; i++ {
		r := readMsg(t, raw).(*Response)
		if r.Error != nil {
			t.Fatalf("id %v rejected: %v", r.ID, r.Error)
		}
		seen[r.ID] = string(r.Result)
	}
	if seen[Int64ID(1)] != `"1"` || seen[StringID("1")] != `"\"1\""` {
		t.Fatalf("answers crossed: %v", seen)
	}
}

func TestOutOfOrderResponsesMatchedByID(t *testing.T) {
	c, raw := rawPeer(t, Options{})
	type out struct {
		n   int
		res echoResult
		err error
	}
	results := make(chan out, 3)
	for i := 0; i < 3; i++ {
		go func(i int) {
			r, err := echo.Call(context.Background(), c, echoParams{Text: "q", N: i})
			results <- out{i, r, err}
		}(i)
	}
	ids := map[int]ID{}
	for i := 0; i < 3; i++ {
		req := readMsg(t, raw).(*Request)
		var p echoParams
		p, err := DecodeParams[echoParams](req.Params)
		if err != nil {
			t.Fatal(err)
		}
		ids[p.N] = req.ID
	}
	// Answer in reverse order, each with its own text.
	for i := 2; i >= 0; i-- {
		writeRaw(t, raw, fmt.Sprintf(`{"id":%s,"result":{"text":"a%d"}}`, ids[i], i))
	}
	for i := 0; i < 3; i++ {
		o := recv(t, results)
		if o.err != nil || o.res.Text != fmt.Sprintf("a%d", o.n) {
			t.Fatalf("caller %d got %+v, %v", o.n, o.res, o.err)
		}
	}
	// Ids were allocated from 1.
	for _, id := range ids {
		if !id.IsInt() || id.Int() < 1 || id.Int() > 3 {
			t.Fatalf("unexpected id %v", id)
		}
	}
}

func TestTimeoutRemovesPendingEntry(t *testing.T) {
	c, raw := rawPeer(t, Options{})
	errc := make(chan error, 1)
	go func() {
		errc <- c.CallWith(context.Background(), "slow", nil, nil, CallOptions{Timeout: 20 * time.Millisecond})
	}()
	req := readMsg(t, raw).(*Request)
	if err := recv(t, errc); !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if n := c.Pending(); n != 0 {
		t.Fatalf("pending = %d after timeout", n)
	}
	// Cancellation is a different error, and also removes the entry.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { errc <- c.Call(ctx, "slow", nil, nil) }()
	readMsg(t, raw)
	cancel()
	if err := recv(t, errc); !errors.Is(err, ErrCancelled) {
		t.Fatalf("err = %v, want ErrCancelled", err)
	}
	if n := c.Pending(); n != 0 {
		t.Fatalf("pending = %d after cancel", n)
	}
	// A late response goes to the unknown-response path, not to a caller.
	writeRaw(t, raw, fmt.Sprintf(`{"id":%s,"result":1}`, req.ID))
}

func TestCapacityAndCleanupSlot(t *testing.T) {
	unknown := make(chan *Response, 8)
	c, raw := rawPeer(t, Options{MaxPending: 2, OnUnknownResponse: func(ctx context.Context, r *Response) error {
		unknown <- r
		return nil
	}})
	errc := make(chan error, 4)
	for i := 0; i < 2; i++ {
		go func() { errc <- c.Call(context.Background(), "hold", nil, nil) }()
		readMsg(t, raw)
	}
	// The table is full: a regular call fails fast, without queueing.
	if err := c.Call(context.Background(), "more", nil, nil); !errors.Is(err, ErrOverCapacity) {
		t.Fatalf("err = %v, want ErrOverCapacity", err)
	}
	// The cleanup call still goes out, in the reserved slot.
	cleanupErr := make(chan error, 1)
	go func() {
		cleanupErr <- c.CallWith(context.Background(), "terminate", nil, nil, CallOptions{Cleanup: true})
	}()
	req := readMsg(t, raw).(*Request)
	if req.Method != "terminate" {
		t.Fatalf("got %s, want terminate", req.Method)
	}
	// Only one slot is reserved.
	if err := c.CallWith(context.Background(), "close", nil, nil, CallOptions{Cleanup: true}); !errors.Is(err, ErrOverCapacity) {
		t.Fatalf("second cleanup: %v, want ErrOverCapacity", err)
	}
	writeRaw(t, raw, fmt.Sprintf(`{"id":%s,"result":null}`, req.ID))
	if err := recv(t, cleanupErr); err != nil {
		t.Fatalf("cleanup call: %v", err)
	}
	if n := c.Pending(); n != 2 {
		t.Fatalf("pending = %d, want 2", n)
	}
}

func TestCloseOrderResponsesReadFirst(t *testing.T) {
	c, raw := rawPeer(t, Options{})
	type out struct {
		id  int
		err error
	}
	results := make(chan out, 4)
	var ids []ID
	for i := 0; i < 4; i++ {
		go func(i int) {
			var r int
			err := c.Call(context.Background(), "m", i, &r)
			results <- out{i, err}
		}(i)
		ids = append(ids, readMsg(t, raw).(*Request).ID)
	}
	// Two responses arrive, then the transport fails.
	writeRaw(t, raw, fmt.Sprintf(`{"id":%s,"result":1}`, ids[0]))
	writeRaw(t, raw, fmt.Sprintf(`{"id":%s,"result":1}`, ids[2]))
	raw.Close()
	var ok, closed int
	for i := 0; i < 4; i++ {
		o := recv(t, results)
		switch {
		case o.err == nil:
			ok++
		case errors.Is(o.err, ErrClosed):
			closed++
		default:
			t.Fatalf("caller %d: %v", o.id, o.err)
		}
	}
	if ok != 2 || closed != 2 {
		t.Fatalf("ok=%d closed=%d, want 2 and 2", ok, closed)
	}
	<-c.Done()
	if c.Err() == nil {
		t.Fatal("Err() = nil after the transport failed")
	}
	if err := c.Call(context.Background(), "after", nil, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after close: %v", err)
	}
}

func TestServerRequestsBoundedScopedAndDrained(t *testing.T) {
	unknown := make(chan *Response, 4)
	c, raw := rawPeer(t, Options{MaxServerRequests: 3, OnUnknownResponse: func(ctx context.Context, r *Response) error {
		unknown <- r
		return nil
	}})
	errs := make(chan error, 8)
	start := func(scope string) ID {
		go func() {
			errs <- c.CallWith(context.Background(), "approve", nil, nil, CallOptions{ServerRequest: true, Scope: scope})
		}()
		return readMsg(t, raw).(*Request).ID
	}
	a1 := start("thread-a")
	start("thread-a")
	b1 := start("thread-b")
	// The server-to-client table is capped...
	if err := c.CallWith(context.Background(), "approve", nil, nil, CallOptions{ServerRequest: true}); !errors.Is(err, ErrOverCapacity) {
		t.Fatalf("4th server request: %v, want ErrOverCapacity", err)
	}
	// ...separately from regular calls.
	regular := make(chan error, 1)
	go func() { regular <- c.Call(context.Background(), "regular", nil, nil) }()
	rq := readMsg(t, raw).(*Request)
	writeRaw(t, raw, fmt.Sprintf(`{"id":%s,"result":null}`, rq.ID))
	if err := recv(t, regular); err != nil {
		t.Fatal(err)
	}
	// Cancelling a scope fails exactly its calls, with the given error.
	interrupted := errors.New("turn interrupted")
	if n := c.CancelScope("thread-a", interrupted); n != 2 {
		t.Fatalf("CancelScope = %d, want 2", n)
	}
	for i := 0; i < 2; i++ {
		if err := recv(t, errs); !errors.Is(err, interrupted) {
			t.Fatalf("scoped call: %v", err)
		}
	}
	// A late answer to a cancelled call reaches the unknown-response hook.
	writeRaw(t, raw, fmt.Sprintf(`{"id":%s,"result":{"decision":"approved"}}`, a1))
	if r := recv(t, unknown); r.ID != a1 {
		t.Fatalf("unknown response id %v, want %v", r.ID, a1)
	}
	// Completing by id works locally.
	go func() {
		errs <- c.CallWith(context.Background(), "approve", nil, nil, CallOptions{ServerRequest: true})
	}()
	id := readMsg(t, raw).(*Request).ID
	if !c.CompletePending(id, jsontext.Value(`{"decision":"denied"}`), nil) {
		t.Fatal("CompletePending found nothing")
	}
	if err := recv(t, errs); err != nil {
		t.Fatal(err)
	}
	// Close drains the rest with ErrClosed.
	_ = b1
	c.Close()
	if err := recv(t, errs); !errors.Is(err, ErrClosed) {
		t.Fatalf("on close: %v", err)
	}
	if c.Pending() != 0 {
		t.Fatal("pending calls survived Close")
	}
}

func TestUnknownResponsePolicyCanClose(t *testing.T) {
	c, raw := rawPeer(t, Options{OnUnknownResponse: func(ctx context.Context, r *Response) error {
		return errors.New("stray response")
	}})
	writeRaw(t, raw, `{"id":99,"result":true}`)
	recv(t, c.Done())
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "stray") {
		t.Fatalf("Err = %v", err)
	}
}

func TestDuplicateInboundIDRejected(t *testing.T) {
	release := make(chan struct{})
	mux := NewMux()
	mux.HandleFunc("wait", func(ctx context.Context, req *Request) (any, error) {
		<-release
		return "done", nil
	})
	_, raw := rawPeer(t, Options{Handler: mux})
	writeRaw(t, raw, `{"id":5,"method":"wait"}`)
	writeRaw(t, raw, `{"id":5,"method":"wait"}`)
	r := readMsg(t, raw).(*Response)
	if r.Error == nil || r.Error.Code != CodeInvalidRequest || r.ID != Int64ID(5) {
		t.Fatalf("duplicate: %+v", r)
	}
	close(release)
	if r := readMsg(t, raw).(*Response); r.Error != nil || string(r.Result) != `"done"` {
		t.Fatalf("original: %+v", r)
	}
	// Once answered, the id may be used again.
	writeRaw(t, raw, `{"id":5,"method":"wait"}`)
	if r := readMsg(t, raw).(*Response); r.Error != nil {
		t.Fatalf("reuse after answer: %+v", r.Error)
	}
}

func TestDeferredResponseKeepsIDGuard(t *testing.T) {
	ids := make(chan ID, 1)
	mux := NewMux()
	mux.HandleFunc("later", func(ctx context.Context, req *Request) (any, error) {
		ids <- req.ID
		return nil, ErrAsyncResponse
	})
	c, raw := rawPeer(t, Options{Handler: mux})
	writeRaw(t, raw, `{"id":"t1","method":"later"}`)
	id := recv(t, ids)
	// While deferred, the id is still in flight.
	writeRaw(t, raw, `{"id":"t1","method":"later"}`)
	if r := readMsg(t, raw).(*Response); r.Error == nil || r.Error.Code != CodeInvalidRequest {
		t.Fatalf("duplicate of a deferred id: %+v", r)
	}
	if err := c.Respond(id, map[string]string{"status": "interrupted"}, nil); err != nil {
		t.Fatal(err)
	}
	if r := readMsg(t, raw).(*Response); r.ID != StringID("t1") || string(r.Result) != `{"status":"interrupted"}` {
		t.Fatalf("deferred: %+v %s", r, r.Result)
	}
	if err := c.Respond(id, 1, nil); err == nil {
		t.Fatal("second Respond succeeded")
	}
	if c.InFlight() != 0 {
		t.Fatalf("in flight = %d", c.InFlight())
	}
}

func TestOverloadAndIDPolicy(t *testing.T) {
	release := make(chan struct{})
	mux := NewMux()
	mux.HandleFunc("wait", func(ctx context.Context, req *Request) (any, error) {
		<-release
		return nil, nil
	})
	_, raw := rawPeer(t, Options{Handler: mux, MaxInbound: 2, IDPolicy: func(id ID) error {
		if !id.IsInt() || id.Int() < 0 {
			return errors.New("id must be a non-negative integer")
		}
		return nil
	}})
	writeRaw(t, raw, `{"id":"s","method":"wait"}`)
	if r := readMsg(t, raw).(*Response); r.Error == nil || r.Error.Code != CodeInvalidRequest || !strings.Contains(r.Error.Message, "non-negative") {
		t.Fatalf("id policy: %+v", r.Error)
	}
	writeRaw(t, raw, `{"id":1,"method":"wait"}`)
	writeRaw(t, raw, `{"id":2,"method":"wait"}`)
	writeRaw(t, raw, `{"id":3,"method":"wait"}`)
	r := readMsg(t, raw).(*Response)
	if r.ID != Int64ID(3) || r.Error == nil || r.Error.Code != CodeOverloaded || r.Error.Message != "Server overloaded; retry later." {
		t.Fatalf("overload: %+v", r)
	}
	close(release)
	readMsg(t, raw)
	readMsg(t, raw)
}

func TestSlowHandlerDoesNotBlockReading(t *testing.T) {
	release := make(chan struct{})
	mux := echoMux()
	mux.HandleFunc("slow", func(ctx context.Context, req *Request) (any, error) {
		<-release
		return "slow", nil
	})
	_, c := pair(t, Options{Handler: mux}, Options{})
	slow := make(chan error, 1)
	go func() { slow <- c.Call(context.Background(), "slow", nil, nil) }()
	for i := 0; i < 10; i++ {
		if _, err := echo.Call(context.Background(), c, echoParams{Text: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	close(release)
	if err := recv(t, slow); err != nil {
		t.Fatal(err)
	}
}

func TestOrderKeySerialisesWithinKey(t *testing.T) {
	var mu sync.Mutex
	var order []string
	running := map[string]int{}
	started := make(chan string, 8)
	gate := make(chan struct{})
	mux := NewMux()
	mux.HandleFunc("step", func(ctx context.Context, req *Request) (any, error) {
		p, _ := DecodeParams[[]string](req.Params)
		mu.Lock()
		running[p[0]]++
		if running[p[0]] > 1 {
			mu.Unlock()
			return nil, errors.New("two handlers of one key ran at once")
		}
		mu.Unlock()
		started <- p[0] + p[1]
		<-gate
		mu.Lock()
		running[p[0]]--
		order = append(order, p[0]+p[1])
		mu.Unlock()
		return nil, nil
	})
	_, raw := rawPeer(t, Options{Handler: mux, OrderKey: func(r *Request) string {
		p, _ := DecodeParams[[]string](r.Params)
		return p[0]
	}})
	writeRaw(t, raw, `{"id":1,"method":"step","params":["a","1"]}`)
	writeRaw(t, raw, `{"id":2,"method":"step","params":["a","2"]}`)
	writeRaw(t, raw, `{"id":3,"method":"step","params":["b","1"]}`)
	// a1 and b1 start; a2 waits behind a1.
	got := map[string]bool{recv(t, started): true, recv(t, started): true}
	if !got["a1"] || !got["b1"] {
		t.Fatalf("started %v, want a1 and b1", got)
	}
	close(gate)
	if s := recv(t, started); s != "a2" {
		t.Fatalf("third start = %s", s)
	}
	for i := 0; i < 3; i++ {
		if r := readMsg(t, raw).(*Response); r.Error != nil {
			t.Fatal(r.Error)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	ia, ia2 := -1, -1
	for i, s := range order {
		if s == "a1" {
			ia = i
		}
		if s == "a2" {
			ia2 = i
		}
	}
	if ia < 0 || ia2 < ia {
		t.Fatalf("order = %v", order)
	}
}

func TestTwoConnectionsSameIDs(t *testing.T) {
	// One server handler shared by two connections: both clients use id 1
	// and each gets its own answer.
	release := make(chan struct{})
	var arrived sync.WaitGroup
	arrived.Add(2)
	mux := NewMux()
	mux.HandleFunc("who", func(ctx context.Context, req *Request) (any, error) {
		arrived.Done()
		<-release
		var p string
		p, _ = DecodeParams[string](req.Params)
		return p, nil
	})
	_, raw1 := rawPeer(t, Options{Handler: mux})
	_, raw2 := rawPeer(t, Options{Handler: mux})
	writeRaw(t, raw1, `{"id":1,"method":"who","params":"one"}`)
	writeRaw(t, raw2, `{"id":1,"method":"who","params":"two"}`)
	arrived.Wait()
	close(release)
	if r := readMsg(t, raw1).(*Response); string(r.Result) != `"one"` {
		t.Fatalf("conn 1 got %s", r.Result)
	}
	if r := readMsg(t, raw2).(*Response); string(r.Result) != `"two"` {
		t.Fatalf("conn 2 got %s", r.Result)
	}
}

func TestTracePropagates(t *testing.T) {
	traces := make(chan *Trace, 1)
	mux := NewMux()
	mux.HandleFunc("t", func(ctx context.Context, req *Request) (any, error) {
		traces <- TraceFrom(ctx)
		return nil, nil
	})
	_, c := pair(t, Options{Handler: mux}, Options{})
	ctx := WithTrace(context.Background(), &Trace{Traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", Tracestate: "a=b"})
	if err := c.Call(ctx, "t", nil, nil); err != nil {
		t.Fatal(err)
	}
	tr := recv(t, traces)
	if tr == nil || tr.Traceparent != "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" || tr.Tracestate != "a=b" {
		t.Fatalf("trace = %+v", tr)
	}
}

func TestNotificationsInOrderAndErrorCloses(t *testing.T) {
	got := make(chan string, 8)
	mux := NewMux()
	Notification[string]("note").Register(mux, func(ctx context.Context, p string) error {
		got <- p
		return nil
	})
	mux.NotFound = HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		if req.IsCall() {
			return nil, MethodNotFound(req.Method)
		}
		return nil, errors.New("unexpected notification " + req.Method)
	})
	s, c := pair(t, Options{Handler: mux}, Options{})
	for i := 0; i < 5; i++ {
		if err := Notification[string]("note").Notify(context.Background(), c, fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 5; i++ {
		if v := recv(t, got); v != fmt.Sprint(i) {
			t.Fatalf("notification %d = %s", i, v)
		}
	}
	if err := c.Notify(context.Background(), "bogus", nil); err != nil {
		t.Fatal(err)
	}
	recv(t, s.Done())
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("server Err = %v", err)
	}
}

func TestInvalidMessagesAnswered(t *testing.T) {
	_, raw := rawPeer(t, Options{Handler: echoMux()})
	writeRaw(t, raw, `{"id":4,"method":"test/echo","params":{"text":"a","text":"b"}}`)
	r := readMsg(t, raw).(*Response)
	if r.ID != Int64ID(4) || r.Error == nil || r.Error.Code != CodeInvalidRequest || !strings.Contains(r.Error.Message, "duplicate") {
		t.Fatalf("duplicate-key request: %+v", r)
	}
	// The connection goes on serving.
	writeRaw(t, raw, `{"id":5,"method":"test/echo","params":{"text":"ok"}}`)
	if r := readMsg(t, raw).(*Response); r.Error != nil {
		t.Fatal(r.Error)
	}
}

func TestLineStreamSizeLimit(t *testing.T) {
	a, b := socketPair(t)
	c := NewConn(NewLineStream(a, 64), Options{Handler: echoMux(), OnInvalid: func(ctx context.Context, de *DecodeError) (*Response, error) {
		return &Response{ID: de.ID, Error: &Error{Code: CodeInvalidRequest, Message: de.Reason}}, nil
	}})
	raw := NewLineStream(b, 0)
	defer func() { raw.Close(); c.Close() }()
	writeRaw(t, raw, `{"id":1,"method":"test/echo","params":{"text":"`+strings.Repeat("x", 200)+`"}}`)
	r := readMsg(t, raw).(*Response)
	if r.Error == nil || !strings.Contains(r.Error.Message, "limit of 64 bytes") {
		t.Fatalf("oversize: %+v", r)
	}
	writeRaw(t, raw, `{"id":2,"method":"test/echo","params":{"text":"y"}}`)
	if r := readMsg(t, raw).(*Response); r.Error != nil || string(r.Result) != `{"text":"y"}` {
		t.Fatalf("after oversize: %+v", r)
	}
}

func TestCloseDrainsHandlers(t *testing.T) {
	started := make(chan struct{})
	mux := NewMux()
	mux.HandleFunc("poll", func(ctx context.Context, req *Request) (any, error) {
		close(started)
		<-ctx.Done() // a long poll ends when the connection closes
		return "drained", nil
	})
	s, c := pair(t, Options{Handler: mux}, Options{})
	errc := make(chan error, 1)
	go func() { errc <- c.Call(context.Background(), "poll", nil, nil) }()
	recv(t, started)
	s.Close()
	// Whether the drained answer made it before the stream closed or not,
	// the caller ends, and no goroutine is left (goleak checks).
	if err := recv(t, errc); err != nil && !errors.Is(err, ErrClosed) {
		t.Fatalf("call: %v", err)
	}
	recv(t, c.Done())
}

// TestRespondAsyncDoesNotWaitForThePeer: RespondAsync returns while the
// peer reads nothing (net.Pipe has no buffer, so a direct write would
// block), and the response arrives once the peer reads.
func TestRespondAsyncDoesNotWaitForThePeer(t *testing.T) {
	ids := make(chan ID, 1)
	mux := NewMux()
	mux.HandleFunc("later", func(ctx context.Context, req *Request) (any, error) {
		ids <- req.ID
		return nil, ErrAsyncResponse
	})
	c, raw := rawPeer(t, Options{Handler: mux})
	writeRaw(t, raw, `{"id":7,"method":"later"}`)
	id := recv(t, ids)
	done := make(chan error, 1)
	go func() { done <- c.RespondAsync(id, "queued", nil) }()
	if err := recv(t, done); err != nil {
		t.Fatal(err)
	}
	if r := readMsg(t, raw).(*Response); r.ID != Int64ID(7) || string(r.Result) != `"queued"` {
		t.Fatalf("response: %+v %s", r, r.Result)
	}
	if err := c.RespondAsync(id, 1, nil); err == nil {
		t.Fatal("a second answer was accepted")
	}
	if err := c.RespondAsync(Int64ID(99), 1, nil); err == nil {
		t.Fatal("an answer to an unknown id was accepted")
	}
}

// TestHandlerNotifiesWhileDraining: a handler that answers and then
// notifies (app-server's thread/start: the answer, then thread/started)
// still gets its notification out when the connection starts closing
// between the two, as when the peer reads the answer and ends its input at
// once. Before, the notification was refused with ErrClosed.
func TestHandlerNotifiesWhileDraining(t *testing.T) {
	ids := make(chan ID, 1)
	notified := make(chan error, 1)
	var conn *Conn
	mux := NewMux()
	mux.HandleFunc("start", func(ctx context.Context, req *Request) (any, error) {
		ids <- req.ID
		<-ctx.Done() // the connection is closing
		notified <- conn.Notify(context.Background(), "started", map[string]int{"n": 1})
		return nil, ErrAsyncResponse
	})
	c, raw := rawPeer(t, Options{Handler: mux})
	conn = c
	writeRaw(t, raw, `{"id":1,"method":"start"}`)
	id := recv(t, ids)
	if err := c.RespondAsync(id, "answer", nil); err != nil {
		t.Fatal(err)
	}
	if r := readMsg(t, raw).(*Response); string(r.Result) != `"answer"` {
		t.Fatalf("response: %+v", r)
	}
	c.Shutdown()
	if err := recv(t, notified); err != nil {
		t.Fatalf("notify while draining: %v", err)
	}
	if n, ok := readMsg(t, raw).(*Request); !ok || n.Method != "started" {
		t.Fatalf("want the notification, got %+v", n)
	}
}

// MaxInbound counts the requests a client is still waiting for: one
// answered early (Respond, then ErrAsyncResponse) whose handler is still
// finishing holds no slot, since the client, which has its answer, may
// send its next request at once and cannot know when the handler ends.
// (The app-server's thread/start answers and then announces the thread;
// a client's next request was refused as overloaded in that gap.)
func TestAnsweredRequestHoldsNoInboundSlot(t *testing.T) {
	finish, finished := make(chan struct{}), make(chan struct{})
	mux := NewMux()
	mux.HandleFunc("early", func(ctx context.Context, req *Request) (any, error) {
		defer close(finished)
		if err := ConnFrom(ctx).Respond(req.ID, "early", nil); err != nil {
			return nil, err
		}
		<-finish
		return nil, ErrAsyncResponse
	})
	mux.HandleFunc("next", func(ctx context.Context, req *Request) (any, error) { return "next", nil })
	c, raw := rawPeer(t, Options{Handler: mux, MaxInbound: 1})
	writeRaw(t, raw, `{"id":1,"method":"early"}`)
	if r := readMsg(t, raw).(*Response); string(r.Result) != `"early"` {
		t.Fatalf("early: %+v", r)
	}
	if n := c.InFlight(); n != 0 {
		t.Errorf("in flight after the answer = %d", n)
	}
	writeRaw(t, raw, `{"id":2,"method":"next"}`)
	if r := readMsg(t, raw).(*Response); r.Error != nil || string(r.Result) != `"next"` {
		t.Fatalf("the request after an answered one: %+v", r.Error)
	}
	// The id of the running handler stays taken until it returns.
	writeRaw(t, raw, `{"id":1,"method":"next"}`)
	if r := readMsg(t, raw).(*Response); r.Error == nil || r.Error.Code != CodeInvalidRequest {
		t.Fatalf("the id of a running handler reused: %+v", r)
	}
	close(finish)
	<-finished
}
