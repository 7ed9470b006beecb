package modelclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/codexd/codexd/config"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitFor bounds every wait of a test: long enough for a loaded machine,
// short enough to fail rather than hang.
const waitFor = 20 * time.Second

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	t.Cleanup(cancel)
	return ctx
}

func provider(url string) config.Provider {
	return config.Provider{
		ID: "test", Name: "Test", BaseURL: url + "/v1", WireAPI: config.WireResponses,
		RequestMaxRetries: 0, StreamMaxRetries: 0, StreamIdleTimeout: time.Minute,
	}
}

// server runs h and returns its URL; it is closed when the test ends,
// after the test's clients.
func server(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s.URL
}

// client makes a Client with its own transport, closed at the end.
func client(t *testing.T, p config.Provider, opts Options) *Client {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	opts.HTTPClient = &http.Client{Transport: tr}
	if opts.Getenv == nil {
		opts.Getenv = func(string) string { return "" }
	}
	if opts.Jitter == nil {
		opts.Jitter = func() float64 { return 1 }
	}
	if opts.Sleep == nil {
		opts.Sleep = func(ctx context.Context, d time.Duration) error { return ctx.Err() }
	}
	c, err := New(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sse writes body as an event stream.
func sse(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	}
}

// collect reads s to its end and returns the events and the final error
// (io.EOF after Completed).
func collect(s *Stream) ([]Event, error) {
	var evs []Event
	for {
		ev, err := s.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

// render prints events one a line, and how the stream ended.
func render(evs []Event, end error) string {
	var b strings.Builder
	for _, ev := range evs {
		switch e := ev.(type) {
		case OutputItemAdded:
			fmt.Fprintf(&b, "OutputItemAdded %d %s\n", e.OutputIndex, renderItem(e.Item))
		case OutputItemDone:
			fmt.Fprintf(&b, "OutputItemDone %d %s\n", e.OutputIndex, renderItem(e.Item))
		case Completed:
			fmt.Fprintf(&b, "Completed %s usage=%+v\n", e.ResponseID, e.Usage)
		default:
			fmt.Fprintf(&b, "%T %+v\n", ev, ev)
		}
	}
	switch {
	case errors.Is(end, io.EOF):
		b.WriteString("end: EOF\n")
	default:
		var re *ResponseError
		if errors.As(end, &re) {
			fmt.Fprintf(&b, "end: ResponseError %+v\n", *re)
		} else {
			fmt.Fprintf(&b, "end: %v\n", end)
		}
	}
	return strings.ReplaceAll(b.String(), "modelclient.", "")
}

func renderItem(it Item) string {
	raw := it.Raw
	it.Raw = nil
	s := fmt.Sprintf("%+v", it)
	if it.Type != ItemMessage && it.Type != ItemFunctionCall && it.Type != ItemReasoning && it.Type != ItemCustomToolCall {
		s += " raw=" + string(raw)
	}
	return s
}
