package jsonrpc

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestWebSocketTransport(t *testing.T) {
	served := make(chan *Conn, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st, err := AcceptWebSocket(w, r, 1024)
		if err != nil {
			return
		}
		c := NewConn(st, Options{Handler: echoMux()})
		served <- c
		<-c.Done()
	}))
	defer hs.Close()
	ctx := context.Background()
	st, err := DialWebSocket(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := NewConn(st, Options{})
	srvConn := recv(t, served)
	res, err := echo.Call(ctx, c, echoParams{Text: "over ws"})
	if err != nil || res.Text != "over ws" {
		t.Fatalf("echo = %+v, %v", res, err)
	}
	// Beyond the server's 1 KiB limit the WebSocket is closed with 1009.
	_, err = echo.Call(ctx, c, echoParams{Text: strings.Repeat("x", 4096)})
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("oversize over ws: %v, want ErrClosed", err)
	}
	recv(t, srvConn.Done())
	if e := srvConn.Err(); e == nil || !strings.Contains(e.Error(), "1009") && !strings.Contains(e.Error(), "limit") {
		t.Fatalf("server side ended with %v, want a message-too-big error", e)
	}
	c.Close()
}

func TestUnixSocketTransport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rpc.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		c := NewConn(NewLineStream(nc, 0), Options{Handler: echoMux()})
		<-c.Done()
	}()
	nc, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	c := NewConn(NewLineStream(nc, 0), Options{})
	for _, text := range []string{"a", "b\nc", "unicode é ✓"} {
		res, err := echo.Call(context.Background(), c, echoParams{Text: text})
		if err != nil || res.Text != text {
			t.Fatalf("echo %q = %+v, %v", text, res, err)
		}
	}
	c.Close()
	recv(t, done)
}

func TestParseListenURL(t *testing.T) {
	good := map[string]Listen{
		"stdio://":            {Scheme: "stdio"},
		"stdio":               {Scheme: "stdio"},
		"off":                 {Scheme: "off"},
		"ws://127.0.0.1:0":    {Scheme: "ws", Addr: "127.0.0.1:0"},
		"ws://[::1]:8080":     {Scheme: "ws", Addr: "[::1]:8080"},
		"ws://localhost:9000": {Scheme: "ws", Addr: "localhost:9000"},
		"unix:///tmp/x.sock":  {Scheme: "unix", Addr: "/tmp/x.sock"},
		"unix://rel.sock":     {Scheme: "unix", Addr: "rel.sock"},
	}
	for in, want := range good {
		got, err := ParseListenURL(in)
		if err != nil || got != want {
			t.Errorf("ParseListenURL(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if err == nil && got.String() == "" {
			t.Errorf("%q formats as empty", in)
		}
	}
	for _, bad := range []string{"", "ws://", "ws://127.0.0.1", "ws://example.com:80", "http://127.0.0.1:80", "unix://", "stdio://x", "ws://127.0.0.1:notaport", "tcp"} {
		if _, err := ParseListenURL(bad); err == nil {
			t.Errorf("ParseListenURL(%q) accepted", bad)
		}
	}
}

func TestLineStreamGuardRefusesHostileEarly(t *testing.T) {
	a, b := socketPair(t)
	c := NewConn(NewLineStream(a, 0), Options{Handler: echoMux(), OnInvalid: func(ctx context.Context, de *DecodeError) (*Response, error) {
		return &Response{ID: Int64ID(-1), Error: &Error{Code: CodeInvalidRequest, Message: de.Reason}}, nil
	}})
	raw := NewLineStream(b, 0)
	defer func() { raw.Close(); c.Close() }()
	hostile := compactZeros(1_000_000)
	deep := []byte(`{"id":1,"method":"m","params":` + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + `}`)
	for _, msg := range [][]byte{hostile, deep} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		wrote := make(chan error, 1)
		go func() { wrote <- raw.Write(msg) }()
		r := readMsg(t, raw).(*Response)
		if err := recv(t, wrote); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if r.Error == nil || !strings.Contains(r.Error.Message, "more than") && !strings.Contains(r.Error.Message, "nesting") {
			t.Fatalf("hostile message answered %+v", r)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > uint64(len(msg)) {
			t.Fatalf("reading a %d-byte hostile line allocated %d bytes", len(msg), grew)
		}
	}
	// The stream resynchronises on the next line.
	writeRaw(t, raw, `{"id":2,"method":"test/echo","params":{"text":"after"}}`)
	if r := readMsg(t, raw).(*Response); r.Error != nil || string(r.Result) != `{"text":"after"}` {
		t.Fatalf("after hostile: %+v", r)
	}
}

func TestWebSocketGuardRefusesHostileEarly(t *testing.T) {
	invalid := make(chan *DecodeError, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st, err := AcceptWebSocket(w, r, 0)
		if err != nil {
			return
		}
		c := NewConn(st, Options{Handler: echoMux(), OnInvalid: func(ctx context.Context, de *DecodeError) (*Response, error) {
			invalid <- de
			return nil, nil
		}})
		<-c.Done()
	}))
	defer hs.Close()
	st, err := DialWebSocket(context.Background(), "ws"+strings.TrimPrefix(hs.URL, "http"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := NewConn(st, Options{})
	defer c.Close()
	if err := st.Write(compactZeros(1_000_000)); err != nil {
		t.Fatal(err)
	}
	if de := recv(t, invalid); !strings.Contains(de.Reason, "more than 262144") {
		t.Fatalf("refusal: %v", de)
	}
	if res, err := echo.Call(context.Background(), c, echoParams{Text: "still here"}); err != nil || res.Text != "still here" {
		t.Fatalf("after hostile: %+v %v", res, err)
	}
}

// TestCloseDoesNotHangOnAnUncloseableReader: a stream whose Read cannot be
// unblocked (a reader with no closer, whose peer keeps its end open) must
// not hold Close forever; it waits DrainTimeout for it.
func TestCloseDoesNotHangOnAnUncloseableReader(t *testing.T) {
	r, w := io.Pipe()
	c := NewConn(NewLineStreamRW(r, io.Discard, nil, 0), Options{DrainTimeout: 20 * time.Millisecond})
	done := make(chan struct{})
	go func() { c.Close(); close(done) }()
	recv(t, done)
	w.Close() // lets the abandoned reader end, for goleak
}

// TestLongMessagesOfChangingSizes: messages longer than a stream's read
// buffer arrive whole and intact whatever the size of the one before
// (which sizes the buffer the next one starts in), and none keeps a buffer
// much larger than itself.
func TestLongMessagesOfChangingSizes(t *testing.T) {
	sizes := []int{100 << 10, 1 << 20, 70 << 10, 3 << 20, 5 << 20, 200 << 10, 200 << 10}
	msgs := make([][]byte, len(sizes))
	for i, n := range sizes {
		m := make([]byte, n)
		for j := range m {
			m[j] = 'a' + byte((i+j)%26)
		}
		msgs[i] = m
	}
	check := func(t *testing.T, read func() ([]byte, error)) {
		for i, want := range msgs {
			got, err := read()
			if err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
			if string(got) != string(want) {
				t.Fatalf("message %d (%d bytes) arrived as %d different bytes", i, len(want), len(got))
			}
			if cap(got) > 2*len(got) {
				t.Fatalf("message %d: %d bytes kept in a buffer of %d", i, len(got), cap(got))
			}
		}
	}
	t.Run("line", func(t *testing.T) {
		a, b := socketPair(t)
		rd, wr := NewLineStream(a, 0), NewLineStream(b, 0)
		defer func() { rd.Close(); wr.Close() }()
		wrote := make(chan error, 1)
		go func() {
			for _, m := range msgs {
				if err := wr.Write(m); err != nil {
					wrote <- err
					return
				}
			}
			wrote <- nil
		}()
		check(t, rd.Read)
		if err := recv(t, wrote); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("websocket", func(t *testing.T) {
		got := make(chan []byte, len(msgs))
		failed := make(chan error, 1)
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			st, err := AcceptWebSocket(w, r, 0)
			if err != nil {
				failed <- err
				return
			}
			defer st.Close()
			for range msgs {
				m, err := st.Read()
				if err != nil {
					failed <- err
					return
				}
				got <- m
			}
		}))
		defer hs.Close()
		st, err := DialWebSocket(context.Background(), "ws"+strings.TrimPrefix(hs.URL, "http"), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for _, m := range msgs {
			if err := st.Write(m); err != nil {
				t.Fatal(err)
			}
		}
		check(t, func() ([]byte, error) {
			select {
			case m := <-got:
				return m, nil
			case err := <-failed:
				return nil, err
			case <-time.After(10 * time.Second):
				return nil, errors.New("timed out")
			}
		})
	})
}
