package appserver

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/core"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/store"
)

// These tests pin what Codex 0.169's app-server sends where codexd once
// differed (issue 12), each checked against the real binary with the mock
// model.

// thread.originator is the process-wide originator, the first client's
// name, in thread/start's answer, thread/started, thread/list and, after a
// restart, thread/read (it is kept in the rollout).
func TestThreadOriginatorIsTheClientName(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	first := newRealEnv(t, home, cwd)
	c := first.dial("ide_client")
	c.initialize(nil)
	later := first.dial("second_client")
	later.initialize(nil)
	res := c.call(appproto.MethodThreadStart, map[string]any{})
	id := res.str(t, "/thread/id")
	if got := res.str(t, "/thread/originator"); got != "ide_client" {
		t.Fatalf("thread/start originator %q: %s", got, res)
	}
	if got := c.note("thread/started").str(t, "/thread/originator"); got != "ide_client" {
		t.Fatalf("thread/started originator %q", got)
	}
	// A later client's threads carry the process-wide name too.
	if got := later.call(appproto.MethodThreadStart, map[string]any{}).str(t, "/thread/originator"); got != "ide_client" {
		t.Fatalf("second client's thread originator %q", got)
	}
	c.startTurn(id, "hello")
	c.next("turn/completed", func(m *wmsg) bool { return m.Method == "turn/completed" && strings.Contains(string(m.Params), id) })
	if got := c.call(appproto.MethodThreadList, map[string]any{}).str(t, "/data/0/originator"); got != "ide_client" {
		t.Fatalf("thread/list originator %q", got)
	}
	c.conn.Close()
	later.conn.Close()
	first.close()

	second := newRealEnv(t, home, cwd)
	d := second.dial("another")
	d.initialize(nil)
	if got := d.call(appproto.MethodThreadRead, map[string]any{"threadId": id}).str(t, "/thread/originator"); got != "ide_client" {
		t.Fatalf("thread/read after restart: originator %q", got)
	}
}

// thread/list shows a loaded thread's environments, as Codex does
// ([{environmentId: "local", cwd, runtimeWorkspaceRoots}]), and null for one
// that is not loaded; canAcceptDirectInput is null in a listing.
func TestThreadListEnvironments(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	first := newRealEnv(t, home, cwd)
	c := first.dial("lister")
	c.initialize(nil)
	id := c.startThread(nil)
	c.startTurn(id, "hello")
	c.note("turn/completed")
	var page appproto.ThreadListResponse
	if err := pointer(c.call(appproto.MethodThreadList, map[string]any{}).Result, "", &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].Environments == nil {
		t.Fatalf("loaded thread in thread/list: %+v", page.Data)
	}
	envs := *page.Data[0].Environments
	if len(envs) != 1 || envs[0].EnvironmentID != "local" || envs[0].Cwd != cwd ||
		len(envs[0].RuntimeWorkspaceRoots) != 1 || envs[0].RuntimeWorkspaceRoots[0] != cwd {
		t.Fatalf("environments %+v", envs)
	}
	if page.Data[0].CanAcceptDirectInput != nil {
		t.Fatalf("canAcceptDirectInput %v in a listing", *page.Data[0].CanAcceptDirectInput)
	}
	c.conn.Close()
	first.close()

	second := newRealEnv(t, home, cwd)
	d := second.dial("after")
	d.initialize(nil)
	if res := d.call(appproto.MethodThreadList, map[string]any{}); !strings.Contains(string(res.Result), `"environments":null`) {
		t.Fatalf("a thread that is not loaded: %s", res)
	}
}

// After initialize's answer, Codex (remote control off) sends
// remoteControl/status/changed {status: "disabled", serverName,
// installationId, environmentId: null}; a client may opt out of it.
func TestRemoteControlStatusAfterInitialize(t *testing.T) {
	const installation = "5b0c5a3e-8a5e-4a4f-9d57-0a5c2f1d7e21"
	e := newEnv(t, agenttest.Options{}, Config{InstallationID: installation})
	c := e.dial("ide")
	c.initialize(nil)
	n := c.note("remoteControl/status/changed")
	var p appproto.RemoteControlStatusChangedNotification
	if err := n.param("", &p); err != nil {
		t.Fatal(err)
	}
	if p.Status != "disabled" || p.InstallationID != installation || p.ServerName == "" || p.EnvironmentID != nil ||
		!strings.Contains(string(n.Params), `"environmentId":null`) {
		t.Fatalf("remoteControl/status/changed %s", n)
	}
	ms := methodsOf(c.logged())
	if ms[0] != "response:1" || ms[1] != "remoteControl/status/changed" {
		t.Fatalf("order %v", ms)
	}
	quiet := e.dial("quiet")
	quiet.initialize(map[string]any{"optOutNotificationMethods": []string{"remoteControl/status/changed"}})
	quiet.barrier()
	if quiet.has(func(m *wmsg) bool { return m.Method == "remoteControl/status/changed" }) {
		t.Fatal("sent to a client that opted out")
	}
}

// A file-change approval always carries reason and grantRoot, null when
// the core gives none, as Codex's does.
func TestFileChangeApprovalNullMembers(t *testing.T) {
	e := newEnv(t, agenttest.Options{Turn: func(tn *agenttest.Turn) {
		fc := &agent.FileChange{ID: "patch_1", Status: agent.ItemStatusInProgress,
			Changes: []agent.FileUpdate{{Path: "/w/a.go", Kind: "add", Diff: "a\n"}}}
		tn.Emit(agent.ItemStarted{Item: fc})
		if _, err := tn.PatchApproval(agent.PatchApprovalRequest{CallID: "patch_1", Changes: fc.Changes}); err != nil {
			return
		}
		tn.AgentMessage("m", "done")
	}}, Config{})
	c := e.dial("patch")
	c.initialize(nil)
	c.startTurn(c.startThread(nil), "edit")
	req := c.serverRequest("item/fileChange/requestApproval")
	if !strings.Contains(string(req.Params), `"reason":null`) || !strings.Contains(string(req.Params), `"grantRoot":null`) {
		t.Fatalf("file change approval %s", req)
	}
	c.send(`{"id":` + string(req.ID) + `,"result":{"decision":"accept"}}`)
	c.note("turn/completed")
}

// A thread/list cursor is a position, as Codex's: paging goes on when the
// thread it was taken at has left the listing (archived), and it continues
// another order too; a malformed cursor gets Codex's message. Each page
// has a backwards cursor, which includes its first thread.
func TestThreadListCursorIsAPosition(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	r := newRealEnv(t, home, cwd)
	c := r.dial("pager")
	c.initialize(nil)
	var ids []string // oldest first
	for _, p := range []string{"zero", "one", "two"} {
		id := c.startThread(nil)
		c.startTurn(id, p)
		c.next("turn/completed", func(m *wmsg) bool { return m.Method == "turn/completed" && strings.Contains(string(m.Params), id) })
		ids = append(ids, id)
	}
	list := func(params map[string]any) appproto.ThreadListResponse {
		t.Helper()
		var page appproto.ThreadListResponse
		if err := pointer(c.call(appproto.MethodThreadList, params).Result, "", &page); err != nil {
			t.Fatal(err)
		}
		return page
	}
	only := func(page appproto.ThreadListResponse, want ...string) {
		t.Helper()
		var got []string
		for _, th := range page.Data {
			got = append(got, th.ID)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("page %v, want %v", got, want)
		}
	}
	p1 := list(map[string]any{"limit": 1})
	only(p1, ids[2])
	if p1.NextCursor == nil || p1.BackwardsCursor == nil {
		t.Fatalf("first page's cursors: %+v", p1)
	}
	p2 := list(map[string]any{"limit": 1, "cursor": *p1.NextCursor})
	only(p2, ids[1])
	// Another sort key or direction continues from the same position.
	only(list(map[string]any{"limit": 5, "cursor": *p1.NextCursor, "sortKey": "updated_at"}), ids[1], ids[0])
	only(list(map[string]any{"limit": 5, "cursor": *p2.NextCursor, "sortDirection": "asc"}), ids[2])
	// The backwards cursor includes the page's first thread.
	only(list(map[string]any{"limit": 5, "cursor": *p1.BackwardsCursor}), ids[2], ids[1], ids[0])
	// A thread that leaves the listing does not end the paging.
	c.call(appproto.MethodThreadArchive, map[string]any{"threadId": ids[1]})
	only(list(map[string]any{"limit": 1, "cursor": *p2.NextCursor}), ids[0])
	c.call(appproto.MethodThreadArchive, map[string]any{"threadId": ids[2]})
	only(list(map[string]any{"limit": 1, "cursor": *p1.NextCursor}), ids[0])
	if empty := list(map[string]any{"cursor": *p1.NextCursor, "sortDirection": "asc", "searchTerm": "none such"}); empty.BackwardsCursor != nil {
		t.Fatalf("an empty page has a backwards cursor: %+v", empty)
	}
	for _, bad := range []string{"not-a-cursor", "", "2026-12-02T03:57:09Z|nope"} {
		err := c.callErr(appproto.MethodThreadList, map[string]any{"cursor": bad})
		if err.Code != -32600 || err.Message != "invalid cursor: "+bad {
			t.Fatalf("cursor %q: %d %q", bad, err.Code, err.Message)
		}
	}
}

// The text limit of turn/start and turn/steer is Codex 0.169's,
// 1,048,576 characters: 100,001 (refused once) is accepted, and the
// refusal carries Codex's message and data.
func TestTextLimitIsCodexs(t *testing.T) {
	e := newEnv(t, agenttest.Options{}, Config{})
	c := e.dial("big")
	// The 2 MB request takes seconds to decode under -race, and more than
	// wait beside a CPU burner (go test -race -count=5 failed so).
	c.patience = time.Minute
	c.initialize(nil)
	thread := c.startThread(nil)
	c.startTurn(thread, strings.Repeat("é", 100_001))
	c.note("turn/completed")
	err := c.callErr(appproto.MethodTurnStart, map[string]any{"threadId": thread, "input": text(strings.Repeat("é", 1_048_577))})
	if err.Code != -32602 || err.Message != "Input exceeds the maximum length of 1048576 characters." ||
		string(err.Data) != `{"input_error_code":"input_too_large","max_chars":1048576,"actual_chars":1048577}` {
		t.Fatalf("over the limit: %+v %s", err, err.Data)
	}
}

// stallModel stalls a request until the core gives it up (a steer aborts
// the stream) unless it already carries the steered input, which it
// answers at once.
type stallModel struct{}

func (stallModel) Stream(ctx context.Context, req *prompt.Request, onRetry func(prompt.Event)) (prompt.Stream, error) {
	body, err := json.Marshal(req.Input)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(string(body), "steered") {
		return stalledStream{ctx}, nil
	}
	return (&echoModel{}).Stream(ctx, req, onRetry)
}

type stalledStream struct{ ctx context.Context }

func (s stalledStream) Next() (prompt.Event, error) {
	<-s.ctx.Done()
	return prompt.Event{}, s.ctx.Err()
}

func (s stalledStream) Close() error { return nil }

// A turn/steer sent the moment turn/start has answered lands in that
// turn: in Codex the turn is active as soon as turn/start answers. Many
// rounds, so that a window between the answer and the turn's start shows.
func TestSteerRightAfterTurnStartAnswers(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	st, err := store.Open(context.Background(), home, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := core.New(core.Config{
		Settings:  agent.Settings{Model: "mock-model", ModelProvider: "mock", Cwd: cwd, Approval: agent.ApprovalNever, Sandbox: agent.SandboxPolicy{Mode: agent.SandboxReadOnly}},
		CodexHome: home, Providers: map[string]*core.Provider{"mock": {Name: "mock", Client: stallModel{}}},
		ExecDialer: func(ctx context.Context) (*execclient.Client, error) {
			return nil, errors.New("no exec-server in this test")
		},
		Store: st,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Core: cc, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	r := &realEnv{env: &env{t: t, srv: srv}, core: cc}
	t.Cleanup(r.close)
	c := r.dial("steerer")
	c.initialize(nil)
	for round := 0; round < 20; round++ {
		thread := c.startThread(nil)
		id := c.request(appproto.MethodTurnStart, map[string]any{"threadId": thread, "input": text("first")})
		turn := c.response(id).str(t, "/turn/id")
		steer := c.response(c.request(appproto.MethodTurnSteer, map[string]any{"threadId": thread, "expectedTurnId": turn, "input": text("steered")}))
		if steer.Error != nil || steer.str(t, "/turnId") != turn {
			t.Fatalf("round %d: steer right after turn/start: %s", round, steer)
		}
		done := c.next("turn/completed", func(m *wmsg) bool {
			return m.Method == "turn/completed" && strings.Contains(string(m.Params), thread)
		})
		if done.str(t, "/turn/id") != turn || done.str(t, "/turn/status") != "completed" {
			t.Fatalf("round %d: %s", round, done)
		}
		var read appproto.ThreadReadResponse
		if err := pointer(c.call(appproto.MethodThreadRead, map[string]any{"threadId": thread, "includeTurns": true}).Result, "", &read); err != nil {
			t.Fatal(err)
		}
		var users []string
		for _, it := range read.Thread.Turns[0].Items {
			if it.UserMessage != nil {
				users = append(users, it.UserMessage.Content[0].Text)
			}
		}
		if len(read.Thread.Turns) != 1 || strings.Join(users, ",") != "first,steered" {
			t.Fatalf("round %d: turns %d, user messages %v", round, len(read.Thread.Turns), users)
		}
	}
}

// Read state as Codex 0.169 keeps it (checked side by side): a thread
// has none before its first turn; a turn's answer makes it unread from
// that turn (thread/readState/changed before turn/completed); the
// first unread position stays while the thread is unread; marks need the
// current revision; ephemeral threads and the TUI's title job have none.
func TestReadStateAsCodex(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	r := newRealEnv(t, home, cwd)
	c := r.dial("ide")
	c.initialize(map[string]any{"experimentalApi": true})
	id := c.startThread(nil)
	readState := func(thread string) string {
		t.Helper()
		var res struct {
			ReadState jsontext.Value `json:"readState"`
		}
		if err := json.Unmarshal(c.call(appproto.MethodThreadRead, map[string]any{"threadId": thread}).Result, &res); err != nil {
			t.Fatal(err)
		}
		return string(res.ReadState)
	}
	update := func(thread, op, rev string) *wmsg {
		t.Helper()
		return c.response(c.request(appproto.MethodThreadReadStateUpdate, map[string]any{"threadId": thread,
			"operation": map[string]any{"type": op}, "expectedRevision": rev}))
	}
	if got := readState(id); got != "null" {
		t.Fatalf("before the first turn: %s", got)
	}
	if m := update(id, "read", "initial:"+id); m.Error == nil || m.Error.Code != -32600 || m.Error.Message != "thread read state unavailable" {
		t.Fatalf("mark before the first turn: %s", m)
	}
	turn := c.startTurn(id, "hello")
	changed := c.note("thread/readState/changed")
	var rs struct {
		ThreadID  string `json:"threadId"`
		ReadState struct {
			FirstUnread map[string]string `json:"firstUnread"`
			Revision    string            `json:"revision"`
		} `json:"readState"`
	}
	if err := changed.param("", &rs); err != nil {
		t.Fatal(err)
	}
	if rs.ThreadID != id || rs.ReadState.FirstUnread["type"] != "turn" || rs.ReadState.FirstUnread["turnId"] != turn || len(rs.ReadState.Revision) != 36 {
		t.Fatalf("after a turn: %s", changed)
	}
	c.note("turn/completed")
	ms := methodsOf(c.logged())
	if indexOf(ms, "thread/readState/changed") > indexOf(ms, "turn/completed") {
		t.Fatalf("order %v", ms)
	}
	first := `{"firstUnread":{"type":"turn","turnId":"` + turn + `"},"revision":"` + rs.ReadState.Revision + `"}`
	if got := readState(id); got != first {
		t.Fatalf("thread/read %s, want %s", got, first)
	}
	if got := readState(id); got != first {
		t.Fatalf("reading acknowledged the result: %s", got)
	}
	if res := c.call(appproto.MethodThreadList, map[string]any{}); !strings.Contains(string(res.Result), `"readStates":{"`+id+`":`+first+`}`) {
		t.Fatalf("thread/list %s", res)
	}
	// A stale revision is refused with the current state.
	m := update(id, "read", "initial:"+id)
	if m.Error == nil || m.Error.Code != -32600 || m.Error.Message != "read state changed" ||
		string(m.Error.Data) != `{"readState":`+first+`,"reason":"readStateConflict"}` {
		t.Fatalf("stale mark: %s", m)
	}
	// Read: the subscribers hear of it before the answer.
	m = update(id, "read", rs.ReadState.Revision)
	if m.Error != nil || !strings.Contains(string(m.Result), `"firstUnread":null`) {
		t.Fatalf("mark read: %s", m)
	}
	ms = methodsOf(c.logged())
	if ms[len(ms)-2] != "thread/readState/changed" {
		t.Fatalf("order of a mark %v", ms)
	}
	var read appproto.ThreadReadStateUpdateResponse
	if err := pointer(m.Result, "", &read); err != nil {
		t.Fatal(err)
	}
	// Unread from the start stays the first unread position after a turn.
	m = update(id, "unread", read.ReadState.Revision)
	if !strings.Contains(string(m.Result), `"firstUnread":{"type":"threadStart"}`) {
		t.Fatalf("mark unread: %s", m)
	}
	c.startTurn(id, "again")
	c.note("turn/completed")
	var last *wmsg
	for _, m := range c.logged() {
		if m.Method == "thread/readState/changed" {
			last = m
		}
	}
	if !strings.Contains(string(last.Params), `"firstUnread":{"type":"threadStart"}`) || strings.Contains(string(last.Params), read.ReadState.Revision) {
		t.Fatalf("a turn after unread: %s", last)
	}
	if m := update("nope", "read", "x"); m.Error == nil || m.Error.Code != -32602 || !strings.HasPrefix(m.Error.Message, "invalid thread id: ") {
		t.Fatalf("bad id: %s", m)
	}
	unknown := "01a23504-3073-75ca-a8d3-b88927194069"
	if m := update(unknown, "read", "x"); m.Error == nil || m.Error.Message != "thread not loaded: "+unknown {
		t.Fatalf("unknown thread: %s", m)
	}
	// Threads a user does not drive have none.
	for _, params := range []map[string]any{{"ephemeral": true}, {"threadSource": "thread_title"}} {
		other := c.startThread(params)
		c.startTurn(other, "title please")
		c.next("turn/completed", func(m *wmsg) bool { return m.Method == "turn/completed" && strings.Contains(string(m.Params), other) })
		if got := readState(other); got != "null" {
			t.Fatalf("%v: %s", params, got)
		}
		if m := update(other, "read", "initial:"+other); m.Error == nil || m.Error.Message != "thread read state unavailable" {
			t.Fatalf("%v: mark %s", params, m)
		}
		if c.has(func(m *wmsg) bool {
			return m.Method == "thread/readState/changed" && strings.Contains(string(m.Params), other)
		}) {
			t.Fatalf("%v: read state published", params)
		}
	}
}

func TestReadStateChangedNeedsExperimental(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	r := newRealEnv(t, home, cwd)
	c := r.dial("stable")
	c.initialize(nil)
	id := c.startThread(nil)
	c.startTurn(id, "hello")
	c.note("turn/completed")
	if c.has(func(m *wmsg) bool { return m.Method == "thread/readState/changed" }) {
		t.Fatal("a client without experimentalApi was sent thread/readState/changed")
	}
	res := c.call(appproto.MethodThreadRead, map[string]any{"threadId": id})
	if !strings.Contains(string(res.Result), `"firstUnread":{`) {
		t.Fatalf("the thread has no read state: %s", res.Result)
	}
}

// The items of a stored turn keep their times: after a restart,
// thread/read and thread/turns/list report the startedAtMs and
// completedAtMs the items had live (Codex's are kept in its rollout; a
// userMessage starts and completes at once).
func TestItemTimesSurviveARestart(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	first := newRealEnv(t, home, cwd)
	c := first.dial("before")
	c.initialize(nil)
	id := c.startThread(nil)
	c.startTurn(id, "hello")
	live := map[string][2]*int64{}
	for range 2 {
		n := c.note("item/completed")
		var it struct {
			ID            string `json:"id"`
			StartedAtMs   *int64 `json:"startedAtMs"`
			CompletedAtMs *int64 `json:"completedAtMs"`
		}
		if err := n.param("/item", &it); err != nil {
			t.Fatal(err)
		}
		live[it.ID] = [2]*int64{it.StartedAtMs, it.CompletedAtMs}
	}
	c.note("turn/completed")
	c.conn.Close()
	first.close()

	second := newRealEnv(t, home, cwd)
	d := second.dial("after")
	d.initialize(nil)
	var read appproto.ThreadReadResponse
	if err := pointer(d.call(appproto.MethodThreadRead, map[string]any{"threadId": id, "includeTurns": true}).Result, "", &read); err != nil {
		t.Fatal(err)
	}
	var page appproto.ThreadTurnsListResponse
	if err := pointer(d.call(appproto.MethodThreadTurnsList, map[string]any{"threadId": id}).Result, "", &page); err != nil {
		t.Fatal(err)
	}
	for _, items := range [][]appproto.ThreadItem{read.Thread.Turns[0].Items, page.Data[0].Items} {
		if len(items) != 2 {
			t.Fatalf("items %+v", items)
		}
		for _, it := range items {
			var id string
			var times appproto.ItemTimes
			switch {
			case it.UserMessage != nil:
				id, times = it.UserMessage.ID, it.UserMessage.ItemTimes
				if times.StartedAtMs == nil || times.CompletedAtMs == nil || *times.StartedAtMs != *times.CompletedAtMs {
					t.Fatalf("userMessage times %+v", times)
				}
			case it.AgentMessage != nil:
				id, times = it.AgentMessage.ID, it.AgentMessage.ItemTimes
			}
			want := live[id]
			if times.StartedAtMs == nil || times.CompletedAtMs == nil || want[0] == nil || want[1] == nil ||
				*times.StartedAtMs != *want[0] || *times.CompletedAtMs != *want[1] {
				t.Fatalf("item %s after a restart: %+v, live %v %v", id, times, want[0], want[1])
			}
		}
	}
}
