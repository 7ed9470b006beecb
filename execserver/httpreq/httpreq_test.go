package httpreq

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

	"go.uber.org/goleak"

	"github.com/codexd/codexd/execproto"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var ctx = context.Background()

// server is an httptest server on loopback. /wait blocks until the request
// is cancelled or the test ends; nothing here sleeps.
func server(t *testing.T) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Add("X-Multi", "a")
		w.Header().Add("X-Multi", "b")
		w.Header().Set("X-Bad", "\xff\xfe")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "%s %s x-a=%v host=%s body=%s", r.Method, r.URL.Path, r.Header.Values("X-A"), r.Host, body)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/echo", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("z", 100)))
	})
	mux.HandleFunc("/chunks", func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 3; i++ {
			fmt.Fprintf(w, "chunk%d;", i)
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/wait", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	mux.HandleFunc("/headers-then-wait", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("start;"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		close(release)
		srv.Close()
	})
	return srv
}

func client(t *testing.T, cfg Config) *Client {
	t.Helper()
	c := New(cfg)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func wantCode(t *testing.T, err error, code int64, msgPart string) {
	t.Helper()
	var he *Error
	if !errors.As(err, &he) {
		t.Fatalf("want *Error %d %q, got %T %v", code, msgPart, err, err)
	}
	if he.Code != code || !strings.Contains(he.Message, msgPart) {
		t.Fatalf("want %d containing %q, got %d %q", code, msgPart, he.Code, he.Message)
	}
}

func ms(n uint64) *uint64 { return &n }

func TestBufferedRequest(t *testing.T) {
	srv := server(t)
	c := client(t, Config{})
	res, stream, err := c.Do(ctx, execproto.HTTPRequestParams{
		Method:    "POST",
		URL:       srv.URL + "/echo",
		RequestID: "r1",
		Headers: []execproto.HTTPHeader{
			{Name: "X-A", Value: "1"}, {Name: "x-a", Value: "2"}, {Name: "Host", Value: "example.test"},
		},
		Body: []byte("hi"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if stream != nil {
		t.Fatal("stream for a buffered request")
	}
	if res.Status != 201 {
		t.Errorf("status %d", res.Status)
	}
	if got := string(res.Body); got != "POST /echo x-a=[1 2] host=example.test body=hi" {
		t.Errorf("body %q", got)
	}
	var multi []string
	for _, h := range res.Headers {
		if h.Name != strings.ToLower(h.Name) {
			t.Errorf("header name %q not lower-case", h.Name)
		}
		if h.Name == "x-multi" {
			multi = append(multi, h.Value)
		}
		if h.Name == "x-bad" {
			t.Errorf("non-UTF-8 header kept: %q", h.Value)
		}
	}
	if strings.Join(multi, ",") != "a,b" {
		t.Errorf("x-multi = %v", multi)
	}
}

func TestEmptyBodyIsNotNull(t *testing.T) {
	srv := server(t)
	c := client(t, Config{})
	res, _, err := c.Do(ctx, execproto.HTTPRequestParams{Method: "GET", URL: srv.URL + "/nothing-here", RequestID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 404 || res.Body == nil {
		t.Errorf("status %d body %v", res.Status, res.Body)
	}
}

func TestInvalidRequests(t *testing.T) {
	c := client(t, Config{})
	cases := []struct {
		p   execproto.HTTPRequestParams
		msg string
	}{
		{execproto.HTTPRequestParams{Method: "G ET", URL: "http://127.0.0.1:1/"}, "http/request method is invalid: invalid HTTP method"},
		{execproto.HTTPRequestParams{Method: "", URL: "http://127.0.0.1:1/"}, "http/request method is invalid"},
		{execproto.HTTPRequestParams{Method: "GET", URL: "not a url"}, "http/request url is invalid: relative URL without a base"},
		{execproto.HTTPRequestParams{Method: "GET", URL: "ftp://127.0.0.1/"}, "http/request only supports http and https URLs, got ftp"},
		{execproto.HTTPRequestParams{Method: "GET", URL: "http:///path"}, "http/request url is invalid: empty host"},
		{execproto.HTTPRequestParams{Method: "GET", URL: "http://127.0.0.1:1/", Headers: []execproto.HTTPHeader{{Name: "Bad Name", Value: "1"}}},
			"http/request header name is invalid: invalid HTTP header name"},
		{execproto.HTTPRequestParams{Method: "GET", URL: "http://127.0.0.1:1/", Headers: []execproto.HTTPHeader{{Name: "X", Value: "a\nb"}}},
			"http/request header value is invalid for X: failed to parse header value"},
		{execproto.HTTPRequestParams{Method: "GET", URL: "http://127.0.0.1:1/", RedirectPolicy: "none"},
			"unknown variant `none`, expected `follow` or `stop`"},
	}
	for _, tc := range cases {
		_, _, err := c.Do(ctx, tc.p)
		wantCode(t, err, CodeInvalidParams, tc.msg)
	}
}

func TestConnectionFailure(t *testing.T) {
	srv := server(t)
	url := srv.URL + "/echo"
	srv.Close() // nothing listens there any more
	c := client(t, Config{})
	_, _, err := c.Do(ctx, execproto.HTTPRequestParams{Method: "GET", URL: url, RequestID: "r"})
	wantCode(t, err, CodeInternalError, "http/request failed: error sending request for url ("+url+")")
}

func TestRedirects(t *testing.T) {
	srv := server(t)
	c := client(t, Config{})
	res, _, err := c.Do(ctx, execproto.HTTPRequestParams{Method: "GET", URL: srv.URL + "/redirect", RequestID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 201 || !strings.HasPrefix(string(res.Body), "GET /echo") {
		t.Errorf("followed: %d %q", res.Status, res.Body)
	}
	res, _, err = c.Do(ctx, execproto.HTTPRequestParams{Method: "GET", URL: srv.URL + "/redirect", RequestID: "r", RedirectPolicy: execproto.HTTPRedirectStop})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 302 {
		t.Errorf("stopped: %d", res.Status)
	}
	_, _, err = c.Do(ctx, execproto.HTTPRequestParams{Method: "GET", URL: srv.URL + "/loop", RequestID: "r"})
	wantCode(t, err, CodeInternalError, "too many redirects")
}

func TestTimeouts(t *testing.T) {
	srv := server(t)
	c := client(t, Config{})
	// The client's own deadline, while waiting for the headers, reads as
	// Codex's (reqwest's) send error; 0 fails before anything is sent.
	_, _, err := c.Do(ctx, execproto.HTTPRequestParams{Method: "GET", URL: srv.URL + "/wait", RequestID: "r", TimeoutMs: ms(50)})
	wantCode(t, err, CodeInternalError, "http/request failed: error sending request for url ("+srv.URL+"/wait)")
	_, _, err = c.Do(ctx, execproto.HTTPRequestParams{Method: "GET", URL: srv.URL + "/echo", RequestID: "r", TimeoutMs: ms(0)})
	wantCode(t, err, CodeInternalError, "http/request failed: route-aware request timed out")

	// The configured default applies when the request names none, and the
	// cap applies even when it does.
	def := client(t, Config{DefaultTimeout: 50 * time.Millisecond})
	_, _, err = def.Do(ctx, execproto.HTTPRequestParams{Method: "GET", URL: srv.URL + "/wait", RequestID: "r"})
	wantCode(t, err, CodeInternalError, "request timed out")
	capped := client(t, Config{MaxTimeout: 50 * time.Millisecond})
	_, _, err = capped.Do(ctx, execproto.HTTPRequestParams{Method: "GET", URL: srv.URL + "/wait", RequestID: "r", TimeoutMs: ms(3_600_000)})
	wantCode(t, err, CodeInternalError, "request timed out")

	// A timeout also bounds the body.
	_, _, err = c.Do(ctx, execproto.HTTPRequestParams{Method: "GET", URL: srv.URL + "/headers-then-wait", RequestID: "r", TimeoutMs: ms(100)})
	wantCode(t, err, CodeInternalError, "failed to read http/request response body: request timed out")
}

func TestBodyLimit(t *testing.T) {
	srv := server(t)
	c := client(t, Config{MaxBodyBytes: 10})
	_, _, err := c.Do(ctx, execproto.HTTPRequestParams{Method: "GET", URL: srv.URL + "/big", RequestID: "r"})
	wantCode(t, err, CodeInternalError, "failed to read http/request response body: response body exceeds the limit of 10 bytes")
	c100 := client(t, Config{MaxBodyBytes: 100})
	res, _, err := c100.Do(ctx, execproto.HTTPRequestParams{Method: "GET", URL: srv.URL + "/big", RequestID: "r"})
	if err != nil || len(res.Body) != 100 {
		t.Fatalf("exactly at the limit: %v %d", err, len(res.Body))
	}
}

func collect(t *testing.T, s *BodyStream) []execproto.HTTPRequestBodyDeltaNotification {
	t.Helper()
	var got []execproto.HTTPRequestBodyDeltaNotification
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx, func(n execproto.HTTPRequestBodyDeltaNotification) error {
			got = append(got, n)
			return nil
		})
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("stream did not finish")
	}
	return got
}

func TestStreamedResponse(t *testing.T) {
	srv := server(t)
	c := client(t, Config{})
	res, stream, err := c.Do(ctx, execproto.HTTPRequestParams{Method: "GET", URL: srv.URL + "/chunks", RequestID: "s1", StreamResponse: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 200 || len(res.Body) != 0 || res.Body == nil || stream == nil {
		t.Fatalf("head: %d %v %v", res.Status, res.Body, stream)
	}
	deltas := collect(t, stream)
	var body strings.Builder
	for i, d := range deltas {
		if d.RequestID != "s1" || d.Seq != uint64(i+1) {
			t.Errorf("delta %d: %+v", i, d)
		}
		if i < len(deltas)-1 && (d.Done || d.Error != nil) {
			t.Errorf("early final delta %d: %+v", i, d)
		}
		body.Write(d.Delta)
	}
	last := deltas[len(deltas)-1]
	if !last.Done || last.Error != nil || len(last.Delta) != 0 {
		t.Errorf("final delta %+v", last)
	}
	if body.String() != "chunk0;chunk1;chunk2;" {
		t.Errorf("streamed body %q", body.String())
	}
}

func TestStreamedResponseOverLimit(t *testing.T) {
	srv := server(t)
	c := client(t, Config{MaxBodyBytes: 10})
	_, stream, err := c.Do(ctx, execproto.HTTPRequestParams{Method: "GET", URL: srv.URL + "/big", RequestID: "s2", StreamResponse: true})
	if err != nil {
		t.Fatal(err)
	}
	deltas := collect(t, stream)
	last := deltas[len(deltas)-1]
	if !last.Done || last.Error == nil || !strings.Contains(*last.Error, "exceeds the limit of 10 bytes") {
		t.Errorf("final delta %+v", last)
	}
	var n int
	for _, d := range deltas {
		n += len(d.Delta)
	}
	if n > 10 {
		t.Errorf("streamed %d bytes past a 10-byte limit", n)
	}
}

func TestStreamStopsWhenEmitFails(t *testing.T) {
	srv := server(t)
	c := client(t, Config{})
	_, stream, err := c.Do(ctx, execproto.HTTPRequestParams{Method: "GET", URL: srv.URL + "/headers-then-wait", RequestID: "s3", StreamResponse: true})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	stream.Run(ctx, func(execproto.HTTPRequestBodyDeltaNotification) error {
		calls++
		return errors.New("connection gone")
	})
	if calls != 1 {
		t.Errorf("emit called %d times after failing", calls)
	}
}

func TestStreamStopsOnCancel(t *testing.T) {
	srv := server(t)
	c := client(t, Config{})
	_, stream, err := c.Do(ctx, execproto.HTTPRequestParams{Method: "GET", URL: srv.URL + "/headers-then-wait", RequestID: "s4", StreamResponse: true})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	first := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		stream.Run(runCtx, func(n execproto.HTTPRequestBodyDeltaNotification) error {
			if n.Seq == 1 {
				close(first)
			}
			return nil
		})
	}()
	select {
	case <-first:
	case <-time.After(5 * time.Second):
		t.Fatal("no first delta")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("stream did not stop on cancel")
	}
}

func TestCloseWithoutRun(t *testing.T) {
	srv := server(t)
	c := client(t, Config{})
	_, stream, err := c.Do(ctx, execproto.HTTPRequestParams{Method: "GET", URL: srv.URL + "/headers-then-wait", RequestID: "s5", StreamResponse: true})
	if err != nil {
		t.Fatal(err)
	}
	stream.Close()
	stream.Close()
}

func TestStreamOutlivesCallContext(t *testing.T) {
	srv := server(t)
	c := client(t, Config{})
	callCtx, cancel := context.WithCancel(ctx)
	_, stream, err := c.Do(callCtx, execproto.HTTPRequestParams{Method: "GET", URL: srv.URL + "/chunks", RequestID: "s6", StreamResponse: true})
	cancel() // the call has been answered
	if err != nil {
		t.Fatal(err)
	}
	deltas := collect(t, stream)
	if last := deltas[len(deltas)-1]; last.Error != nil {
		t.Fatalf("stream broken by the call's context: %s", *last.Error)
	}
}

func TestCallContextCancelsBufferedRequest(t *testing.T) {
	srv := server(t)
	c := client(t, Config{})
	callCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, _, err := c.Do(callCtx, execproto.HTTPRequestParams{Method: "GET", URL: srv.URL + "/wait", RequestID: "r"})
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		wantCode(t, err, CodeInternalError, "http/request failed")
	case <-time.After(5 * time.Second):
		t.Fatal("cancel did not stop the request")
	}
}
