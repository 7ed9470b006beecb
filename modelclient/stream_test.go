package modelclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the .golden files of testdata/streams")

// TestRecordedStreams replays each testdata/streams/*.sse (recorded from
// the mock, or written by hand for the edge cases) through a real HTTP
// exchange and compares the events with its .golden file.
func TestRecordedStreams(t *testing.T) {
	files, err := filepath.Glob("testdata/streams/*.sse")
	if err != nil || len(files) == 0 {
		t.Fatalf("no streams: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			c := client(t, provider(server(t, sse(string(body)))), Options{})
			s, err := c.Stream(testCtx(t), Request{Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got := render(collect(s))
			golden := strings.TrimSuffix(f, ".sse") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Fatalf("events differ from %s\n--- got\n%s--- want\n%s", golden, got, want)
			}
		})
	}
}

// TestStreamEndings checks how each kind of ending is classified.
func TestStreamEndings(t *testing.T) {
	read := func(t *testing.T, name string) error {
		body, err := os.ReadFile(filepath.Join("testdata/streams", name))
		if err != nil {
			t.Fatal(err)
		}
		c := client(t, provider(server(t, sse(string(body)))), Options{})
		s, err := c.Stream(testCtx(t), Request{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		_, end := collect(s)
		if _, again := s.Next(); again != end {
			t.Fatalf("Next after the end returned %v, then %v", end, again)
		}
		return end
	}
	if err := read(t, "edge-comments-unknown.sse"); err != io.EOF {
		t.Fatalf("completed stream: %v", err)
	}
	for _, name := range []string{"edge-cut.sse", "edge-done-marker.sse"} {
		if err := read(t, name); !errors.Is(err, ErrStreamCut) {
			t.Fatalf("%s: %v, want ErrStreamCut", name, err)
		}
	}
	var re *ResponseError
	if err := read(t, "edge-failed.sse"); !errors.As(err, &re) || re.Code != "rate_limit_exceeded" ||
		re.RetryAfter != 1898*time.Millisecond || !re.Retryable() {
		t.Fatalf("failed: %v %+v", err, re)
	}
	if err := read(t, "edge-failed-context.sse"); !errors.As(err, &re) || re.Retryable() {
		t.Fatalf("context_length_exceeded must not be retryable: %v", err)
	}
	if err := read(t, "edge-incomplete.sse"); !errors.As(err, &re) || re.Code != "max_output_tokens" || re.Retryable() {
		t.Fatalf("incomplete: %v", err)
	}
}

// TestCutConnection: a connection dropped mid-stream (no final chunk) is
// ErrStreamCut too, wrapping the transport's error.
func TestCutConnection(t *testing.T) {
	url := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\"}}\n\n")
		http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	})
	c := client(t, provider(url), Options{})
	s, err := c.Stream(testCtx(t), Request{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, end := collect(s)
	if len(evs) != 1 || !errors.Is(end, ErrStreamCut) {
		t.Fatalf("events %v, end %v", evs, end)
	}
}

// stallServer sends one event and then waits for the client to leave,
// reporting it on gone.
func stallServer(t *testing.T, headers bool) (url string, gone chan struct{}) {
	gone = make(chan struct{}, 4)
	url = server(t, func(w http.ResponseWriter, r *http.Request) {
		// The server notices a client leave only once the body is read.
		io.Copy(io.Discard, r.Body)
		if headers {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\"}}\n\n")
			http.NewResponseController(w).Flush()
		}
		<-r.Context().Done()
		gone <- struct{}{}
	})
	return url, gone
}

func waitGone(t *testing.T, gone chan struct{}) {
	t.Helper()
	select {
	case <-gone:
	case <-time.After(waitFor):
		t.Fatal("the server never saw the client leave")
	}
}

func TestIdleTimeout(t *testing.T) {
	url, gone := stallServer(t, true)
	p := provider(url)
	// On a loaded machine the headers themselves can take longer than a
	// short idle timeout; such a request is retried (at once: the test's
	// Sleep does not wait), so that the stream below is the one under
	// test. The stall server's gone channel holds the 4 requests this
	// allows.
	p.StreamIdleTimeout = 200 * time.Millisecond
	p.RequestMaxRetries = 3
	c := client(t, p, Options{})
	s, err := c.Stream(testCtx(t), Request{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, end := collect(s)
	if len(evs) != 1 || !errors.Is(end, ErrStreamIdle) {
		t.Fatalf("events %v, end %v", evs, end)
	}
	waitGone(t, gone)
}

// TestIdleBeforeHeaders: a server that never answers counts as idle, and
// the request is retried.
func TestIdleBeforeHeaders(t *testing.T) {
	url, gone := stallServer(t, false)
	p := provider(url)
	// Long enough for each request to reach the server's handler on a
	// loaded machine (with 50ms one sometimes did not, and the server
	// never saw it leave).
	p.StreamIdleTimeout = 200 * time.Millisecond
	p.RequestMaxRetries = 1
	var retries []Retry
	c := client(t, p, Options{OnRetry: func(r Retry) { retries = append(retries, r) }})
	_, err := c.Stream(testCtx(t), Request{})
	if !errors.Is(err, ErrStreamIdle) || len(retries) != 1 || !errors.Is(retries[0].Err, ErrStreamIdle) {
		t.Fatalf("err %v, retries %+v", err, retries)
	}
	waitGone(t, gone)
	waitGone(t, gone)
}

// TestCancelClosesConnection: cancelling the context while Next waits
// ends Next with the context's error and drops the connection.
func TestCancelClosesConnection(t *testing.T) {
	url, gone := stallServer(t, true)
	c := client(t, provider(url), Options{})
	ctx, cancel := context.WithCancel(testCtx(t))
	s, err := c.Stream(ctx, Request{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ev, err := s.Next(); err != nil {
		t.Fatalf("first event: %v %v", ev, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Next()
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Next after cancel: %v", err)
		}
	case <-time.After(waitFor):
		t.Fatal("Next did not return after cancel")
	}
	waitGone(t, gone)
}

// TestCloseWhileWaiting: Close from another goroutine unblocks Next.
func TestCloseWhileWaiting(t *testing.T) {
	url, gone := stallServer(t, true)
	c := client(t, provider(url), Options{})
	s, err := c.Stream(testCtx(t), Request{})
	if err != nil {
		t.Fatal(err)
	}
	s.Next()
	done := make(chan error, 1)
	go func() {
		_, err := s.Next()
		done <- err
	}()
	s.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("Next after Close: %v", err)
		}
	case <-time.After(waitFor):
		t.Fatal("Next did not return after Close")
	}
	waitGone(t, gone)
	if _, err := s.Next(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next after Close: %v", err)
	}
}

func TestHeaderOfStream(t *testing.T) {
	url := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "req-42")
		sse("data: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\"}}\n\n")(w, r)
	})
	c := client(t, provider(url), Options{})
	s, err := c.Stream(testCtx(t), Request{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Header().Get("X-Request-Id") != "req-42" {
		t.Fatalf("header %v", s.Header())
	}
}

// fakeTransport answers every request with body, without a network.
type fakeTransport struct{ body []byte }

func (f fakeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{
		StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(f.body)), Request: r,
	}, nil
}

// FuzzStream sends arbitrary bytes through the whole stream path (the
// SDK's SSE framing and the event decoder): it must never panic, and must
// end with io.EOF right after a Completed, or with an error.
func FuzzStream(f *testing.F) {
	f.Add([]byte("data: {\"type\":\"response.completed\"}\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := New(provider("http://fuzz.invalid"), Options{
			HTTPClient: &http.Client{Transport: fakeTransport{body}},
			Getenv:     func(string) string { return "" },
		})
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.Stream(context.Background(), Request{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		evs, end := collect(s)
		if end == io.EOF {
			if _, ok := evs[len(evs)-1].(Completed); !ok {
				t.Fatalf("EOF after %T, not Completed", evs[len(evs)-1])
			}
		}
		for _, ev := range evs[:max(len(evs)-1, 0)] {
			if _, ok := ev.(Completed); ok {
				t.Fatal("an event after Completed")
			}
		}
		for _, ev := range evs {
			switch e := ev.(type) {
			case ReasoningSummaryTextDelta:
				if e.SummaryIndex < 0 || e.OutputIndex < 0 {
					t.Fatalf("negative index passed: %+v", e)
				}
			case ReasoningTextDelta:
				if e.ContentIndex < 0 || e.OutputIndex < 0 {
					t.Fatalf("negative index passed: %+v", e)
				}
			}
			if d, ok := ev.(OutputItemDone); ok {
				if _, err := d.Item.MarshalJSON(); err != nil {
					t.Fatalf("item %+v does not marshal: %v", d.Item, err)
				}
			}
		}
	})
}

// FuzzItem: any item the API may send decodes, encodes, and decodes again
// to the same item (ids and raw JSON aside, which are not sent back).
func FuzzItem(f *testing.F) {
	f.Add([]byte(`{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var it Item
		if json.Unmarshal(data, &it) != nil {
			return
		}
		out, err := json.Marshal(it)
		if err != nil {
			t.Fatalf("marshal %+v: %v", it, err)
		}
		var back Item
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("re-decoding %s: %v", out, err)
		}
		if back.Type != it.Type || back.CallID != it.CallID || back.Arguments != it.Arguments ||
			back.Output != it.Output || back.EncryptedContent != it.EncryptedContent || Text(back.Content) != Text(it.Content) {
			t.Fatalf("round trip changed the item:\n%+v\n%+v", it, back)
		}
	})
}
