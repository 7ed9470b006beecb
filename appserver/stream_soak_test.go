package appserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/config"
	"github.com/codexd/codexd/core"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/modelclient"
)

// These run the whole path a model's stream takes — HTTP and SSE
// (modelclient), the core's turn, the app-server's thread state and its
// projection — against a model that sends what no sane model sends.

// streamServer is an app-server over a real core whose one provider is
// reached through rt; neither retries (each bad stream fails its turn).
func streamServer(t testing.TB, rt http.RoundTripper) *Server {
	t.Helper()
	prov := core.ProviderFromConfig(config.Provider{ID: "hostile", Name: "hostile", BaseURL: "http://model.invalid/v1",
		WireAPI: config.WireResponses, StreamIdleTimeout: 5 * time.Second},
		modelclient.Options{HTTPClient: &http.Client{Transport: rt}, Getenv: func(string) string { return "" }})
	c, err := core.New(core.Config{
		Settings: agent.Settings{Model: "mock-model", ModelProvider: "hostile", Cwd: "/",
			Approval: agent.ApprovalNever, Sandbox: agent.SandboxPolicy{Mode: agent.SandboxReadOnly}},
		Providers: map[string]*core.Provider{"hostile": prov},
		ExecDialer: func(ctx context.Context) (*execclient.Client, error) {
			return nil, errors.New("no exec-server in this test")
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Core: c, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Close()
		c.Close()
	})
	return srv
}

// sseEvent frames one event.
func sseEvent(typ string, v map[string]any) []byte {
	v["type"] = typ
	// A model may send bytes that are not UTF-8: so does this one.
	b, err := json.Marshal(v, jsontext.AllowInvalidUTF8(true))
	if err != nil {
		panic(err)
	}
	return append(append([]byte("event: "+typ+"\ndata: "), b...), '\n', '\n')
}

func completedSSE() []byte {
	return sseEvent("response.completed", map[string]any{"response": map[string]any{"id": "resp", "usage": map[string]any{
		"input_tokens": 10, "output_tokens": 2, "total_tokens": 12}}})
}

func messageSSE(id string, deltas []string, final string) []byte {
	var b bytes.Buffer
	b.Write(sseEvent("response.created", map[string]any{"response": map[string]any{"id": "resp"}}))
	b.Write(sseEvent("response.output_item.added", map[string]any{"output_index": 0,
		"item": map[string]any{"type": "message", "id": id, "role": "assistant", "content": []any{}}}))
	for _, d := range deltas {
		b.Write(sseEvent("response.output_text.delta", map[string]any{"item_id": id, "output_index": 0, "content_index": 0, "delta": d}))
	}
	b.Write(sseEvent("response.output_item.done", map[string]any{"output_index": 0,
		"item": map[string]any{"type": "message", "id": id, "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": final}}}}))
	return b.Bytes()
}

// hostile makes the bodies of a hostile model: each request gets one
// scenario, chosen at random.
type hostile struct {
	mu        sync.Mutex
	rng       *rand.Rand
	oversized atomic.Int32 // 17 MiB events sent, at most 3
	big       []byte       // one event over modelclient.MaxEventBytes
	requests  atomic.Int64
}

func newHostile(seed uint64) *hostile {
	h := &hostile{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	h.big = sseEvent("response.output_text.delta", map[string]any{"item_id": "msg_big",
		"delta": strings.Repeat("o", modelclient.MaxEventBytes+1024)})
	return h
}

func (h *hostile) intn(n int) int { h.mu.Lock(); defer h.mu.Unlock(); return h.rng.IntN(n) }

func (h *hostile) text(n int) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	pats := []string{"a", "é", "\xff", "日本", "\xe6\x97", "\n", "\"", "\\"}
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(pats[h.rng.IntN(len(pats))])
	}
	return b.String()
}

// body returns the chunks of one answer; cut means the connection closes
// after them, mid-stream.
func (h *hostile) body() (status int, chunks [][]byte) {
	h.requests.Add(1)
	id := fmt.Sprintf("msg_%d", h.intn(1000))
	switch h.intn(12) {
	case 0: // a sane answer, in deltas of odd text
		var ds []string
		for range 1 + h.intn(40) {
			ds = append(ds, h.text(1+h.intn(200)))
		}
		return 200, [][]byte{messageSSE(id, ds, h.text(50)), completedSSE()}
	case 1: // reasoning with indices no model sends
		var b bytes.Buffer
		b.Write(sseEvent("response.output_item.added", map[string]any{"item": map[string]any{"type": "reasoning", "id": "rs_1", "summary": []any{}}}))
		for range 20 {
			idx := []int64{-1, 0, 1, 3, 1023, 1024, 30_000_000, 1 << 40, -1 << 40}[h.intn(9)]
			typ := []string{"response.reasoning_summary_part.added", "response.reasoning_summary_text.delta", "response.reasoning_text.delta"}[h.intn(3)]
			b.Write(sseEvent(typ, map[string]any{"item_id": "rs_1", "summary_index": idx, "content_index": idx, "delta": h.text(20)}))
		}
		b.Write(sseEvent("response.output_item.done", map[string]any{"item": map[string]any{"type": "reasoning", "id": "rs_1",
			"summary": []any{map[string]any{"type": "summary_text", "text": "s"}}}}))
		return 200, [][]byte{b.Bytes(), messageSSE(id, []string{"x"}, "done"), completedSSE()}
	case 2: // out of order: deltas before their item, done twice, deltas after done, events after completed
		var b bytes.Buffer
		b.Write(sseEvent("response.output_text.delta", map[string]any{"item_id": id, "delta": "early"}))
		b.Write(sseEvent("response.output_item.done", map[string]any{"item": map[string]any{"type": "message", "id": id, "role": "assistant"}}))
		b.Write(messageSSE(id, []string{"a", "b"}, ""))
		b.Write(sseEvent("response.output_text.delta", map[string]any{"item_id": id, "delta": "late"}))
		b.Write(sseEvent("response.output_item.added", map[string]any{"item": map[string]any{"type": "message", "id": "msg_orphan", "role": "assistant"}}))
		b.Write(completedSSE())
		b.Write(messageSSE("msg_after", []string{"after"}, "after"))
		return 200, [][]byte{b.Bytes()}
	case 3: // truncated anywhere, even mid-line
		full := append(messageSSE(id, []string{h.text(100), h.text(100)}, "t"), completedSSE()...)
		return 200, [][]byte{full[:h.intn(len(full))]}
	case 4: // one event over the bound (a few times only: it is 17 MiB)
		if h.oversized.Add(1) <= 3 {
			return 200, [][]byte{h.big, completedSSE()}
		}
		fallthrough
	case 5: // one event of many data lines, under the bound, that does not parse
		var b bytes.Buffer
		for range 200 {
			b.WriteString("data: " + strings.Repeat("#", 1024) + "\n")
		}
		b.WriteString("\n")
		return 200, [][]byte{b.Bytes(), messageSSE(id, []string{"y"}, "y"), completedSSE()}
	case 6: // bytes that are not SSE at all
		junk := []byte(h.text(4096))
		return 200, [][]byte{junk, []byte("\n\ndata: {\"type\":\n\n"), completedSSE()}
	case 7: // big deltas: more than a view keeps
		d := strings.Repeat("D", 1536<<10)
		return 200, [][]byte{messageSSE(id, []string{d, d, d, d}, "short"), completedSSE()}
	case 8: // failures the stream reports
		ev := [][]byte{
			sseEvent("response.failed", map[string]any{"response": map[string]any{"error": map[string]any{"code": "server_error", "message": h.text(30)}}}),
			sseEvent("error", map[string]any{"code": 42, "message": h.text(30)}),
			sseEvent("response.incomplete", map[string]any{"response": map[string]any{"incomplete_details": map[string]any{"reason": "max_output_tokens"}}}),
		}[h.intn(3)]
		return 200, [][]byte{ev}
	case 9: // more items than a response may have
		var b bytes.Buffer
		for i := range 1100 {
			b.Write(sseEvent("response.output_item.added", map[string]any{"item": map[string]any{"type": "message", "id": fmt.Sprintf("m%d", i), "role": "assistant"}}))
		}
		return 200, [][]byte{b.Bytes(), completedSSE()}
	case 10: // a tool call with garbage arguments: the turn goes on with another request
		call := sseEvent("response.output_item.done", map[string]any{"item": map[string]any{"type": "function_call", "id": "fc_1",
			"call_id": fmt.Sprintf("call_%d", h.intn(100)), "name": []string{"exec_command", "nope", "update_plan", "apply_patch"}[h.intn(4)],
			"arguments": h.text(40)}})
		return 200, [][]byte{call, completedSSE()}
	}
	return []int{500, 429, 400, 200}[h.intn(4)], [][]byte{[]byte(h.text(100))}
}

func (h *hostile) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	status, chunks := h.body()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(status)
	for _, c := range chunks {
		if _, err := w.Write(c); err != nil {
			return
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
}

// TestHostileModelSoak: for a few seconds (and at most 200 turns), a
// model server on loopback answers every request with a random hostile
// stream. Every turn ends, the server keeps serving, every message it
// sends encodes, and the live heap afterwards is within a bound.
func TestHostileModelSoak(t *testing.T) {
	h := newHostile(uint64(time.Now().UnixNano()))
	model := httptest.NewServer(h)
	defer model.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	srv := streamServer(t, redirectTo(model.URL, tr))
	l := newLeanClient(t, srv)
	l.encode.Store(true)

	th := l.startThread()
	l.turnEnded(l.startTurn(th)) // warm up
	before := heapAfterGC()
	deadline := time.Now().Add(3 * time.Second)
	turns := 0
	for ; turns < 200 && time.Now().Before(deadline); turns++ {
		if turns%10 == 9 {
			th = l.startThread() // a thread's history is sent with each request: keep it short
		}
		l.turnEnded(l.startTurn(th))
		if turns%7 == 0 {
			l.read(th)
		}
	}
	if _, err := Call(l.ctx(), l.c, appproto.ModelList, appproto.ModelListParams{}); err != nil {
		t.Fatalf("the server no longer answers: %v", err)
	}
	if errs := l.encodeErrs.Load(); errs > 0 {
		t.Fatalf("%d messages did not encode; the first: %v", errs, l.firstEncodeErr.Load())
	}
	grown := int64(heapAfterGC()) - int64(before)
	t.Logf("%d turns, %d model requests, %d messages; live heap grew by %d KiB", turns, h.requests.Load(), l.seen.Load(), grown>>10)
	if grown > 48<<20 {
		t.Fatalf("the live heap grew by %d MiB over %d hostile turns", grown>>20, turns)
	}
}

// redirectTo sends every request to base (the test's model server), over
// tr.
func redirectTo(base string, tr http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.URL.Scheme, r.URL.Host = "http", strings.TrimPrefix(base, "http://")
		return tr.RoundTrip(r)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// fuzzModel answers a turn's first request with the fuzzer's body, and
// any later one (after a tool call) with a plain answer.
type fuzzModel struct {
	mu   sync.Mutex
	body []byte
}

func (m *fuzzModel) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	m.mu.Lock()
	body := m.body
	m.body = nil
	m.mu.Unlock()
	if body == nil {
		body = append(messageSSE("msg_plain", []string{"ok"}, "ok"), completedSSE()...)
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(body)), Request: r}, nil
}

// FuzzModelStream runs one turn whose model answer is the fuzzer's bytes,
// through modelclient, the real core and the app-server, then reads the
// thread: the turn ends, the server answers, every message encodes, and
// what thread/read returns is bounded by what came in.
func FuzzModelStream(f *testing.F) {
	f.Add(append(messageSSE("msg_1", []string{"hel", "lo"}, "hello"), completedSSE()...))
	m := &fuzzModel{}
	srv := streamServer(f, m)
	l := newLeanClient(f, srv)
	l.encode.Store(true)
	f.Fuzz(func(t *testing.T, body []byte) {
		l.t = t
		m.mu.Lock()
		m.body = body
		m.mu.Unlock()
		res, err := Call(l.ctx(), l.c, appproto.ThreadStart, appproto.ThreadStartParams{Ephemeral: ptr(true)})
		if err != nil {
			t.Fatal(err)
		}
		th := res.Thread.ID
		defer func() {
			srv.mu.Lock()
			loaded := srv.threads[th]
			srv.mu.Unlock()
			if loaded != nil {
				loaded.shutdown()
			}
		}()
		l.turnEnded(l.startTurn(th))
		got, err := json.Marshal(l.read(th))
		if err != nil {
			t.Fatalf("thread/read does not encode: %v", err)
		}
		if len(got) > 2*len(body)+64<<10 {
			t.Fatalf("thread/read is %d bytes for a %d-byte stream", len(got), len(body))
		}
		if errs := l.encodeErrs.Swap(0); errs > 0 {
			t.Fatalf("%d messages did not encode; the first: %v", errs, l.firstEncodeErr.Load())
		}
	})
}
