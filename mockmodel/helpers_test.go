package mockmodel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const waitFor = 20 * time.Second

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	t.Cleanup(cancel)
	return ctx
}

// start serves a mock with script sc (nil: none) and returns it and its
// base URL (".../v1"), closing both at the end of the test.
func start(t *testing.T, sc *Script) (*Server, string) {
	t.Helper()
	s := New(Options{Script: sc})
	url, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, url
}

func mustScript(t *testing.T, js string) *Script {
	t.Helper()
	sc, err := ParseScript([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// sseEvent is one parsed event of a response.
type sseEvent struct {
	name string
	data map[string]any
}

// reply is a response as a test reads it.
type reply struct {
	status int
	header http.Header
	body   string
	events []sseEvent
	err    error // how reading the body ended (nil: cleanly)
}

var httpClient = &http.Client{Transport: &http.Transport{}}

func post(t *testing.T, url, body string) reply {
	t.Helper()
	return postCtx(t, testCtx(t), url, body)
}

func postCtx(t *testing.T, ctx context.Context, url, body string) reply {
	t.Helper()
	t.Cleanup(httpClient.CloseIdleConnections)
	req, err := http.NewRequestWithContext(ctx, "POST", url+"/responses", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	r := reply{status: res.StatusCode, header: res.Header}
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(res.Body)
		r.body, r.err = string(b), err
		return r
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			var m map[string]any
			if err := json.Unmarshal([]byte(line[len("data: "):]), &m); err != nil {
				t.Fatalf("data of %s is not JSON: %v", name, err)
			}
			r.events = append(r.events, sseEvent{name, m})
		case line == "":
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	r.err = sc.Err()
	return r
}

func (r reply) names() []string {
	var n []string
	for _, e := range r.events {
		n = append(n, e.name)
	}
	return n
}

// text joins the output_text deltas.
func (r reply) text() string {
	var b strings.Builder
	for _, e := range r.events {
		if e.name == "response.output_text.delta" {
			b.WriteString(e.data["delta"].(string))
		}
	}
	return b.String()
}

// items returns the output_item.done items.
func (r reply) items() []map[string]any {
	var out []map[string]any
	for _, e := range r.events {
		if e.name == "response.output_item.done" {
			out = append(out, e.data["item"].(map[string]any))
		}
	}
	return out
}

// call returns the single function call of r and its decoded arguments.
func (r reply) call(t *testing.T) (name string, args map[string]any, callID string) {
	t.Helper()
	items := r.items()
	if len(items) != 1 || items[0]["type"] != "function_call" {
		t.Fatalf("want one function call, got %v", items)
	}
	if err := json.Unmarshal([]byte(items[0]["arguments"].(string)), &args); err != nil {
		t.Fatal(err)
	}
	return items[0]["name"].(string), args, items[0]["call_id"].(string)
}

// body builds a request body.
func body(model string, tools []string, input ...any) string {
	var ts []map[string]any
	for _, n := range tools {
		ts = append(ts, map[string]any{"type": "function", "name": n})
	}
	b, _ := json.Marshal(map[string]any{"model": model, "input": input, "tools": ts, "stream": true})
	return string(b)
}

func user(text string) map[string]any {
	return map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": text}}}
}

func assistant(text string) map[string]any {
	return map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": text}}}
}

func fcall(callID, name, args string) map[string]any {
	return map[string]any{"type": "function_call", "call_id": callID, "name": name, "arguments": args}
}

func fout(callID, output string) map[string]any {
	return map[string]any{"type": "function_call_output", "call_id": callID, "output": output}
}

// lineWriter sends each complete line written to it on a channel.
type lineWriter struct {
	mu   sync.Mutex
	buf  []byte
	line chan string
}

func newPipe() (<-chan string, io.Writer) {
	w := &lineWriter{line: make(chan string, 16)}
	return w.line, w
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.line <- string(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
