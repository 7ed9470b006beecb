package jsonrpc

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json/jsontext"
)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	t.Cleanup(cancel)
	return ctx
}

// notifyUntilError notifies until a write fails: the peer reads nothing, so
// the transport's buffers fill, then the queue.
func notifyUntilError(t *testing.T, c *Conn) error {
	t.Helper()
	payload := strings.Repeat("x", 8<<10)
	for i := 0; i < 1_000_000; i++ {
		if err := c.Notify(context.Background(), "n", payload); err != nil {
			return err
		}
	}
	t.Fatal("writes never failed")
	return nil
}

func TestSlowPeerClosedWithReason(t *testing.T) {
	served := make(chan *Conn, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st, err := AcceptWebSocket(w, r, 0)
		if err != nil {
			return
		}
		c := NewConn(st, Options{OnFullQueue: FullQueueClose, MaxQueuedBytes: 64 << 10})
		served <- c
		<-c.Done()
	}))
	defer hs.Close()
	ctx := testContext(t)
	// A bare WebSocket client that reads nothing until told.
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"),
		&websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(-1)
	srv := recv(t, served)
	err = notifyUntilError(t, srv)
	if !errors.Is(err, ErrSlowPeer) || !errors.Is(err, ErrClosed) {
		t.Fatalf("write error %v, want ErrSlowPeer and ErrClosed", err)
	}
	// The client now reads what was written, then the close frame.
	for {
		_, _, err := ws.Read(ctx)
		if err == nil {
			continue
		}
		var ce websocket.CloseError
		if !errors.As(err, &ce) {
			t.Fatalf("read ended with %v, want a close frame", err)
		}
		if ce.Code != websocket.StatusPolicyViolation || ce.Reason != "client too slow to read: outbound queue full (65536 bytes)" {
			t.Fatalf("closed with %d %q", ce.Code, ce.Reason)
		}
		break
	}
	recv(t, srv.Done())
	if !errors.Is(srv.Err(), ErrSlowPeer) {
		t.Fatalf("Err() = %v, want ErrSlowPeer", srv.Err())
	}
}

func TestSlowPeerClosedOnLineStream(t *testing.T) {
	a, b := socketPair(t)
	defer b.Close()
	c := NewConn(NewLineStream(a, 0), Options{OnFullQueue: FullQueueClose, MaxQueuedBytes: 64 << 10})
	defer c.Close()
	if err := notifyUntilError(t, c); !errors.Is(err, ErrSlowPeer) {
		t.Fatalf("write error %v, want ErrSlowPeer", err)
	}
	recv(t, c.Done())
	if err := c.Notify(context.Background(), "late", 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Notify after close = %v", err)
	}
}

func TestFullQueueWaitsByDefault(t *testing.T) {
	// Without the slow-peer policy, a full queue holds writers back and
	// the connection lives on: once the peer reads, writes go through.
	s, raw := rawPeer(t, Options{MaxQueuedBytes: 64 << 10})
	fillQueue(t, s)
	select {
	case <-s.Done():
		t.Fatal("the connection closed on a full queue")
	default:
	}
	got := make(chan error, 1)
	go func() { got <- s.Notify(testContext(t), "after", "ok") }()
	for {
		m := readMsg(t, raw)
		if r, ok := m.(*Request); ok && r.Method == "after" {
			break
		}
	}
	if err := recv(t, got); err != nil {
		t.Fatal(err)
	}
}

func TestQueueBoundOption(t *testing.T) {
	s, _ := rawPeer(t, Options{MaxQueuedBytes: 64 << 10})
	fillQueue(t, s)
	s.wq.mu.Lock()
	queued := s.wq.bytes
	s.wq.mu.Unlock()
	if queued > 64<<10 {
		t.Fatalf("%d bytes queued, over the 64 KiB bound", queued)
	}
}

func TestLargeMessagesNeedTheBudget(t *testing.T) {
	opts := Options{MaxQueuedBytes: 64 << 10, OutboundBudget: 1 << 20}
	s, c := pair(t, Options{Handler: echoMux()}, opts)
	// Its own, longer deadline: the test moves about 6 MiB through the
	// encoder and the race detector, 0.4 s on a quiet machine, 1.4-4.3 s
	// beside six CPU burners, and over 10 s (testContext's limit) in a
	// full -race run of the repository at load 25.
	ctx, cancel := context.WithTimeout(context.Background(), 6*waitLimit)
	defer cancel()
	// An empty queue is no reason to take a message of any size.
	var tl *TooLargeError
	err := c.Notify(ctx, "big", strings.Repeat("x", 2<<20))
	if !errors.As(err, &tl) || tl.Limit != 1<<20 {
		t.Fatalf("2 MiB notify with a 1 MiB budget = %v, want *TooLargeError", err)
	}
	if _, err := echo.Call(ctx, c, echoParams{Text: strings.Repeat("y", 2<<20)}); !errors.As(err, &tl) {
		t.Fatalf("2 MiB call = %v, want *TooLargeError", err)
	}
	// Within the budget, large messages go through, and give it back.
	text := strings.Repeat("z", 512<<10)
	for i := 0; i < 4; i++ {
		res, err := echo.Call(ctx, c, echoParams{Text: text})
		if err != nil || res.Text != text {
			t.Fatalf("512 KiB echo: %v", err)
		}
	}
	waitBudget(t, c, holding(0))
	_ = s
}

// waitBudget waits until the budget of c satisfies ok (releases happen on
// the flusher, just after the write).
func waitBudget(t *testing.T, c *Conn, ok func(used int64, waiters int) bool) {
	t.Helper()
	timeout := time.After(waitLimit)
	b := &c.budget
	for {
		b.mu.Lock()
		used, waiters := b.used, len(b.waiters)
		if ok(used, waiters) {
			b.mu.Unlock()
			return
		}
		changed := b.watchLocked()
		b.mu.Unlock()
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("budget holds %d bytes with %d waiters: not what the test waits for", used, waiters)
		}
	}
}

func holding(n int64) func(int64, int) bool {
	return func(used int64, _ int) bool { return used == n }
}

func TestResponseOverBudgetBecomesAnError(t *testing.T) {
	mux := NewMux()
	mux.HandleFunc("big", func(ctx context.Context, req *Request) (any, error) {
		return strings.Repeat("x", 2<<20), nil
	})
	_, c := pair(t, Options{Handler: mux, OutboundBudget: 1 << 20}, Options{})
	err := c.Call(testContext(t), "big", nil, nil)
	var we *Error
	if !errors.As(err, &we) || we.Code != CodeInternalError ||
		!strings.Contains(we.Message, "over this connection's limit of 1048576 bytes for responses in flight") {
		t.Fatalf("oversized response: %v", err)
	}
}

func TestReserveResponse(t *testing.T) {
	const budgetBytes = 1 << 20
	releaseA := make(chan struct{})
	reservedB := make(chan error, 1)
	mux := NewMux()
	mux.HandleFunc("huge", func(ctx context.Context, req *Request) (any, error) {
		return nil, ReserveResponse(ctx, 2<<20)
	})
	mux.HandleFunc("a", func(ctx context.Context, req *Request) (any, error) {
		if err := ReserveResponse(ctx, 800<<10); err != nil {
			return nil, err
		}
		<-releaseA
		rb := NewResultBuffer(700 << 10)
		rb.B = append(rb.B, '"')
		rb.B = append(rb.B, strings.Repeat("a", 700<<10)...)
		rb.B = append(rb.B, '"')
		return rb, nil
	})
	mux.HandleFunc("b", func(ctx context.Context, req *Request) (any, error) {
		err := ReserveResponse(ctx, 800<<10)
		reservedB <- err
		return "b", err
	})
	s, c := pair(t, Options{Handler: mux, OutboundBudget: budgetBytes, MaxQueuedBytes: 64 << 10}, Options{})
	ctx := testContext(t)
	var we *Error
	if err := c.Call(ctx, "huge", nil, nil); !errors.As(err, &we) || !strings.Contains(we.Message, "limit of 1048576 bytes") {
		t.Fatalf("a reservation over the budget: %v", err)
	}
	aDone := make(chan error, 1)
	var aResult string
	go func() { aDone <- c.Call(ctx, "a", nil, &aResult) }()
	waitBudget(t, s, holding(800<<10))
	bDone := make(chan error, 1)
	go func() { bDone <- c.Call(ctx, "b", nil, nil) }()
	// b waits for the budget a holds.
	waitBudget(t, s, func(_ int64, waiters int) bool { return waiters == 1 })
	select {
	case err := <-reservedB:
		t.Fatalf("b reserved while a held the budget: %v", err)
	default:
	}
	close(releaseA)
	if err := recv(t, aDone); err != nil || aResult != strings.Repeat("a", 700<<10) {
		t.Fatalf("a = %d bytes, %v", len(aResult), err)
	}
	if err := recv(t, reservedB); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, bDone); err != nil {
		t.Fatal(err)
	}
	waitBudget(t, s, holding(0))
}

func TestResultBufferBuiltInPlace(t *testing.T) {
	rb := NewResultBuffer(16)
	rb.B = append(rb.B, `{"k":"v"}`...)
	buf := rb.buf
	msg := rb.response(Int64ID(7))
	if string(msg) != `{"id":7,"result":{"k":"v"}}` {
		t.Fatalf("response %s", msg)
	}
	if &msg[0] != &buf[resultHeadroom-len(`{"id":7,"result":`)] {
		t.Fatal("the response was copied out of the result buffer")
	}
	// An id longer than the headroom, or a result that outgrew its buffer,
	// still makes a correct response.
	long := StringID(strings.Repeat("i", 200))
	rb = NewResultBuffer(1)
	rb.B = append(rb.B, `[1,2,3]`...)
	if got, want := string(rb.response(long)), `{"id":"`+strings.Repeat("i", 200)+`","result":[1,2,3]}`; got != want {
		t.Fatalf("response %s", got)
	}
	// Through a connection.
	mux := NewMux()
	mux.HandleFunc("rb", func(ctx context.Context, req *Request) (any, error) {
		rb := NewResultBuffer(8)
		rb.B = append(rb.B, `"inplace"`...)
		return rb, nil
	})
	_, c := pair(t, Options{Handler: mux}, Options{})
	var got string
	if err := c.Call(testContext(t), "rb", nil, &got); err != nil || got != "inplace" {
		t.Fatalf("call = %q, %v", got, err)
	}
}

func TestSendEncodedSharesBytes(t *testing.T) {
	// One encoded notification for two connections; the bytes are the
	// caller's and must come out of both unchanged, and never be recycled.
	msg := make([]byte, 0, pooledCap) // a capacity the pool would take
	msg = append(msg, `{"method":"shared","params":{"x":"`...)
	msg = append(msg, strings.Repeat("s", 8<<10)...)
	msg = append(msg, `"},"emittedAtMs":1700000000000}`...)
	orig := string(msg)
	var raws []Stream
	for i := 0; i < 2; i++ {
		c, raw := rawPeer(t, Options{})
		raws = append(raws, raw)
		if err := c.SendEncoded(testContext(t), msg); err != nil {
			t.Fatal(err)
		}
		// Pooled messages of the same size: a recycled msg would be
		// overwritten by these.
		b := c.Batch()
		for j := 0; j < 8; j++ {
			b.NotifyAppend("other", 8<<10, func(dst []byte) []byte {
				dst, _ = jsontext.AppendQuote(dst, strings.Repeat("o", 8<<10))
				return dst
			})
		}
		if err := b.Send(); err != nil {
			t.Fatal(err)
		}
	}
	for _, raw := range raws {
		got, err := raw.Read()
		if err != nil || string(got) != orig {
			t.Fatalf("peer got %.60q..., %v", got, err)
		}
	}
	if string(msg) != orig {
		t.Fatal("SendEncoded's bytes were modified")
	}
	c, _ := rawPeer(t, Options{})
	for _, bad := range []string{"", "[]", `{"a":` + "\n" + `1}`, "null"} {
		if err := c.SendEncoded(testContext(t), []byte(bad)); err == nil {
			t.Errorf("SendEncoded(%q) accepted", bad)
		}
	}
}
