package appserver

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
)

func TestThreadLifecycle(t *testing.T) {
	e := newEnv(t, agenttest.Options{}, Config{})
	c := e.dial("life")
	c.initialize(map[string]any{"experimentalApi": true})
	thread := c.startThread(map[string]any{"cwd": "/work", "model": "m2", "approvalPolicy": "on-request", "sandbox": "read-only"})
	if err := c.callErr(appproto.MethodThreadRead, map[string]any{"threadId": thread, "includeTurns": true}); err.Code != -32601 || err.Message != "list_turns is not supported yet" {
		t.Fatalf("includeTurns before the first turn: %+v", err)
	}
	if err := c.callErr(appproto.MethodThreadTurnsList, map[string]any{"threadId": thread}); err.Code != -32601 {
		t.Fatalf("turns/list before the first turn: %+v", err)
	}
	read := c.call(appproto.MethodThreadRead, map[string]any{"threadId": thread})
	if read.str(t, "/thread/cwd") != "/work" || read.str(t, "/thread/model") != "m2" || read.str(t, "/thread/status/type") != "idle" {
		t.Fatalf("read: %s", read)
	}
	for i := 0; i < 3; i++ {
		c.startTurn(thread, "turn")
		c.note("turn/completed")
	}
	turns := c.call(appproto.MethodThreadTurnsList, map[string]any{"threadId": thread, "limit": 2})
	var page appproto.ThreadTurnsListResponse
	_ = pointer(turns.Result, "", &page)
	if len(page.Data) != 2 || page.NextCursor == nil || page.Data[0].ItemsView != "summary" {
		t.Fatalf("turns page: %s", turns)
	}
	rest := c.call(appproto.MethodThreadTurnsList, map[string]any{"threadId": thread, "limit": 2, "cursor": *page.NextCursor})
	var page2 appproto.ThreadTurnsListResponse
	_ = pointer(rest.Result, "", &page2)
	if len(page2.Data) != 1 || page2.NextCursor != nil || page2.Data[0].ID == page.Data[0].ID {
		t.Fatalf("second page: %s", rest)
	}
	full := c.call(appproto.MethodThreadRead, map[string]any{"threadId": thread, "includeTurns": true})
	var tr appproto.ThreadReadResponse
	_ = pointer(full.Result, "", &tr)
	if len(tr.Thread.Turns) != 3 || tr.Thread.Turns[0].ItemsView != "full" || len(tr.Thread.Turns[0].Items) != 2 || tr.Thread.Preview != "turn" {
		t.Fatalf("read with turns: %s", full)
	}
	// Names.
	if err := c.callErr(appproto.MethodThreadNameSet, map[string]any{"threadId": thread, "name": "  "}); err.Message != "thread name must not be empty" {
		t.Fatalf("empty name: %+v", err)
	}
	if err := c.callErr(appproto.MethodThreadNameSet, map[string]any{"threadId": "00000000-0000-0000-0000-000000000000", "name": "x"}); err.Message != "no rollout found for thread id 00000000-0000-0000-0000-000000000000" {
		t.Fatalf("unknown: %+v", err)
	}
	c.call(appproto.MethodThreadNameSet, map[string]any{"threadId": thread, "name": "hello thread"})
	if n := c.note("thread/name/updated"); n.str(t, "/threadName") != "hello thread" {
		t.Fatalf("name: %s", n)
	}
	// Settings: answered at once, applied after.
	c.call(appproto.MethodThreadSettingsUpdate, map[string]any{"threadId": thread, "approvalPolicy": "never", "model": "m3"})
	if n := c.note("thread/settings/updated"); n.str(t, "/threadSettings/model") != "m3" || n.str(t, "/threadSettings/approvalPolicy") != "never" {
		t.Fatalf("settings: %s", n)
	}
	// Listing.
	second := c.startThread(nil)
	c.startTurn(second, "second")
	c.note("turn/completed")
	list := c.call(appproto.MethodThreadList, map[string]any{"limit": 1})
	var lp appproto.ThreadListResponse
	_ = pointer(list.Result, "", &lp)
	if len(lp.Data) != 1 || lp.NextCursor == nil || lp.Data[0].ID != second {
		t.Fatalf("list page: %s", list)
	}
	if err := c.callErr(appproto.MethodThreadList, map[string]any{"cursor": "bogus"}); err.Message != "invalid cursor: bogus" {
		t.Fatalf("bad cursor: %+v", err)
	}
	// Archive unloads the thread and tells everyone; unarchive brings it back
	// to the listing, not loaded.
	c.call(appproto.MethodThreadArchive, map[string]any{"threadId": thread})
	c.next("notLoaded", func(m *wmsg) bool {
		return m.Method == "thread/status/changed" && strings.Contains(string(m.Params), "notLoaded")
	})
	c.note("thread/archived")
	if l := c.call(appproto.MethodThreadLoadedList, map[string]any{}); strings.Contains(string(l.Result), thread) {
		t.Fatalf("archived thread still loaded: %s", l)
	}
	if err := c.callErr(appproto.MethodTurnStart, map[string]any{"threadId": thread, "input": text("x")}); err.Message != "thread not found: "+thread {
		t.Fatalf("turn on an archived thread: %+v", err)
	}
	un := c.call(appproto.MethodThreadUnarchive, map[string]any{"threadId": thread})
	if un.str(t, "/thread/status/type") != "notLoaded" {
		t.Fatalf("unarchive: %s", un)
	}
	c.note("thread/unarchived")
	if err := c.callErr(appproto.MethodThreadUnarchive, map[string]any{"threadId": thread}); err.Message != "no archived rollout found for thread id "+thread {
		t.Fatalf("unarchive twice: %+v", err)
	}
	// A stored thread can be read without loading it, and resumed.
	ro := c.call(appproto.MethodThreadRead, map[string]any{"threadId": thread, "includeTurns": true})
	if ro.str(t, "/thread/status/type") != "notLoaded" || !strings.Contains(string(ro.Result), `"environments":null`) {
		t.Fatalf("read unloaded: %s", ro)
	}
	res := c.call(appproto.MethodThreadResume, map[string]any{"threadId": thread, "excludeTurns": true})
	if res.str(t, "/thread/status/type") != "idle" || !strings.Contains(string(res.Result), `"turns":[]`) {
		t.Fatalf("resume: %s", res)
	}
	if err := c.callErr(appproto.MethodThreadResume, map[string]any{"threadId": "00000000-0000-0000-0000-000000000000"}); err.Message != "no rollout found for thread id 00000000-0000-0000-0000-000000000000" {
		t.Fatalf("resume unknown: %+v", err)
	}
	// Ephemeral threads have no path and cannot be archived.
	eph := c.call(appproto.MethodThreadStart, map[string]any{"ephemeral": true})
	if !strings.Contains(string(eph.Result), `"ephemeral":true`) || !strings.Contains(string(eph.Result), `"path":null`) {
		t.Fatalf("ephemeral: %s", eph)
	}
	if err := c.callErr(appproto.MethodThreadArchive, map[string]any{"threadId": eph.str(t, "/thread/id")}); !strings.HasPrefix(err.Message, "no rollout found for thread id") {
		t.Fatalf("archive ephemeral: %+v", err)
	}
	if err := c.callErr(appproto.MethodThreadStart, map[string]any{"permissions": ":workspace", "sandbox": "read-only"}); err.Message != "`permissions` cannot be combined with `sandbox`" {
		t.Fatalf("permissions and sandbox: %+v", err)
	}
	if got := c.call(appproto.MethodThreadUnsubscribe, map[string]any{"threadId": "00000000-0000-0000-0000-000000000000"}).str(t, "/status"); got != "notLoaded" {
		t.Fatalf("unsubscribe unknown: %s", got)
	}
}

// A turn/start during a turn joins it (same id), as Codex does; a failed
// turn reports systemError, an error notification and turn/completed
// failed.
func TestTurnStartWhileActiveAndFailedTurn(t *testing.T) {
	gate := agenttest.NewGate()
	e := newEnv(t, agenttest.Options{Turn: blockedTurn(gate)}, Config{})
	c := e.dial("busy")
	c.initialize(nil)
	thread := c.startThread(nil)
	first := c.startTurn(thread, "one")
	if second := c.startTurn(thread, "two"); second != first {
		t.Fatalf("second turn/start got %s, want the active %s", second, first)
	}
	gate.Open()
	c.note("turn/completed")
	n := 0
	for _, m := range c.logged() {
		if m.Method == "item/completed" && strings.Contains(string(m.Params), `"userMessage"`) {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d user messages in the turn, want 2", n)
	}
	e.core.SetTurn(func(tn *agenttest.Turn) {
		tn.Fail(agent.TurnError{Message: "We’re currently experiencing high demand.", Info: "internalServerError"})
	})
	c.startTurn(thread, "fail")
	c.next("systemError", func(m *wmsg) bool {
		return m.Method == "thread/status/changed" && strings.Contains(string(m.Params), "systemError")
	})
	errN := c.note("error")
	if !strings.Contains(string(errN.Params), `"willRetry":false`) || !strings.Contains(string(errN.Params), `"codexErrorInfo":"internalServerError"`) {
		t.Fatalf("error: %s", errN)
	}
	done := c.note("turn/completed")
	if done.str(t, "/turn/status") != "failed" || done.str(t, "/turn/error/message") == "" {
		t.Fatalf("failed turn: %s", done)
	}
}

// Every event kind the contract has is projected (reasoning, plans,
// diffs, warnings, command output, file changes), each checked against the
// schema by the client.
func TestEveryEventProjected(t *testing.T) {
	e := newEnv(t, agenttest.Options{Turn: func(tn *agenttest.Turn) {
		tn.Emit(agent.ItemStarted{Item: &agent.Reasoning{ID: "r1"}})
		tn.Emit(agent.ReasoningSummaryPartAdded{ItemID: "r1", SummaryIndex: 0})
		tn.Emit(agent.ReasoningSummaryDelta{ItemID: "r1", Delta: "thinking"})
		tn.Emit(agent.ReasoningTextDelta{ItemID: "r1", Delta: "raw"})
		tn.Emit(agent.ItemCompleted{Item: &agent.Reasoning{ID: "r1", Summary: []string{"thinking"}, Content: []string{"raw"}}})
		tn.Emit(agent.PlanUpdated{Explanation: "steps", Steps: []agent.PlanStep{{Step: "a", Status: "completed"}, {Step: "b", Status: "inProgress"}}})
		tn.Emit(agent.Warning{Message: "careful"})
		tn.Emit(agent.Error{Err: agent.TurnError{Message: "stream dropped", Info: "responseStreamDisconnected"}, WillRetry: true})
		cmd := &agent.CommandExecution{ID: "c1", Command: "ls", Cwd: "/w", Source: "agent", Status: agent.ItemStatusInProgress,
			Actions: []agent.CommandAction{{Type: "listFiles", Command: "ls", Path: "."}, {Type: "read", Command: "cat a", Name: "a", Path: "/w/a"},
				{Type: "search", Command: "rg x", Query: "x"}}}
		tn.Emit(agent.ItemStarted{Item: cmd})
		tn.Emit(agent.CommandOutputDelta{ItemID: "c1", Stream: "stdout", Data: []byte("a\xffb\n")})
		out, code := "a\n", 0
		done := *cmd
		done.Status, done.Output, done.ExitCode = agent.ItemStatusCompleted, &out, &code
		tn.Emit(agent.ItemCompleted{Item: &done})
		fc := &agent.FileChange{ID: "f1", Status: agent.ItemStatusCompleted, Changes: []agent.FileUpdate{
			{Path: "/w/new", Kind: "add", Diff: "x\n"}, {Path: "/w/old", Kind: "delete"}, {Path: "/w/a", Kind: "update", MovePath: "/w/b", Diff: "@@\n"}}}
		tn.Emit(agent.ItemStarted{Item: fc})
		tn.Emit(agent.ItemCompleted{Item: fc})
		tn.Emit(agent.ItemStarted{Item: &agent.Plan{ID: "p1", Text: "the plan"}})
		tn.Emit(agent.ItemCompleted{Item: &agent.Plan{ID: "p1", Text: "the plan"}})
		tn.Emit(agent.TurnDiff{Diff: "diff --git a/x b/x\n"})
		agenttest.DefaultTurn(tn)
	}}, Config{})
	c := e.dial("all")
	c.initialize(nil)
	thread := c.startThread(nil)
	c.startTurn(thread, "everything")
	done := c.note("turn/completed")
	got := methodsOf(c.logged())
	for _, want := range []string{"item/reasoning/summaryPartAdded", "item/reasoning/summaryTextDelta", "item/reasoning/textDelta",
		"turn/plan/updated", "warning", "error", "item/commandExecution/outputDelta", "turn/diff/updated", "thread/tokenUsage/updated"} {
		if indexOf(got, want) < 0 {
			t.Errorf("%s was not sent; got %v", want, got)
		}
	}
	// The retried error does not fail the turn.
	if done.str(t, "/turn/status") != "completed" {
		t.Fatalf("turn: %s", done)
	}
}

// startRecorder is a scripted core that records the options of every
// thread it starts or forks.
type startRecorder struct {
	*agenttest.Core
	mu   sync.Mutex
	opts []agent.StartOptions
}

func (r *startRecorder) StartThread(ctx context.Context, o agent.StartOptions) (*agent.Loaded, error) {
	r.mu.Lock()
	r.opts = append(r.opts, o)
	r.mu.Unlock()
	return r.Core.StartThread(ctx, o)
}

func (r *startRecorder) ForkThread(ctx context.Context, id string, o agent.StartOptions) (*agent.Loaded, error) {
	r.mu.Lock()
	r.opts = append(r.opts, o)
	r.mu.Unlock()
	return r.Core.ForkThread(ctx, id, o)
}

func (r *startRecorder) last() agent.StartOptions {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.opts[len(r.opts)-1]
}

// A thread/start whose config turns the shell tool off (the TUI's title
// job) gets a thread with no tools; other configs change nothing.
func TestThreadStartConfigDisablesTools(t *testing.T) {
	core := &startRecorder{Core: agenttest.New(agenttest.Options{})}
	e := newEnvWith(t, core, Config{})
	c := e.dial("title")
	c.initialize(nil)
	cases := []struct {
		config  any
		noTools bool
	}{
		{nil, false},
		{map[string]any{}, false},
		{map[string]any{"features.shell_tool": false, "features.unified_exec": false, "web_search": "disabled"}, true},
		{map[string]any{"features": map[string]any{"shell_tool": false}}, true},
		{map[string]any{"features.shell_tool": true}, false},
		{map[string]any{"model_reasoning_effort": "low"}, false},
	}
	for _, tc := range cases {
		p := map[string]any{"ephemeral": true, "sandbox": "read-only", "threadSource": "thread_title"}
		if tc.config != nil {
			p["config"] = tc.config
		}
		id := c.startThread(p)
		if got := core.last(); got.NoTools != tc.noTools || got.ThreadSource != "thread_title" {
			t.Fatalf("config %v: NoTools %v, want %v", tc.config, got.NoTools, tc.noTools)
		}
		c.call(appproto.MethodThreadUnsubscribe, map[string]any{"threadId": id})
	}
	thread := c.startThread(nil)
	c.startTurn(thread, "x")
	c.note("turn/completed")
	c.call(appproto.MethodThreadFork, map[string]any{"threadId": thread, "config": map[string]any{"features.shell_tool": false}})
	if !core.last().NoTools {
		t.Fatal("thread/fork's config was not applied")
	}
	if err := c.callErr(appproto.MethodThreadStart, map[string]any{"config": 5}); err.Code != -32600 || err.Message != "Invalid request: invalid type: integer `5`, expected a map" {
		t.Fatalf("config 5: %+v", err)
	}
}

// settingsRaceCore's threads hold thread/settings/update's Submit until
// the client has seen thread/settings/updated (or a short while has
// passed, which is what a correct server makes it wait): were the answer
// sent outside the thread's lock, the notification would overtake it.
type settingsRaceCore struct {
	*agenttest.Core
	seen func() bool
}

func (r *settingsRaceCore) StartThread(ctx context.Context, o agent.StartOptions) (*agent.Loaded, error) {
	l, err := r.Core.StartThread(ctx, o)
	if err == nil {
		l.Thread = settingsRaceThread{Thread: l.Thread, seen: r.seen}
	}
	return l, err
}

type settingsRaceThread struct {
	agent.Thread
	seen func() bool
}

func (t settingsRaceThread) Submit(ctx context.Context, op agent.Op) (string, error) {
	id, err := t.Thread.Submit(ctx, op)
	if _, ok := op.(agent.UpdateSettings); ok && err == nil {
		// A bounded wait for something that must not happen.
		deadline := time.Now().Add(300 * time.Millisecond)
		for !t.seen() && time.Now().Before(deadline) {
			runtime.Gosched()
			time.Sleep(time.Millisecond)
		}
	}
	return id, err
}

// thread/settings/update answers "queued" ({}), and thread/settings/updated
// follows it once the core has applied the settings: never before.
func TestThreadSettingsUpdateAnswersFirst(t *testing.T) {
	core := &settingsRaceCore{Core: agenttest.New(agenttest.Options{})}
	e := newEnvWith(t, core, Config{})
	c := e.dial("settings")
	core.seen = func() bool {
		return c.has(func(m *wmsg) bool { return m.Method == "thread/settings/updated" })
	}
	c.initialize(map[string]any{"experimentalApi": true})
	thread := c.startThread(nil)
	id := c.request(appproto.MethodThreadSettingsUpdate, map[string]any{"threadId": thread, "model": "m9"})
	if r := c.response(id); string(r.Result) != "{}" {
		t.Fatalf("answer: %s", r)
	}
	if n := c.note("thread/settings/updated"); n.str(t, "/threadSettings/model") != "m9" {
		t.Fatalf("updated: %s", n)
	}
	log := methodsOf(c.logged())
	if indexOf(log, "response:"+id) > indexOf(log, "thread/settings/updated") {
		t.Fatalf("thread/settings/updated overtook the answer: %v", log)
	}
}

// nameRaceCore holds SetThreadName until the client has seen
// thread/name/updated (or a short while has passed), as settingsRaceCore
// holds thread/settings/update.
type nameRaceCore struct {
	*agenttest.Core
	seen func() bool
}

func (r *nameRaceCore) SetThreadName(ctx context.Context, id, name string) error {
	err := r.Core.SetThreadName(ctx, id, name)
	deadline := time.Now().Add(300 * time.Millisecond)
	for err == nil && !r.seen() && time.Now().Before(deadline) {
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	return err
}

// thread/name/set on a loaded thread answers before thread/name/updated.
func TestThreadNameSetAnswersFirst(t *testing.T) {
	core := &nameRaceCore{Core: agenttest.New(agenttest.Options{})}
	e := newEnvWith(t, core, Config{})
	c := e.dial("namer")
	core.seen = func() bool {
		return c.has(func(m *wmsg) bool { return m.Method == "thread/name/updated" })
	}
	c.initialize(nil)
	thread := c.startThread(nil)
	id := c.request(appproto.MethodThreadNameSet, map[string]any{"threadId": thread, "name": "named"})
	if r := c.response(id); string(r.Result) != "{}" {
		t.Fatalf("answer: %s", r)
	}
	if n := c.note("thread/name/updated"); n.str(t, "/threadName") != "named" {
		t.Fatalf("updated: %s", n)
	}
	log := methodsOf(c.logged())
	if indexOf(log, "response:"+id) > indexOf(log, "thread/name/updated") {
		t.Fatalf("thread/name/updated overtook the answer: %v", log)
	}
}
