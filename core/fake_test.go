package core

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/execserver"
	"github.com/codexd/codexd/internal/execproctest"
	"github.com/codexd/codexd/sandbox"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Sandboxed commands re-execute this test binary as the Landlock helper.
	sandbox.RunHelperIfRequested()
	execproctest.ServeIfAsked() // the child of an execproctest.Proc
	goleak.VerifyTestMain(m)
}

// fakeModel serves scripted responses in order and records the requests.
type fakeModel struct {
	mu        sync.Mutex
	responses []fakeResponse
	requests  []*prompt.Request
	reqs      chan *prompt.Request
	// next, when set, answers requests once responses run out.
	next func(req *prompt.Request) fakeResponse
}

type fakeResponse struct {
	events   []prompt.Event
	hang     bool  // after the events, block until cancelled
	err      error // after the events, fail with err
	startErr error
	retries  []prompt.Event // reported to onRetry before the stream starts
	gate     chan struct{}  // when set, Next waits for it before the first event
}

func newFakeModel(rs ...fakeResponse) *fakeModel {
	return &fakeModel{responses: rs, reqs: make(chan *prompt.Request, 100)}
}

func (f *fakeModel) add(rs ...fakeResponse) {
	f.mu.Lock()
	f.responses = append(f.responses, rs...)
	f.mu.Unlock()
}

func (f *fakeModel) Stream(ctx context.Context, req *prompt.Request, onRetry func(prompt.Event)) (prompt.Stream, error) {
	f.mu.Lock()
	f.requests = append(f.requests, req)
	var r fakeResponse
	if len(f.responses) > 0 {
		r = f.responses[0]
		f.responses = f.responses[1:]
	} else if f.next != nil {
		r = f.next(req)
	} else {
		r = fakeResponse{err: &prompt.Error{Message: "fake model: no more responses", Info: "other"}}
	}
	f.mu.Unlock()
	f.reqs <- req
	for _, ev := range r.retries {
		onRetry(ev)
	}
	if r.startErr != nil {
		return nil, r.startErr
	}
	return &fakeStream{ctx: ctx, r: r}, nil
}

func (f *fakeModel) request(t *testing.T) *prompt.Request {
	t.Helper()
	select {
	case r := <-f.reqs:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no model request")
		return nil
	}
}

type fakeStream struct {
	ctx    context.Context
	r      fakeResponse
	i      int
	closed bool
}

func (s *fakeStream) Next() (prompt.Event, error) {
	if s.i == 0 && s.r.gate != nil {
		select {
		case <-s.r.gate:
		case <-s.ctx.Done():
			return prompt.Event{}, s.ctx.Err()
		}
	}
	if err := s.ctx.Err(); err != nil {
		return prompt.Event{}, err
	}
	if s.i < len(s.r.events) {
		ev := s.r.events[s.i]
		s.i++
		return ev, nil
	}
	if s.r.hang {
		<-s.ctx.Done()
		return prompt.Event{}, s.ctx.Err()
	}
	if s.r.err != nil {
		return prompt.Event{}, s.r.err
	}
	return prompt.Event{}, io.EOF
}

func (s *fakeStream) Close() error { s.closed = true; return nil }

// Response builders.

func completed(in, out int64) prompt.Event {
	return prompt.Event{Kind: prompt.Completed, Usage: &prompt.Usage{InputTokens: in, OutputTokens: out, TotalTokens: in + out}}
}

func textEvents(id string, deltas ...string) []prompt.Event {
	msg := prompt.Item{Type: prompt.TypeMessage, ID: id, Role: "assistant"}
	evs := []prompt.Event{{Kind: prompt.Created}, {Kind: prompt.ItemAdded, Item: &msg}}
	full := ""
	for _, d := range deltas {
		full += d
		evs = append(evs, prompt.Event{Kind: prompt.TextDelta, ItemID: id, Delta: d})
	}
	done := prompt.Message("assistant", full)
	done.ID = id
	return append(evs, prompt.Event{Kind: prompt.ItemDone, Item: &done})
}

func textResponse(id string, deltas ...string) fakeResponse {
	return fakeResponse{events: append(textEvents(id, deltas...), completed(10, 5))}
}

func callResponse(callID, name string, args any) fakeResponse {
	b, _ := json.Marshal(args)
	it := prompt.Item{Type: prompt.TypeFunctionCall, Name: name, Arguments: string(b), CallID: callID, ID: "fc_" + callID}
	return fakeResponse{events: []prompt.Event{
		{Kind: prompt.Created}, {Kind: prompt.ItemAdded, Item: &it},
		{Kind: prompt.ItemDone, Item: &it}, completed(20, 3),
	}}
}

// passSandbox "confines" by running the command as is; denial follows the
// heuristic.
type passSandbox struct{}

func (passSandbox) Available() error { return nil }
func (passSandbox) Wrap(p agent.SandboxPolicy, cwd string, argv []string) ([]string, error) {
	return argv, nil
}
func (passSandbox) Denied(code int, out string) bool { return deniedHeuristic(code, out) }

type harness struct {
	t     *testing.T
	core  *Core
	model *fakeModel
	dir   string
}

func newHarness(t *testing.T, model *fakeModel, mod func(*Config)) *harness {
	t.Helper()
	dir := t.TempDir()
	srv, err := execserver.New(execserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Settings: agent.Settings{
			Model: "mock-model", ModelProvider: "mock", Cwd: dir,
			Approval: agent.ApprovalNever, Sandbox: agent.SandboxPolicy{Mode: agent.SandboxDangerFullAccess},
		},
		CodexHome: t.TempDir(),
		Providers: map[string]*Provider{"mock": {Name: "mock", Client: model, StreamMaxRetries: 2}},
		ExecDialer: func(ctx context.Context) (*execclient.Client, error) {
			return execclient.NewInProcess(ctx, srv, execclient.Options{})
		},
		Sandbox:        passSandbox{},
		NoLoginShell:   true,
		ApplyPatchTool: true,
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		srv.Close()
	})
	return &harness{t: t, core: c, model: model, dir: dir}
}

func (h *harness) start(o agent.Overrides) agent.Thread {
	h.t.Helper()
	l, err := h.core.StartThread(context.Background(), agent.StartOptions{Overrides: o})
	if err != nil {
		h.t.Fatal(err)
	}
	return l.Thread
}

func text(s string) []agent.Input { return []agent.Input{{Type: "text", Text: s}} }

func (h *harness) submit(th agent.Thread, op agent.Op) string {
	h.t.Helper()
	id, err := th.Submit(context.Background(), op)
	if err != nil {
		h.t.Fatalf("submit %T: %v", op, err)
	}
	return id
}

// until reads events until pred matches one, and returns all read.
func until(t *testing.T, th agent.Thread, pred func(agent.Event) bool) []agent.Event {
	t.Helper()
	var evs []agent.Event
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-th.Events():
			if !ok {
				t.Fatalf("events closed; got %s", describe(evs))
			}
			evs = append(evs, ev)
			if pred(ev) {
				return evs
			}
		case <-deadline:
			t.Fatalf("timed out; got %s", describe(evs))
		}
	}
}

func isTurnCompleted(ev agent.Event) bool { _, ok := ev.Msg.(agent.TurnCompleted); return ok }

func describe(evs []agent.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		b.WriteString("\n  ")
		b.WriteString(describeEvent(ev))
	}
	return b.String()
}

func describeEvent(ev agent.Event) string {
	switch m := ev.Msg.(type) {
	case agent.ItemStarted:
		return "ItemStarted " + describeItem(m.Item)
	case agent.ItemCompleted:
		return "ItemCompleted " + describeItem(m.Item)
	case agent.TurnCompleted:
		s := "TurnCompleted " + string(m.Status)
		if m.Error != nil {
			s += " " + m.Error.Message
		}
		return s
	case agent.Error:
		b, _ := json.Marshal(m)
		return "Error " + string(b)
	default:
		b, _ := json.Marshal(m)
		return fmtTypeOf(m) + " " + string(b)
	}
}

func describeItem(it agent.Item) string {
	b, _ := json.Marshal(it)
	return fmtTypeOf(it) + string(b)
}

func msgs[T any](evs []agent.Event) []T {
	var out []T
	for _, ev := range evs {
		if m, ok := ev.Msg.(T); ok {
			out = append(out, m)
		}
	}
	return out
}

func itemsCompleted[T agent.Item](evs []agent.Event) []T {
	var out []T
	for _, m := range msgs[agent.ItemCompleted](evs) {
		if it, ok := m.Item.(T); ok {
			out = append(out, it)
		}
	}
	return out
}

func lastOutput(t *testing.T, req *prompt.Request, callID string) string {
	t.Helper()
	for i := len(req.Input) - 1; i >= 0; i-- {
		it := req.Input[i]
		if (it.Type == prompt.TypeFunctionCallOutput || it.Type == prompt.TypeCustomToolCallOutput) && it.CallID == callID && it.Output != nil {
			return *it.Output
		}
		if it.Type == prompt.TypeFunctionCallOutput && it.CallID == callID && it.OutputContent != nil {
			// An MCP call's content list: its texts, without the first
			// part's "Wall time: …\nOutput:" header.
			var b strings.Builder
			for j, c := range it.OutputContent {
				if j == 0 && strings.HasPrefix(c.Text, "Wall time: ") {
					continue
				}
				b.WriteString(c.Text)
			}
			return b.String()
		}
	}
	t.Fatalf("no output for %s in the request", callID)
	return ""
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
