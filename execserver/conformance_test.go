package execserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// The conformance tests replay sessions recorded from the real Codex 0.169
// exec-server (testdata/codex-0.169, see its README) against codexd, over a
// WebSocket as in the recording, and compare every message the server sends.
//
// Placeholders ("<sessionId>", ...) match any value, and a placeholder seen
// twice must match the same value. Where codexd deliberately or unavoidably
// differs, the comparison is narrowed, each case said below:
//   - messages of serde's decoding errors ("invalid type: ...", "invalid
//     number", ...) and of parse errors after their prefix are Go's, not
//     Rust's: only the code and id are compared;
//   - capability flags report what codexd implements, not what Codex does.

type step struct {
	Dir  string          `json:"dir"`
	Conn string          `json:"conn"`
	Msg  json.RawMessage `json:"msg"`
	Raw  *string         `json:"raw"`
}

func loadSteps(t *testing.T, name string) []step {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "codex-0.169", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var steps []step
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var s step
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		steps = append(steps, s)
	}
	return steps
}

func newTestServer(t *testing.T, cfg Config, setup ...func(*Server)) (*Server, string) {
	t.Helper()
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range setup {
		f(srv)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		hs.Close()
	})
	return srv, "ws" + strings.TrimPrefix(hs.URL, "http")
}

type wsClient struct {
	t *testing.T
	c *websocket.Conn
}

func dialWS(t *testing.T, url string) *wsClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(64 << 20)
	t.Cleanup(func() { c.CloseNow() })
	return &wsClient{t: t, c: c}
}

func (w *wsClient) send(b []byte) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.c.Write(ctx, websocket.MessageText, b); err != nil {
		w.t.Fatalf("send %s: %v", b, err)
	}
}

// recv returns the next message, or nil when the connection ended.
func (w *wsClient) recv() []byte {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, b, err := w.c.Read(ctx)
	if err != nil {
		if ctx.Err() != nil {
			w.t.Fatal("no message within 10s")
		}
		return nil
	}
	return b
}

var lenientPrefixes = []string{"invalid type:", "invalid number", "invalid length", "Invalid symbol", "data did not match", "duplicate JSON object key", "EOF while", "trailing characters", "expected a JSON-RPC object", "missing field `error`", "missing field `id`"}

type matcher struct {
	bound map[string]any
}

var placeholder = regexp.MustCompile(`^<[A-Za-z0-9]+>$`)

// match compares want (recorded) with got (ours) at path p.
func (m *matcher) match(p string, want, got any) error {
	if s, ok := want.(string); ok && placeholder.MatchString(s) {
		if prev, seen := m.bound[s]; seen && !reflect.DeepEqual(prev, got) {
			return fmt.Errorf("%s: %s was %v before, now %v", p, s, prev, got)
		}
		m.bound[s] = got
		return nil
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want object, got %v", p, got)
		}
		if strings.HasSuffix(p, "/capabilities") {
			// What codexd implements, not what Codex does.
			return sameKeys(p, w, g)
		}
		if err := sameKeys(p, w, g); err != nil {
			return err
		}
		for k := range w {
			if p == "/error" && k == "message" {
				if err := m.matchMessage(w[k].(string), g[k]); err != nil {
					return err
				}
				continue
			}
			if err := m.match(p+"/"+k, w[k], g[k]); err != nil {
				return err
			}
		}
		return nil
	case []any:
		if strings.HasSuffix(p, "/prependPathDirs") {
			// Codex prepends its own helper directory; codexd has none.
			if _, ok := got.([]any); !ok {
				return fmt.Errorf("%s: want an array, got %v", p, got)
			}
			return nil
		}
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%s: want %v, got %v", p, want, got)
		}
		for i := range w {
			if err := m.match(fmt.Sprintf("%s/%d", p, i), w[i], g[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if !reflect.DeepEqual(want, got) {
		return fmt.Errorf("%s: want %v, got %v", p, want, got)
	}
	return nil
}

func sameKeys(p string, w, g map[string]any) error {
	for k := range w {
		if _, ok := g[k]; !ok {
			return fmt.Errorf("%s: missing member %q", p, k)
		}
	}
	for k := range g {
		if _, ok := w[k]; !ok {
			return fmt.Errorf("%s: extra member %q", p, k)
		}
	}
	return nil
}

func (m *matcher) matchMessage(want string, got any) error {
	g, ok := got.(string)
	if !ok {
		return fmt.Errorf("error message is %v", got)
	}
	// Parse errors: the prefix up to the peer is Codex's; the reason is ours.
	if strings.HasPrefix(want, "failed to parse websocket JSON-RPC message from exec-server websocket <peer>: ") {
		if !regexp.MustCompile(`^failed to parse websocket JSON-RPC message from exec-server websocket [0-9.:\[\]]+: .+`).MatchString(g) {
			return fmt.Errorf("parse error message %q", g)
		}
		return nil
	}
	for _, pre := range lenientPrefixes {
		if strings.HasPrefix(want, pre) {
			return nil
		}
	}
	// Placeholders inside messages ("session <sessionId> is ...").
	re := regexp.QuoteMeta(want)
	re = regexp.MustCompile(`<[A-Za-z0-9]+>`).ReplaceAllString(re, `(.+)`)
	sub := regexp.MustCompile("^" + re + "$").FindStringSubmatch(g)
	if sub == nil {
		return fmt.Errorf("error message: want %q, got %q", want, g)
	}
	names := regexp.MustCompile(`<[A-Za-z0-9]+>`).FindAllString(want, -1)
	for i, n := range names {
		if prev, seen := m.bound[n]; seen && prev != sub[i+1] {
			return fmt.Errorf("error message: %s was %v, now %s", n, prev, sub[i+1])
		}
		m.bound[n] = sub[i+1]
	}
	return nil
}

// substitute replaces bound placeholders in a message we are about to send.
func (m *matcher) substitute(b []byte) []byte {
	for k, v := range m.bound {
		if s, ok := v.(string); ok {
			b = bytes.ReplaceAll(b, []byte(`"`+k+`"`), []byte(`"`+s+`"`))
		}
	}
	return b
}

func replay(t *testing.T, name string) {
	detached := make(chan string, 4)
	srv, url := newTestServer(t, Config{}, func(s *Server) { s.testHookDetached = func(id string) { detached <- id } })
	_ = srv
	m := &matcher{bound: map[string]any{}}
	conns := map[string]*wsClient{}
	var last string
	for i, s := range loadSteps(t, name) {
		key := s.Conn
		if key != last && last != "" && conns[last] != nil && key != "" && conns[key] == nil {
			// A new connection replaces the previous one in the recording
			// only when the recording closed it (session-resume: A then B).
			if last == "A" {
				conns[last].c.Close(websocket.StatusNormalClosure, "")
				select {
				case <-detached:
				case <-time.After(10 * time.Second):
					t.Fatal("session not detached after its connection closed")
				}
			}
		}
		last = key
		w := conns[key]
		if w == nil {
			w = dialWS(t, url)
			conns[key] = w
		}
		switch s.Dir {
		case "send":
			if s.Raw != nil {
				w.send([]byte(*s.Raw))
			} else {
				w.send(m.substitute(s.Msg))
			}
		case "recv":
			got := w.recv()
			if got == nil {
				t.Fatalf("%s step %d: connection ended, want %s", name, i, s.Msg)
			}
			var wantV, gotV any
			if err := json.Unmarshal(s.Msg, &wantV); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(got, &gotV); err != nil {
				t.Fatalf("%s step %d: we sent invalid JSON %s", name, i, got)
			}
			if bytes.Contains(got, []byte(`"jsonrpc"`)) {
				t.Fatalf("%s step %d: we sent a jsonrpc member: %s", name, i, got)
			}
			if err := m.match("", wantV, gotV); err != nil {
				t.Fatalf("%s step %d: %v\n want %s\n  got %s", name, i, err, s.Msg, got)
			}
		case "eof":
			if got := w.recv(); got != nil {
				t.Fatalf("%s step %d: want the connection closed, got %s", name, i, got)
			}
		}
	}
}

func TestConformanceWithCodex(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "codex-0.169", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings: %v", err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(strings.TrimSuffix(name, ".jsonl"), func(t *testing.T) { replay(t, name) })
	}
}

// recvOrNil returns the next message, or nil when the connection ended
// or nothing came within the test deadline.
func (w *wsClient) recvOrNil() []byte {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	_, b, err := w.c.Read(ctx)
	if err != nil {
		return nil
	}
	return b
}
