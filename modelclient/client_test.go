package modelclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codexd/codexd/config"
)

const completedSSE = "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\"}}\n\n"

// captured is one request a test server saw.
type captured struct {
	path, query string
	header      http.Header
	body        []byte
}

func capturing(t *testing.T, answer http.HandlerFunc) (string, func() []captured) {
	var mu sync.Mutex
	var got []captured
	url := server(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, captured{r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body})
		mu.Unlock()
		answer(w, r)
	})
	return url, func() []captured {
		mu.Lock()
		defer mu.Unlock()
		return append([]captured(nil), got...)
	}
}

func TestRequestBodyAndHeaders(t *testing.T) {
	url, requests := capturing(t, sse(completedSSE))
	p := provider(url)
	p.EnvKey = "TEST_KEY"
	p.HTTPHeaders = map[string]string{"X-Provider": "p1"}
	p.EnvHTTPHeaders = map[string]string{"OpenAI-Project": "TEST_PROJECT", "OpenAI-Organization": "TEST_ORG_UNSET"}
	p.QueryParams = map[string]string{"api-version": "2025-04-01"}
	env := map[string]string{"TEST_KEY": " sk-test ", "TEST_PROJECT": "proj_1", "OPENAI_ORG_ID": "must-not-leak"}
	c := client(t, p, Options{Getenv: func(k string) string { return env[k] }, UserAgent: "codexd-test/1"})

	req := Request{
		Model: "gpt-test",
		Input: []Item{
			Message("developer", "You are codexd."),
			Message("user", "hi"),
			{Type: ItemReasoning, ID: "rs_1", Summary: []ContentPart{{Type: "summary_text", Text: "thinking"}}, EncryptedContent: "enc"},
			{Type: ItemFunctionCall, ID: "fc_1", Name: "exec_command", Arguments: `{"cmd":"ls"}`, CallID: "call_1"},
			FunctionCallOutput("call_1", "a.txt"),
			{Type: ItemFunctionCallOutput, CallID: "call_2", OutputContent: []ContentPart{{Type: "input_image", ImageURL: "data:image/png;base64,AA=="}}},
			Message("assistant", "Here."),
			{Type: "web_search_call", Raw: json.RawMessage(`{"type":"web_search_call","id":"ws_1","status":"completed"}`)},
		},
		Tools:             []json.RawMessage{json.RawMessage(`{"type":"function","name":"exec_command"}`)},
		ParallelToolCalls: true,
		Reasoning:         &Reasoning{Effort: "high", Summary: "auto"},
		PromptCacheKey:    "thread-1",
		Verbosity:         "low",
		OutputSchema:      json.RawMessage(`{"type":"object"}`),
		ClientMetadata:    map[string]string{"turn": "1"},
		Header:            http.Header{"Session_id": {"s-1"}, "X-Multi": {"a", "b"}},
	}
	s, err := c.Stream(testCtx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if _, end := collect(s); end != io.EOF {
		t.Fatal(end)
	}

	got := requests()
	if len(got) != 1 {
		t.Fatalf("%d requests", len(got))
	}
	r := got[0]
	if r.path != "/v1/responses" || r.query != "api-version=2025-04-01" {
		t.Fatalf("path %q query %q", r.path, r.query)
	}
	h := r.header
	checks := map[string]string{
		"Authorization":       "Bearer sk-test",
		"Accept":              "text/event-stream",
		"Content-Type":        "application/json",
		"User-Agent":          "codexd-test/1",
		"X-Provider":          "p1",
		"Openai-Project":      "proj_1",
		"Openai-Organization": "",
		"Session_id":          "s-1",
	}
	for k, want := range checks {
		if got := h.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	if !reflect.DeepEqual(h.Values("X-Multi"), []string{"a", "b"}) {
		t.Errorf("X-Multi %q", h.Values("X-Multi"))
	}
	for k := range h {
		if strings.HasPrefix(strings.ToLower(k), "x-stainless") {
			t.Errorf("SDK header %s sent", k)
		}
	}

	want, err := os.ReadFile("testdata/request-body.json")
	if err != nil {
		t.Fatal(err)
	}
	var gotJSON, wantJSON any
	if err := json.Unmarshal(r.body, &gotJSON); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &wantJSON); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotJSON, wantJSON) {
		t.Fatalf("body differs from testdata/request-body.json:\n%s", r.body)
	}
}

func TestMinimalBodyDefaults(t *testing.T) {
	body, err := (&Request{Model: "m"}).Body()
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"model":"m","input":[],"tools":[],"tool_choice":"auto","parallel_tool_calls":false,"store":false,"stream":true,"include":[]}`
	if string(body) != want {
		t.Fatalf("body %s\nwant %s", body, want)
	}
}

func TestMissingKey(t *testing.T) {
	url, requests := capturing(t, sse(completedSSE))
	p := provider(url)
	p.EnvKey = "MY_PROVIDER_KEY"
	p.EnvKeyInstructions = "Get one from the admin."
	for _, v := range []string{"", "  "} {
		c := client(t, p, Options{Getenv: func(string) string { return v }})
		_, err := c.Stream(testCtx(t), Request{})
		var mk *MissingKeyError
		if !errors.Is(err, ErrMissingKey) || !errors.As(err, &mk) || mk.Var != "MY_PROVIDER_KEY" ||
			!strings.Contains(err.Error(), "MY_PROVIDER_KEY") || !strings.Contains(err.Error(), "Get one from the admin.") {
			t.Fatalf("value %q: %v", v, err)
		}
	}
	if n := len(requests()); n != 0 {
		t.Fatalf("%d requests sent without a key", n)
	}
	// A literal bearer token needs no variable.
	p.ExperimentalBearerToken = "tok"
	c := client(t, p, Options{})
	s, err := c.Stream(testCtx(t), Request{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if got := requests()[0].header.Get("Authorization"); got != "Bearer tok" {
		t.Fatalf("Authorization %q", got)
	}
}

// TestRetries: 429 and 5xx are retried with the server's delay when it
// gives one (seconds, milliseconds, HTTP date) and backoff otherwise; each
// retry is announced before the wait.
func TestRetries(t *testing.T) {
	var mu sync.Mutex
	n := 0
	answers := []func(w http.ResponseWriter){
		func(w http.ResponseWriter) { w.Header().Set("Retry-After", "2"); w.WriteHeader(429) },
		func(w http.ResponseWriter) { w.Header().Set("Retry-After-Ms", "1500"); w.WriteHeader(503) },
		func(w http.ResponseWriter) { w.WriteHeader(500) },
		func(w http.ResponseWriter) { w.WriteHeader(502) },
	}
	url := server(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		i := n
		n++
		mu.Unlock()
		if i < len(answers) {
			answers[i](w)
			return
		}
		sse(completedSSE)(w, r)
	})
	p := provider(url)
	p.RequestMaxRetries = 4
	var log []string
	c := client(t, p, Options{
		OnRetry: func(r Retry) {
			var ae *APIError
			errors.As(r.Err, &ae)
			log = append(log, fmt.Sprintf("retry %d/%d after %d in %v", r.Attempt, r.Max, ae.StatusCode, r.Delay))
		},
		Sleep: func(ctx context.Context, d time.Duration) error {
			log = append(log, "sleep "+d.String())
			return nil
		},
		Jitter: func() float64 { return 1.05 },
	})
	s, err := c.Stream(testCtx(t), Request{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	want := []string{
		"retry 1/4 after 429 in 2s", "sleep 2s",
		"retry 2/4 after 503 in 1.5s", "sleep 1.5s",
		"retry 3/4 after 500 in 840ms", "sleep 840ms", // 200ms·2²·1.05
		"retry 4/4 after 502 in 1.68s", "sleep 1.68s",
	}
	if !reflect.DeepEqual(log, want) {
		t.Fatalf("log\n%q\nwant\n%q", log, want)
	}
}

func TestRetriesExhausted(t *testing.T) {
	url, requests := capturing(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(500)
		io.WriteString(w, `{"error":{"message":"boom","type":"server_error","code":"server_error","param":null}}`)
	})
	p := provider(url)
	p.RequestMaxRetries = 2
	retries := 0
	c := client(t, p, Options{OnRetry: func(Retry) { retries++ }})
	_, err := c.Stream(testCtx(t), Request{})
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 500 || ae.Message != "boom" || ae.Code != "server_error" ||
		ae.Type != "server_error" || ae.Attempts != 3 || retries != 2 || len(requests()) != 3 {
		t.Fatalf("err %v (%+v), retries %d, requests %d", err, ae, retries, len(requests()))
	}
	if !strings.Contains(err.Error(), "HTTP 500") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("message %q", err)
	}
}

func TestNotRetried(t *testing.T) {
	cases := []struct {
		name   string
		answer http.HandlerFunc
		check  func(*APIError) bool
	}{
		{"400 json", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(400)
			io.WriteString(w, `{"error":{"message":"Unsupported parameter: 'x'.","type":"invalid_request_error","param":"x","code":"unsupported_parameter"}}`)
		}, func(e *APIError) bool {
			return e.StatusCode == 400 && e.Param == "x" && e.Code == "unsupported_parameter" && e.Message == "Unsupported parameter: 'x'."
		}},
		{"401 text", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(401)
			io.WriteString(w, "  unauthorized\n")
		}, func(e *APIError) bool { return e.StatusCode == 401 && e.Message == "unauthorized" }},
		{"429 waits too long", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(429)
		}, func(e *APIError) bool { return e.StatusCode == 429 && e.RetryAfter == time.Hour }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url, requests := capturing(t, c.answer)
			p := provider(url)
			p.RequestMaxRetries = 5
			cl := client(t, p, Options{OnRetry: func(r Retry) { t.Errorf("retried: %+v", r) }})
			_, err := cl.Stream(testCtx(t), Request{})
			var ae *APIError
			if !errors.As(err, &ae) || !c.check(ae) || len(requests()) != 1 {
				t.Fatalf("err %v %+v, %d requests", err, ae, len(requests()))
			}
		})
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(7 * time.Second).Format(http.TimeFormat)}}, 7 * time.Second},
		{http.Header{"Retry-After": {now.Add(-time.Second).Format(http.TimeFormat)}}, 0},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {"-1"}}, 0},
		{http.Header{}, 0},
	}
	for _, c := range cases {
		if got := retryAfter(c.h, now); got != c.want {
			t.Errorf("%v: %v, want %v", c.h, got, c.want)
		}
	}
	if got := parseTryAgain("Please try again in 20ms."); got != 20*time.Millisecond {
		t.Errorf("ms: %v", got)
	}
	if got := parseTryAgain("Please try again in 2 seconds"); got != 2*time.Second {
		t.Errorf("seconds: %v", got)
	}
}

// TestTransportErrorsRetried: a refused connection is retried, and ends as
// the transport's error.
func TestTransportErrorsRetried(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := provider("http://" + addr)
	p.RequestMaxRetries = 2
	var delays []time.Duration
	c := client(t, p, Options{OnRetry: func(r Retry) { delays = append(delays, r.Delay) }})
	_, err = c.Stream(testCtx(t), Request{})
	var ae *APIError
	if err == nil || errors.As(err, &ae) || !reflect.DeepEqual(delays, []time.Duration{200 * time.Millisecond, 400 * time.Millisecond}) {
		t.Fatalf("err %v, delays %v", err, delays)
	}
}

// TestCancelDuringRetryWait: the caller's cancel ends the wait.
func TestCancelDuringRetryWait(t *testing.T) {
	url := server(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Retry-After", "100")
		w.WriteHeader(429)
	})
	p := provider(url)
	p.RequestMaxRetries = 3
	ctx, cancel := context.WithCancel(testCtx(t))
	c := client(t, p, Options{OnRetry: func(Retry) { cancel() }, Sleep: sleep})
	_, err := c.Stream(ctx, Request{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
}

func TestNewRefuses(t *testing.T) {
	good := provider("http://127.0.0.1:1")
	cases := map[string]func(p *config.Provider){
		"mock without URL": func(p *config.Provider) { p.Builtin, p.BaseURL = config.BuiltinMock, "" },
		"no URL":           func(p *config.Provider) { p.BaseURL = "" },
		"bad scheme":       func(p *config.Provider) { p.BaseURL = "ftp://x/v1" },
		"no host":          func(p *config.Provider) { p.BaseURL = "http:///v1" },
		"wire api":         func(p *config.Provider) { p.WireAPI = "chat" },
	}
	for name, mod := range cases {
		p := good
		mod(&p)
		if _, err := New(p, Options{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := New(good, Options{}); err != nil {
		t.Fatal(err)
	}
}

// TestItemsRoundTrip: output items come back as input in Codex's shapes;
// unknown items go back verbatim.
func TestItemsRoundTrip(t *testing.T) {
	in := `[
	 {"id":"msg_1","type":"message","status":"completed","role":"assistant","phase":"final_answer","content":[{"type":"output_text","text":"Hi","annotations":[]}]},
	 {"id":"fc_1","type":"function_call","status":"completed","arguments":"{}","call_id":"c1","name":"exec_command"},
	 {"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"E"},
	 {"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"out"}]},
	 {"type":"custom_tool_call","id":"ctc","status":"completed","call_id":"c2","name":"apply_patch","input":"P"},
	 {"type":"custom_tool_call_output","call_id":"c2","output":"ok"},
	 {"type":"local_shell_call","id":"ls_1","call_id":"c3","action":{"type":"exec","command":["ls"]}}
	]`
	var items []Item
	if err := json.Unmarshal([]byte(in), &items); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(items)
	if err != nil {
		t.Fatal(err)
	}
	const want = `[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi"}],"phase":"final_answer","status":"completed","id":"msg_1"},` +
		`{"type":"function_call","status":"completed","id":"fc_1","name":"exec_command","arguments":"{}","call_id":"c1"},` +
		`{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"E"},` +
		`{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"out"}]},` +
		`{"type":"custom_tool_call","status":"completed","id":"ctc","call_id":"c2","name":"apply_patch","input":"P"},` +
		`{"type":"custom_tool_call_output","call_id":"c2","output":"ok"},` +
		`{"type":"local_shell_call","id":"ls_1","call_id":"c3","action":{"type":"exec","command":["ls"]}}]`
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}
