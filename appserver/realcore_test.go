package appserver

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/core"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/store"
)

// These tests run the app-server over the real agent core and its store
// (rollouts and the SQLite index), with a model that answers every request
// with one short message: what thread/list, thread/read and
// thread/turns/list see there is what a user of `codexd app-server` sees.

// echoModel answers each request with the message "answer N".
type echoModel struct {
	mu sync.Mutex
	n  int
}

func (m *echoModel) Stream(ctx context.Context, req *prompt.Request, onRetry func(prompt.Event)) (prompt.Stream, error) {
	m.mu.Lock()
	m.n++
	id := "msg_" + strings.Repeat("x", m.n)
	m.mu.Unlock()
	msg := prompt.Item{Type: prompt.TypeMessage, ID: id, Role: "assistant"}
	done := prompt.Message("assistant", "answer")
	done.ID = id
	return &eventStream{events: []prompt.Event{
		{Kind: prompt.Created}, {Kind: prompt.ItemAdded, Item: &msg},
		{Kind: prompt.TextDelta, ItemID: id, Delta: "answer"}, {Kind: prompt.ItemDone, Item: &done},
		{Kind: prompt.Completed, Usage: &prompt.Usage{InputTokens: 10, OutputTokens: 2, TotalTokens: 12}},
	}}, nil
}

type eventStream struct{ events []prompt.Event }

func (s *eventStream) Next() (prompt.Event, error) {
	if len(s.events) == 0 {
		return prompt.Event{}, io.EOF
	}
	ev := s.events[0]
	s.events = s.events[1:]
	return ev, nil
}

func (s *eventStream) Close() error { return nil }

// realCore opens a core over the store in home.
func realCore(t *testing.T, home, cwd string) *core.Core {
	t.Helper()
	st, err := store.Open(context.Background(), home, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := core.New(core.Config{
		Settings: agent.Settings{Model: "mock-model", ModelProvider: "mock", Cwd: cwd,
			Approval: agent.ApprovalNever, Sandbox: agent.SandboxPolicy{Mode: agent.SandboxReadOnly}},
		CodexHome: home,
		Providers: map[string]*core.Provider{"mock": {Name: "mock", Client: &echoModel{}}, "other": {Name: "other", Client: &echoModel{}}},
		ExecDialer: func(ctx context.Context) (*execclient.Client, error) {
			return nil, errors.New("no exec-server in this test")
		},
		Store: st,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// realEnv is a server over a real core; close ends both (the core last).
type realEnv struct {
	*env
	core *core.Core
	once sync.Once
}

func newRealEnv(t *testing.T, home, cwd string) *realEnv {
	t.Helper()
	c := realCore(t, home, cwd)
	srv, err := New(Config{Core: c, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	r := &realEnv{env: &env{t: t, srv: srv}, core: c}
	t.Cleanup(r.close)
	return r
}

func (r *realEnv) close() {
	r.once.Do(func() {
		r.srv.Close()
		r.core.Close()
	})
}

// listIDs calls thread/list and returns the ids, in order, and the next
// cursor.
func listIDs(t *testing.T, c *jclient, params map[string]any) ([]string, *string) {
	t.Helper()
	var page appproto.ThreadListResponse
	if err := pointer(c.call(appproto.MethodThreadList, params).Result, "", &page); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(page.Data))
	for i, th := range page.Data {
		ids[i] = th.ID
	}
	return ids, page.NextCursor
}

// thread/list on the real store: keyset pages that neither repeat nor
// skip, every filter of the schema that codexd's store holds (cwd as one
// path or several, providers, search, archived), every sort key the
// schema names (the TUI sends "section_position"), and the default source
// filter (interactive sources only, as in Codex).
func TestThreadListOnTheStore(t *testing.T) {
	home, cwdA, cwdB := t.TempDir(), t.TempDir(), t.TempDir()
	r := newRealEnv(t, home, cwdA)
	c := r.dial("lister")
	c.initialize(nil)
	var ids []string // oldest first
	for i, cwd := range []string{cwdA, cwdB, cwdA, cwdB, cwdA} {
		id := c.startThread(map[string]any{"cwd": cwd})
		c.startTurn(id, "prompt "+string(rune('a'+i)))
		c.next("the turn's end", func(m *wmsg) bool {
			return m.Method == "turn/completed" && strings.Contains(string(m.Params), id)
		})
		ids = append(ids, id)
	}
	// A thread of `codexd exec` (source "exec") is not interactive.
	l, err := r.core.StartThread(bg, agent.StartOptions{Source: "exec"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Thread.Submit(bg, agent.UserInput{Input: []agent.Input{{Type: "text", Text: "from exec"}}}); err != nil {
		t.Fatal(err)
	}
	for ev := range l.Thread.Events() {
		if _, ok := ev.Msg.(agent.TurnCompleted); ok {
			break
		}
	}
	newestFirst := []string{ids[4], ids[3], ids[2], ids[1], ids[0]}

	// Pages of two, newest first, with no repeat and no gap.
	var got []string
	params := map[string]any{"limit": 2}
	for pages := 0; ; pages++ {
		page, next := listIDs(t, c, params)
		got = append(got, page...)
		if next == nil {
			break
		}
		if pages > 5 {
			t.Fatalf("endless listing: %v", got)
		}
		params = map[string]any{"limit": 2, "cursor": *next}
	}
	if strings.Join(got, " ") != strings.Join(newestFirst, " ") {
		t.Fatalf("paged listing %v, want %v", got, newestFirst)
	}
	if all, _ := listIDs(t, c, map[string]any{"sourceKinds": []string{"exec"}}); len(all) != 1 || all[0] != l.Thread.ID() {
		t.Fatalf("exec threads: %v", all)
	}
	// Ascending; a cursor is a position, which the other order continues
	// from too, as in Codex.
	asc, next := listIDs(t, c, map[string]any{"limit": 3, "sortDirection": "asc"})
	if strings.Join(asc, " ") != strings.Join(ids[:3], " ") || next == nil {
		t.Fatalf("ascending %v", asc)
	}
	if back, _ := listIDs(t, c, map[string]any{"cursor": *next}); strings.Join(back, " ") != ids[1]+" "+ids[0] {
		t.Fatalf("descending from an ascending cursor: %v", back)
	}
	// Filters.
	if got, _ := listIDs(t, c, map[string]any{"cwd": cwdB}); strings.Join(got, " ") != ids[3]+" "+ids[1] {
		t.Fatalf("cwd %s: %v", cwdB, got)
	}
	if got, _ := listIDs(t, c, map[string]any{"cwd": []string{cwdB, "/nowhere"}}); strings.Join(got, " ") != ids[3]+" "+ids[1] {
		t.Fatalf("cwd [%s]: %v", cwdB, got)
	}
	if got, _ := listIDs(t, c, map[string]any{"cwd": []string{cwdA, cwdB}}); len(got) != 5 {
		t.Fatalf("cwd [both]: %v", got)
	}
	if got, _ := listIDs(t, c, map[string]any{"searchTerm": "PROMPT C"}); len(got) != 1 || got[0] != ids[2] {
		t.Fatalf("search: %v", got)
	}
	if got, _ := listIDs(t, c, map[string]any{"modelProviders": []string{"other"}}); len(got) != 0 {
		t.Fatalf("another provider: %v", got)
	}
	// A thread of another provider: listed only when asked for, or with
	// every provider ([]); without modelProviders, Codex lists the current
	// provider's threads only.
	otherID := c.startThread(map[string]any{"cwd": cwdA, "modelProvider": "other"})
	c.startTurn(otherID, "prompt of another provider")
	c.next("the turn's end", func(m *wmsg) bool {
		return m.Method == "turn/completed" && strings.Contains(string(m.Params), otherID)
	})
	if got, _ := listIDs(t, c, map[string]any{"modelProviders": []string{"other"}}); len(got) != 1 || got[0] != otherID {
		t.Fatalf("provider other: %v", got)
	}
	if got, _ := listIDs(t, c, map[string]any{"modelProviders": []string{}}); len(got) != 6 {
		t.Fatalf("providers []: %v", got)
	}
	if got, _ := listIDs(t, c, map[string]any{}); len(got) != 5 || slices.Contains(got, otherID) {
		t.Fatalf("no modelProviders: %v", got)
	}
	for _, key := range []string{"created_at", "updated_at", "recency_at", "section_position"} {
		if got, _ := listIDs(t, c, map[string]any{"sortKey": key, "limit": 100}); len(got) != 5 {
			t.Fatalf("sortKey %s: %v", key, got)
		}
	}
	c.call(appproto.MethodThreadArchive, map[string]any{"threadId": ids[0]})
	if got, _ := listIDs(t, c, map[string]any{"archived": true}); len(got) != 1 || got[0] != ids[0] {
		t.Fatalf("archived: %v", got)
	}
	if got, _ := listIDs(t, c, map[string]any{}); len(got) != 4 {
		t.Fatalf("after archive: %v", got)
	}
}

// thread/read with includeTurns after a restart reads the rollout: the
// turns with all their items, as they were; thread/turns/list pages them;
// thread/resume then loads the thread with the same history.
func TestThreadReadAfterRestart(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	first := newRealEnv(t, home, cwd)
	c := first.dial("before")
	c.initialize(nil)
	id := c.startThread(nil)
	for _, p := range []string{"one", "two"} {
		c.startTurn(id, p)
		c.note("turn/completed")
	}
	var before appproto.ThreadReadResponse
	if err := pointer(c.call(appproto.MethodThreadRead, map[string]any{"threadId": id, "includeTurns": true}).Result, "", &before); err != nil {
		t.Fatal(err)
	}
	c.conn.Close()
	first.close()

	second := newRealEnv(t, home, cwd)
	d := second.dial("after")
	d.initialize(nil)
	read := d.call(appproto.MethodThreadRead, map[string]any{"threadId": id, "includeTurns": true})
	var after appproto.ThreadReadResponse
	if err := pointer(read.Result, "", &after); err != nil {
		t.Fatal(err)
	}
	if after.Thread.Status.Type != appproto.StatusNotLoaded || after.Thread.Preview != "one" || len(after.Thread.Turns) != 2 {
		t.Fatalf("read after restart: %s", read)
	}
	for i, turn := range after.Thread.Turns {
		was := before.Thread.Turns[i]
		if turn.ID != was.ID || turn.Status != "completed" || turn.ItemsView != appproto.ItemsFull || len(turn.Items) != 2 ||
			turn.Items[0].UserMessage == nil || turn.Items[1].AgentMessage == nil || turn.Items[1].AgentMessage.Text != "answer" {
			t.Fatalf("turn %d after restart: %+v, before %+v", i, turn, was)
		}
	}
	if got := d.call(appproto.MethodThreadRead, map[string]any{"threadId": id}); !strings.Contains(string(got.Result), `"turns":[]`) {
		t.Fatalf("read without turns: %s", got)
	}
	var page appproto.ThreadTurnsListResponse
	if err := pointer(d.call(appproto.MethodThreadTurnsList, map[string]any{"threadId": id, "limit": 1}).Result, "", &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].ID != before.Thread.Turns[1].ID || page.NextCursor == nil {
		t.Fatalf("turns/list: %+v", page)
	}
	res := d.call(appproto.MethodThreadResume, map[string]any{"threadId": id})
	var resumed appproto.ThreadResumeResponse
	if err := pointer(res.Result, "", &resumed); err != nil {
		t.Fatal(err)
	}
	if len(resumed.Thread.Turns) != 2 || resumed.Thread.Turns[0].ID != before.Thread.Turns[0].ID {
		t.Fatalf("resume after restart: %s", res)
	}
	d.startTurn(id, "three")
	d.note("turn/completed")
}
