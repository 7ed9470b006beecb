package appserver

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/core"
	"github.com/codexd/codexd/core/compaction"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/execclient"
)

// gatedModel answers like echoModel, but a summarisation request waits for
// its gate, and a request whose last input is "hang" waits until cancelled.
type gatedModel struct {
	echoModel
	mu   sync.Mutex
	gate chan struct{}
}

func (m *gatedModel) Stream(ctx context.Context, req *prompt.Request, onRetry func(prompt.Event)) (prompt.Stream, error) {
	last := req.Input[len(req.Input)-1].Text()
	if last == compaction.DefaultPrompt {
		m.mu.Lock()
		gate := m.gate
		m.mu.Unlock()
		if gate != nil {
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	if last == "hang" {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return m.echoModel.Stream(ctx, req, onRetry)
}

func newCompactEnv(t *testing.T, model prompt.Client) *realEnv {
	t.Helper()
	home, cwd := t.TempDir(), t.TempDir()
	c, err := core.New(core.Config{
		Settings: agent.Settings{Model: "mock-model", ModelProvider: "mock", Cwd: cwd,
			Approval: agent.ApprovalNever, Sandbox: agent.SandboxPolicy{Mode: agent.SandboxReadOnly}},
		CodexHome: home,
		Providers: map[string]*core.Provider{"mock": {Name: "mock", Client: model}},
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
	r := &realEnv{env: &env{t: t, srv: srv}, core: c}
	t.Cleanup(r.close)
	return r
}

func TestThreadCompactStart(t *testing.T) {
	gate := make(chan struct{})
	m := &gatedModel{gate: gate}
	r := newCompactEnv(t, m)
	c := r.dial("compactor")
	c.initialize(nil)
	id := c.startThread(nil)
	c.startTurn(id, "one")
	c.note("turn/started")
	c.note("turn/completed")

	if res := c.call(appproto.MethodThreadCompactStart, map[string]any{"threadId": id}); string(res.Result) != "{}" {
		t.Fatalf("answer %s", res.Result)
	}
	started := c.note("turn/started")
	turnID := started.str(t, "/turn/id")
	item := c.next("the compaction item", func(m *wmsg) bool {
		return m.Method == "item/started" && strings.Contains(string(m.Params), `"type":"contextCompaction"`)
	})
	if item.str(t, "/item/type") != "contextCompaction" || item.str(t, "/turnId") != turnID {
		t.Fatalf("item/started %s", item)
	}
	// While it runs: turn/start is refused as Codex refuses it, and
	// turn/steer gets the non-steerable error with its TurnError.
	e := c.callErr(appproto.MethodTurnStart, map[string]any{"threadId": id, "input": text("more")})
	if e.Code != -32603 || e.Message != "failed to submit turn input: ActiveTurnNotSteerable { turn_kind: Compact }" {
		t.Fatalf("turn/start during compaction: %+v", e)
	}
	e = c.callErr(appproto.MethodTurnSteer, map[string]any{"threadId": id, "expectedTurnId": turnID, "input": text("more")})
	if e.Code != -32600 || e.Message != "cannot steer a compact turn" ||
		!strings.Contains(string(e.Data), `"codexErrorInfo":{"activeTurnNotSteerable":{"turnKind":"compact"}}`) {
		t.Fatalf("turn/steer during compaction: %+v %s", e, e.Data)
	}
	close(gate)
	done := c.next("the compaction item's end", func(m *wmsg) bool {
		return m.Method == "item/completed" && strings.Contains(string(m.Params), `"type":"contextCompaction"`)
	})
	if done.str(t, "/item/type") != "contextCompaction" || done.str(t, "/item/id") != item.str(t, "/item/id") {
		t.Fatalf("item/completed %s", done)
	}
	tc := c.note("turn/completed")
	if tc.str(t, "/turn/status") != "completed" || tc.str(t, "/turn/id") != turnID {
		t.Fatalf("turn/completed %s", tc)
	}
	read := c.call(appproto.MethodThreadRead, map[string]any{"threadId": id, "includeTurns": true})
	if n := strings.Count(string(read.Result), `"type":"contextCompaction"`); n != 1 {
		t.Fatalf("thread/read: %d compaction items: %s", n, read.Result)
	}
	// The next prompt is answered.
	c.startTurn(id, "two")
	c.note("turn/started")
	if tc := c.note("turn/completed"); tc.str(t, "/turn/status") != "completed" {
		t.Fatalf("after compaction %s", tc)
	}
}

// thread/compact/start while a turn runs: that turn ends interrupted, then
// the compaction turn runs.
func TestThreadCompactStartInterruptsRunningTurn(t *testing.T) {
	r := newCompactEnv(t, &gatedModel{})
	c := r.dial("compactor")
	c.initialize(nil)
	id := c.startThread(nil)
	first := c.startTurn(id, "hang")
	c.note("turn/started")
	c.call(appproto.MethodThreadCompactStart, map[string]any{"threadId": id})
	tc := c.note("turn/completed")
	if tc.str(t, "/turn/id") != first || tc.str(t, "/turn/status") != "interrupted" {
		t.Fatalf("running turn %s", tc)
	}
	second := c.note("turn/started").str(t, "/turn/id")
	tc = c.note("turn/completed")
	if tc.str(t, "/turn/id") != second || tc.str(t, "/turn/status") != "completed" {
		t.Fatalf("compaction turn %s", tc)
	}
}

func TestThreadCompactStartErrors(t *testing.T) {
	r := newCompactEnv(t, &gatedModel{})
	c := r.dial("compactor")
	c.initialize(nil)
	if e := c.callErr(appproto.MethodThreadCompactStart, map[string]any{"threadId": "nope"}); e.Code != -32600 || !strings.HasPrefix(e.Message, "invalid thread id: ") {
		t.Fatalf("bad id %+v", e)
	}
	if e := c.callErr(appproto.MethodThreadCompactStart, map[string]any{"threadId": "0195f5d8-6a2c-7a51-9bd8-5f1d3c4f2e10"}); e.Code != -32600 || !strings.HasPrefix(e.Message, "thread not found: ") {
		t.Fatalf("unknown thread %+v", e)
	}
	if e := c.callErr(appproto.MethodThreadCompactStart, map[string]any{}); e.Code != -32600 || !strings.Contains(e.Message, "missing field `threadId`") {
		t.Fatalf("no thread id %+v", e)
	}
}
