package promptcli

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"go.uber.org/goleak"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/config"
	"github.com/codexd/codexd/core/boot"
	"github.com/codexd/codexd/sandbox"
)

func TestMain(m *testing.M) {
	// Sandboxed commands re-execute this test binary as the Landlock helper.
	sandbox.RunHelperIfRequested()
	goleak.VerifyTestMain(m)
}

// wait bounds every wait of these tests: long, for a loaded machine; a
// test that passes never waits for it.
const wait = 60 * time.Second

// env is a CODEX_HOME and a working directory under t.TempDir, with HOME
// moved there too, so that `bash -l` reads no profile of the machine's.
type env struct {
	t         *testing.T
	home, dir string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, home: t.TempDir(), dir: t.TempDir()}
	t.Setenv("CODEX_HOME", e.home)
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CODEX_EXEC_SERVER_URL", "")
	if err := os.WriteFile(filepath.Join(e.dir, "marker.txt"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

// open starts a real core on the built-in mock model, with approval
// "never" unless lo says otherwise (what `codexd exec` does).
func (e *env) open(lo config.LoadOptions) *boot.Runtime {
	e.t.Helper()
	lo.ModelProvider = "mock"
	if lo.ApprovalPolicy == "" {
		lo.ApprovalPolicy = config.ApprovalNever
	}
	rt, err := boot.Open(context.Background(), boot.Options{Config: lo, Cwd: e.dir, Originator: "codex_exec",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		e.t.Fatal(err)
	}
	return rt
}

// result is what a run printed and returned.
type result struct {
	code           int
	stdout, stderr string
}

// exec runs o's turn on a real core configured by lo.
func (e *env) exec(o Options, lo config.LoadOptions) result {
	e.t.Helper()
	rt := e.open(lo)
	defer func() {
		if err := rt.Close(); err != nil {
			e.t.Errorf("closing the runtime: %v", err)
		}
	}()
	return runOn(e.t, rt.Core, o)
}

// runOn runs o's turn on core, filling in buffers for the output that o
// leaves unset.
func runOn(t *testing.T, core agent.Core, o Options) result {
	t.Helper()
	var out, errb *syncBuffer
	if o.Stdout == nil {
		out = newSyncBuffer()
		o.Stdout = out
	}
	if o.Stderr == nil {
		errb = newSyncBuffer()
		o.Stderr = errb
	}
	job, err := Prepare(o)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	done := make(chan int, 1)
	go func() { done <- job.Run(context.Background(), core) }()
	var r result
	select {
	case r.code = <-done:
	case <-time.After(wait):
		t.Fatal("the run did not end")
	}
	if out != nil {
		r.stdout = out.String()
	}
	if errb != nil {
		r.stderr = errb.String()
	}
	return r
}

// syncBuffer is a Buffer safe for concurrent use that tells when text
// first arrives.
type syncBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{}
	once  sync.Once
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{wrote: make(chan struct{})} }

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.b.Write(p)
	if n > 0 {
		s.once.Do(func() { close(s.wrote) })
	}
	return n, err
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitWrite waits for the first write.
func (s *syncBuffer) waitWrite(t *testing.T) {
	t.Helper()
	select {
	case <-s.wrote:
	case <-time.After(wait):
		t.Fatal("nothing was written")
	}
}

// event is one decoded JSONL line.
type event struct {
	raw  string
	Type string         `json:"type"`
	Item map[string]any `json:"item"`
}

func (ev event) itemType() string {
	s, _ := ev.Item["type"].(string)
	return s
}

func (ev event) sig() string {
	s := ev.Type
	if ev.Item != nil {
		s += ":" + ev.itemType()
		if st, ok := ev.Item["status"].(string); ok {
			s += ":" + st
		}
	}
	return s
}

// decodeEvents parses JSONL, failing on a line that is not one JSON object.
func decodeEvents(t *testing.T, out string) []event {
	t.Helper()
	var evs []event
	for line := range strings.SplitSeq(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		var ev event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not a JSON event: %q: %v", line, err)
		}
		ev.raw = line
		evs = append(evs, ev)
	}
	return evs
}

// sigs lists the events' signatures (type, item type, status), warnings
// left out.
func sigs(evs []event) []string {
	var out []string
	for _, ev := range evs {
		if ev.itemType() == "error" {
			continue
		}
		out = append(out, ev.sig())
	}
	return out
}

// shape is a JSON value's structure: member names in order and the kinds
// of values, with the values themselves left out.
func shape(t *testing.T, raw string) string {
	t.Helper()
	dec := jsontext.NewDecoder(strings.NewReader(raw))
	var b strings.Builder
	for {
		tok, err := dec.ReadToken()
		if err == io.EOF {
			return b.String()
		}
		if err != nil {
			t.Fatalf("shape of %q: %v", raw, err)
		}
		switch k := tok.Kind(); k {
		case '{', '}', '[', ']':
			b.WriteByte(byte(k))
		case '"':
			// A member name is kept; a string value becomes "s".
			if dec.StackDepth() > 0 {
				if kind, n := dec.StackIndex(dec.StackDepth()); kind == '{' && n%2 == 1 {
					b.WriteString(tok.String() + ":")
					continue
				}
			}
			b.WriteString("s,")
		case 't', 'f':
			b.WriteString("bool,")
		default:
			b.WriteString(k.String() + ",")
		}
	}
}
