package store

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/codexd/codexd/agent"
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(appenderProcess())
	}
	goleak.VerifyTestMain(m)
}

// logSink records what the store logs, so tests can see its warnings.
type logSink struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *logSink) Enabled(context.Context, slog.Level) bool { return true }
func (h *logSink) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r.Clone())
	return nil
}
func (h *logSink) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logSink) WithGroup(string) slog.Handler      { return h }

// warnings returns the warning messages with their "reason" attributes.
func (h *logSink) warnings() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.recs {
		if r.Level < slog.LevelWarn {
			continue
		}
		msg := r.Message
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "reason" {
				msg += ": " + a.Value.String()
			}
			return true
		})
		out = append(out, msg)
	}
	return out
}

type env struct {
	t    testing.TB
	home string
	logs *logSink
	s    *Local
}

func newEnv(t testing.TB) *env {
	t.Helper()
	e := &env{t: t, home: t.TempDir(), logs: &logSink{}}
	e.open()
	t.Cleanup(func() {
		if e.s != nil {
			e.s.Close()
		}
	})
	return e
}

func (e *env) open() {
	e.t.Helper()
	s, err := Open(context.Background(), e.home, Options{Logger: slog.New(e.logs)})
	if err != nil {
		e.t.Fatalf("Open: %v", err)
	}
	e.s = s
}

// reopen closes the store and opens it again, as a restart does.
func (e *env) reopen() {
	e.t.Helper()
	if err := e.s.Close(); err != nil {
		e.t.Fatalf("Close: %v", err)
	}
	e.open()
}

var t0 = time.Date(2024, 3, 4, 5, 6, 7, 0, time.UTC)

// at is t0 plus n milliseconds: distinct, ordered, exact on disk.
func at(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }

func meta(id string, n int) ThreadMeta {
	return ThreadMeta{
		ID: id, CreatedAt: at(n), Source: "appServer", Originator: "test", CliVersion: "0.0.1",
		Settings: agent.Settings{Model: "m1", ModelProvider: "mock", Cwd: "/work/a", Approval: agent.ApprovalNever},
	}
}

func testID(n int) string { return fmt.Sprintf("0190a000-0000-7000-8000-%012x", n) }

func userMsg(id, text string) *agent.UserMessage {
	return &agent.UserMessage{ID: id, Content: []agent.Input{{Type: "text", Text: text}}}
}

// turnRecords is a whole turn: started, the user's message, a model item,
// the answer, completed.
func turnRecords(turn string, n int, text string) []Record {
	return []Record{
		{Time: at(n), TurnID: turn, Event: agent.TurnStarted{StartedAt: at(n), Kind: "regular"}},
		{Time: at(n + 1), TurnID: turn, Event: agent.ItemCompleted{Item: userMsg("u-"+turn, text)}},
		{Time: at(n + 2), TurnID: turn, Model: []byte(`{"type":"message","role":"user","content":"` + text + `"}`)},
		{Time: at(n + 3), TurnID: turn, Event: agent.ItemCompleted{Item: &agent.AgentMessage{ID: "a-" + turn, Text: "re: " + text}}},
		{Time: at(n + 4), TurnID: turn, Event: agent.TurnCompleted{Status: agent.TurnStatusCompleted, CompletedAt: at(n + 4)}},
	}
}

func mustAppend(t testing.TB, w Writer, recs ...Record) {
	t.Helper()
	if err := w.Append(recs...); err != nil {
		t.Fatalf("Append: %v", err)
	}
}

// writeRaw writes a rollout file as a crashed or foreign process left it:
// lines given as they are, each followed by a newline unless it is the
// torn last one.
func writeRaw(t testing.TB, path string, lines []string, tornLast bool) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	body := strings.Join(lines, "\n")
	if !tornLast {
		body += "\n"
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// lines encodes records as rollout lines (meta first), without newlines.
func lines(t testing.TB, m ThreadMeta, recs ...Record) []string {
	t.Helper()
	b, err := encodeMetaLine(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{strings.TrimSuffix(string(b), "\n")}
	for _, r := range recs {
		b, err := encodeRecord(nil, r, at(0))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.TrimSuffix(string(b), "\n"))
	}
	return out
}

func statuses(turns []agent.Turn) []agent.TurnStatus {
	var out []agent.TurnStatus
	for _, t := range turns {
		out = append(out, t.Status)
	}
	return out
}
