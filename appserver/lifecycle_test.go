package appserver

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
)

// An empty turnId is Codex's start-up interrupt: it is answered {} as soon
// as it is submitted, on an idle thread as on a running turn (which it
// interrupts), so that it never holds one of the connection's request
// slots. Before, it was recorded as waiting for a turn "" that never ends:
// after MaxInbound of them every request of the connection got -32001.
func TestStartupInterruptIsAnsweredAtOnce(t *testing.T) {
	gate := agenttest.NewGate()
	e := newEnv(t, agenttest.Options{Turn: blockedTurn(gate)}, Config{MaxInbound: 4})
	c := e.dial("startup-interrupt")
	c.initialize(nil)
	thread := c.startThread(nil)
	// More than the connection's request slots, each answered.
	for range 6 {
		if res := c.call(appproto.MethodTurnInterrupt, map[string]any{"threadId": thread, "turnId": ""}); string(res.Result) != "{}" {
			t.Fatalf("idle start-up interrupt: %s", res)
		}
	}
	turn := c.startTurn(thread, "slow")
	c.note("item/agentMessage/delta")
	if res := c.call(appproto.MethodTurnInterrupt, map[string]any{"threadId": thread, "turnId": ""}); string(res.Result) != "{}" {
		t.Fatalf("start-up interrupt of a running turn: %s", res)
	}
	done := c.note("turn/completed")
	if done.str(t, "/turn/id") != turn || done.str(t, "/turn/status") != "interrupted" {
		t.Fatalf("turn/completed: %s", done)
	}
	// The connection still has its slots.
	c.call(appproto.MethodModelList, map[string]any{})
	gate.Open()
}

// thread/resume needs the thread's rollout, as in Codex 0.169, even when
// the thread is loaded: a thread with no user message yet, or an
// ephemeral one, has none, and resume of it (from its own client or
// another) is refused with -32600 "no rollout found for thread id X".
// Once a turn has been written it resumes. Before, codexd subscribed the
// client to the fresh thread.
func TestResumeOfAThreadWithoutRolloutIsRefused(t *testing.T) {
	r := newRealEnv(t, t.TempDir(), t.TempDir())
	a, b := r.dial("owner"), r.dial("other")
	a.initialize(nil)
	b.initialize(nil)
	fresh := a.startThread(nil)
	want := "no rollout found for thread id " + fresh
	for _, c := range []*jclient{a, b} {
		for _, params := range []map[string]any{{"threadId": fresh}, {"threadId": fresh, "model": "other-model"}} {
			if err := c.callErr(appproto.MethodThreadResume, params); err.Code != -32600 || err.Message != want {
				t.Fatalf("resume %v of a thread without a user message: %+v", params, err)
			}
		}
	}
	eph := a.startThread(map[string]any{"ephemeral": true})
	a.startTurn(eph, "in memory only")
	a.next("the ephemeral turn's end", func(m *wmsg) bool {
		return m.Method == "turn/completed" && strings.Contains(string(m.Params), eph)
	})
	if err := b.callErr(appproto.MethodThreadResume, map[string]any{"threadId": eph}); err.Code != -32600 || err.Message != "no rollout found for thread id "+eph {
		t.Fatalf("resume of an ephemeral thread: %+v", err)
	}

	// With a turn written, the other client resumes and is subscribed.
	a.startTurn(fresh, "now it has a rollout")
	a.next("the turn's end", func(m *wmsg) bool {
		return m.Method == "turn/completed" && strings.Contains(string(m.Params), fresh)
	})
	res := b.call(appproto.MethodThreadResume, map[string]any{"threadId": fresh})
	if got := res.str(t, "/thread/id"); got != fresh {
		t.Fatalf("resume after a turn: %s", res)
	}
	a.startTurn(fresh, "seen by both")
	b.next("the second turn's start, on the resumed client", func(m *wmsg) bool {
		return m.Method == "turn/started" && strings.Contains(string(m.Params), fresh)
	})
}

// A fork needs its source's rollout, as in Codex 0.169: a thread with no
// user message yet (or an ephemeral one) has none, and thread/fork of it is
// refused with Codex's error, ephemeral fork or not. Before, the fork was
// answered as a stored thread (ephemeral: false) but nothing of it was
// ever written, so after a restart thread/resume said "no rollout found".
func TestForkOfAThreadWithoutRolloutIsRefused(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	r := newRealEnv(t, home, cwd)
	c := r.dial("fork")
	c.initialize(nil)
	fresh := c.startThread(nil)
	want := "no rollout found for thread id " + fresh
	for _, ephemeral := range []bool{false, true} {
		if err := c.callErr(appproto.MethodThreadFork, map[string]any{"threadId": fresh, "ephemeral": ephemeral}); err.Code != -32600 || err.Message != want {
			t.Fatalf("fork (ephemeral %v) of a thread without a user message: %+v", ephemeral, err)
		}
	}
	eph := c.startThread(map[string]any{"ephemeral": true})
	c.startTurn(eph, "in memory only")
	c.note("turn/completed")
	if err := c.callErr(appproto.MethodThreadFork, map[string]any{"threadId": eph}); err.Code != -32600 || err.Message != "no rollout found for thread id "+eph {
		t.Fatalf("fork of an ephemeral thread: %+v", err)
	}

	// A fork that is answered as stored is there after a restart.
	c.startTurn(fresh, "now it has a rollout")
	c.next("the turn's end", func(m *wmsg) bool {
		return m.Method == "turn/completed" && strings.Contains(string(m.Params), fresh)
	})
	fork := c.call(appproto.MethodThreadFork, map[string]any{"threadId": fresh})
	forkID := fork.str(t, "/thread/id")
	if !strings.Contains(string(fork.Result), `"ephemeral":false`) {
		t.Fatalf("fork: %s", fork)
	}
	c.conn.Close()
	r.close()
	again := newRealEnv(t, home, cwd)
	d := again.dial("after")
	d.initialize(nil)
	res := d.call(appproto.MethodThreadResume, map[string]any{"threadId": forkID})
	var resumed appproto.ThreadResumeResponse
	if err := pointer(res.Result, "", &resumed); err != nil {
		t.Fatal(err)
	}
	if len(resumed.Thread.Turns) != 1 || resumed.Thread.ForkedFromID == nil || *resumed.Thread.ForkedFromID != fresh {
		t.Fatalf("the fork after a restart: %s", res)
	}
}

// A fork of a thread that is not loaded keeps the thread's own settings
// (its cwd and sandbox), not the server's defaults; the request's
// overrides still win. Before, it took the server's default cwd and
// sandbox.
func TestForkOfAnUnloadedThreadKeepsItsSettings(t *testing.T) {
	home, serverCwd, threadCwd := t.TempDir(), t.TempDir(), t.TempDir()
	r := newRealEnv(t, home, serverCwd)
	c := r.dial("before")
	c.initialize(nil)
	id := c.startThread(map[string]any{"cwd": threadCwd, "sandbox": "workspace-write", "approvalPolicy": "on-request"})
	c.startTurn(id, "hello")
	c.note("turn/completed")
	c.conn.Close()
	r.close()

	again := newRealEnv(t, home, serverCwd)
	d := again.dial("after")
	d.initialize(nil)
	check := func(what string, m *wmsg, cwd, sandbox, approval string) {
		t.Helper()
		var resp appproto.ThreadStartResponse
		if err := pointer(m.Result, "", &resp); err != nil {
			t.Fatal(err)
		}
		if resp.Cwd != cwd || resp.Sandbox.Type != sandbox || resp.ApprovalPolicy.Policy != approval || resp.Thread.Cwd != cwd {
			t.Fatalf("%s: cwd %q sandbox %q approval %q, want %q %q %q", what, resp.Cwd, resp.Sandbox.Type, resp.ApprovalPolicy.Policy, cwd, sandbox, approval)
		}
	}
	fork := d.call(appproto.MethodThreadFork, map[string]any{"threadId": id})
	check("fork", fork, threadCwd, appproto.SandboxWorkspaceWrite, "on-request")
	// Overrides apply on top of the thread's settings.
	other := t.TempDir()
	check("fork with a cwd", d.call(appproto.MethodThreadFork, map[string]any{"threadId": id, "cwd": other}), other, appproto.SandboxWorkspaceWrite, "on-request")
	// An ephemeral fork too, with the thread's history.
	eph := d.call(appproto.MethodThreadFork, map[string]any{"threadId": id, "ephemeral": true})
	check("ephemeral fork", eph, threadCwd, appproto.SandboxWorkspaceWrite, "on-request")
	if !strings.Contains(string(eph.Result), `"ephemeral":true`) || !strings.Contains(string(eph.Result), `"text":"hello"`) {
		t.Fatalf("ephemeral fork: %s", eph)
	}
	// And the fork keeps them after a restart.
	forkID := fork.str(t, "/thread/id")
	d.conn.Close()
	again.close()
	third := newRealEnv(t, home, serverCwd)
	e := third.dial("third")
	e.initialize(nil)
	check("the fork resumed", e.call(appproto.MethodThreadResume, map[string]any{"threadId": forkID}), threadCwd, appproto.SandboxWorkspaceWrite, "on-request")
}

// A cwd from a client is checked before anything is stored: a NUL byte is
// refused with the error of Codex's fs/* methods, a relative cwd is taken
// from the server's default cwd (Codex resolves it against its own), and
// every cwd is stored cleaned. This holds for thread/start, thread/fork,
// thread/resume, turn/start and thread/settings/update. Before, a NUL byte
// or a relative path was stored as given, and every later command of the
// thread failed.
func TestClientCwdIsValidated(t *testing.T) {
	home, serverCwd := t.TempDir(), t.TempDir()
	r := newRealEnv(t, home, serverCwd)
	c := r.dial("cwd")
	c.initialize(map[string]any{"experimentalApi": true})
	nul := func(method string, params map[string]any) {
		t.Helper()
		if err := c.callErr(method, params); err.Code != -32600 || err.Message != "file name contained an unexpected NUL byte" {
			t.Fatalf("%s with a NUL in its cwd: %+v", method, err)
		}
	}
	cwdOf := func(m *wmsg) string {
		t.Helper()
		return m.str(t, "/cwd")
	}
	nul(appproto.MethodThreadStart, map[string]any{"cwd": serverCwd + "/a\x00b"})
	for in, want := range map[string]string{
		"rel/dir":                 serverCwd + "/rel/dir",
		".":                       serverCwd,
		"":                        serverCwd,
		serverCwd + "/x/../y/":    serverCwd + "/y",
		"/" + serverCwd + "//z/.": serverCwd + "/z",
	} {
		if got := cwdOf(c.call(appproto.MethodThreadStart, map[string]any{"cwd": in})); got != want {
			t.Fatalf("thread/start cwd %q: %q, want %q", in, got, want)
		}
	}
	id := c.startThread(nil)
	input := text("hello")
	nul(appproto.MethodTurnStart, map[string]any{"threadId": id, "input": input, "cwd": "/x\x00"})
	nul(appproto.MethodThreadSettingsUpdate, map[string]any{"threadId": id, "cwd": "\x00"})
	nul(appproto.MethodThreadResume, map[string]any{"threadId": id, "cwd": "/\x00"})
	c.call(appproto.MethodTurnStart, map[string]any{"threadId": id, "input": input, "cwd": "rel"})
	c.note("turn/completed")
	if got := r.srv.thread(id).th.Settings().Cwd; got != serverCwd+"/rel" {
		t.Fatalf("after turn/start cwd rel: %q", got)
	}
	if got := c.note("thread/settings/updated").str(t, "/threadSettings/cwd"); got != serverCwd+"/rel" {
		t.Fatalf("thread/settings/updated of turn/start's cwd: %q", got)
	}
	c.call(appproto.MethodThreadSettingsUpdate, map[string]any{"threadId": id, "cwd": "rel2"})
	if got := c.note("thread/settings/updated").str(t, "/threadSettings/cwd"); got != serverCwd+"/rel2" {
		t.Fatalf("thread/settings/updated cwd %q", got)
	}
	nul(appproto.MethodThreadFork, map[string]any{"threadId": id, "cwd": "a\x00"})
	if got := cwdOf(c.call(appproto.MethodThreadFork, map[string]any{"threadId": id, "cwd": "rel3"})); got != serverCwd+"/rel3" {
		t.Fatalf("thread/fork cwd rel3: %q", got)
	}
}

// clientCwd either refuses a cwd or returns an absolute, clean path with
// no NUL byte.
func FuzzClientCwd(f *testing.F) {
	for _, s := range []string{"", ".", "..", "rel/dir", "/a/../b", "//x//y/", "/a\x00b", "../../../../etc", "~"} {
		f.Add(s)
	}
	srv, err := New(Config{Core: agenttest.New(agenttest.Options{}), Logger: discardLogger()})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Close() })
	f.Fuzz(func(t *testing.T, in string) {
		got, err := srv.clientCwd(&in)
		switch {
		case err != nil:
			if !strings.Contains(in, "\x00") {
				t.Fatalf("%q refused: %v", in, err)
			}
		case got == nil:
			if in != "" {
				t.Fatalf("%q: no cwd", in)
			}
		case !filepath.IsAbs(*got) || filepath.Clean(*got) != *got || strings.Contains(*got, "\x00"):
			t.Fatalf("%q stored as %q", in, *got)
		}
	})
}

// thread/archive from a second server on the same CODEX_HOME leaves a
// thread the first one has loaded where it is, with an error that says
// why; the first server's clients go on. Before, the second server moved
// the rollout under the first one.
func TestArchiveOfAThreadAnotherServerHolds(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	first := newRealEnv(t, home, cwd)
	a := first.dial("first")
	a.initialize(nil)
	id := a.startThread(nil)
	a.startTurn(id, "hello")
	a.note("turn/completed")
	second := newRealEnv(t, home, cwd)
	b := second.dial("second")
	b.initialize(nil)
	for _, method := range []string{appproto.MethodThreadArchive, appproto.MethodThreadUnarchive} {
		err := b.callErr(method, map[string]any{"threadId": id})
		if err.Code != -32603 || !strings.Contains(err.Message, "another process") {
			t.Fatalf("%s of a thread another server holds: %+v", method, err)
		}
	}
	a.startTurn(id, "still mine")
	a.note("turn/completed")
	if got, _ := listIDs(t, a, map[string]any{"archived": true}); len(got) != 0 {
		t.Fatalf("archived: %v", got)
	}
}

// A thread with no subscriber and no running turn is unloaded once it has
// been so for Config.IdleUnload (Codex's THREAD_UNLOADING_DELAY, 30
// minutes): every connection gets thread/status/changed notLoaded and then
// thread/closed, and neither the server nor the core keeps it. A thread
// with a subscriber, or with a running turn, stays. Before, every thread
// stayed loaded for the life of the server.
func TestIdleThreadsAreUnloaded(t *testing.T) {
	gate := agenttest.NewGate()
	core := agenttest.New(agenttest.Options{Turn: func(tr *agenttest.Turn) {
		if in := tr.Input(); len(in) > 0 && in[0].Text == "hold" && tr.Wait(gate) != nil {
			return
		}
		agenttest.DefaultTurn(tr)
	}})
	e := newEnvWith(t, core, Config{IdleUnload: time.Millisecond})
	obs := e.dial("observer")
	obs.initialize(nil)
	kept := obs.startThread(nil) // its subscriber stays
	a := e.dial("client")
	a.initialize(nil)
	const n = 300
	idle := map[string]bool{}
	for i := range n {
		id := a.startThread(nil)
		idle[id] = true
		if i%10 == 0 {
			a.startTurn(id, "x")
			a.next("the turn's end", func(m *wmsg) bool {
				return m.Method == "turn/completed" && strings.Contains(string(m.Params), id)
			})
		}
	}
	busy := a.startThread(nil)
	a.startTurn(busy, "hold")
	a.note("turn/started")
	if got := len(e.srv.loadedThreads()); got != n+2 {
		t.Fatalf("%d threads loaded, want %d", got, n+2)
	}
	a.conn.Close() // the client goes: its threads have no subscriber left

	closed := func() string {
		t.Helper()
		m := obs.note("thread/closed")
		id := m.str(t, "/threadId")
		// notLoaded came first.
		for _, m := range obs.logged() {
			if m.Method == "thread/closed" && strings.Contains(string(m.Params), id) {
				t.Fatalf("thread/closed of %s before its notLoaded", id)
			}
			if m.Method == "thread/status/changed" && strings.Contains(string(m.Params), id) &&
				strings.Contains(string(m.Params), `"notLoaded"`) {
				break
			}
		}
		return id
	}
	for len(idle) > 0 {
		id := closed()
		if !idle[id] {
			t.Fatalf("thread/closed for %s (kept %s, busy %s)", id, kept, busy)
		}
		delete(idle, id)
	}
	loaded := func() []string {
		t.Helper()
		var r appproto.ThreadLoadedListResponse
		if err := pointer(obs.call(appproto.MethodThreadLoadedList, map[string]any{}).Result, "", &r); err != nil {
			t.Fatal(err)
		}
		return r.Data
	}
	if got := loaded(); strings.Join(got, " ") != kept+" "+busy {
		t.Fatalf("loaded after the idle ones went: %v, want %s %s", got, kept, busy)
	}
	// The running turn ends: then its thread goes too.
	gate.Open()
	if id := closed(); id != busy {
		t.Fatalf("closed %s, want %s", id, busy)
	}
	if got := loaded(); len(got) != 1 || got[0] != kept {
		t.Fatalf("loaded: %v, want %s", got, kept)
	}
	if core.Thread(busy) != nil {
		t.Fatal("the core still holds an unloaded thread")
	}
	// An unloaded thread is resumed from the core as usual.
	obs.call(appproto.MethodThreadResume, map[string]any{"threadId": busy})
	if got := len(e.srv.loadedThreads()); got != 2 {
		t.Fatalf("%d loaded after a resume", got)
	}
}

// A thread/resume that arrives while an idle thread is shutting down waits
// for it to be gone, then loads it afresh: the client gets a live,
// subscribed thread, never the one that is closing.
func TestResumeWhileAnIdleThreadCloses(t *testing.T) {
	core := newGatedCore(agenttest.Options{})
	e := newEnvWith(t, core, Config{IdleUnload: time.Millisecond})
	c := e.dial("resumer")
	c.initialize(nil)
	held := make(chan struct{}, 1)
	core.hold(func(ev agent.Event) bool {
		_, ok := ev.Msg.(agent.ShutdownComplete)
		if ok {
			select {
			case held <- struct{}{}:
			default:
			}
		}
		return ok
	})
	id := c.startThread(nil)
	c.call(appproto.MethodThreadUnsubscribe, map[string]any{"threadId": id})
	<-held // idle: the core was told to shut it down; its end is held
	rid := c.request(appproto.MethodThreadResume, map[string]any{"threadId": id})
	c.barrier()
	if c.has(func(m *wmsg) bool { return m.Method == "" && string(m.ID) == rid }) {
		t.Fatal("thread/resume was answered with the thread that is closing")
	}
	core.release()
	c.note("thread/closed")
	if res := c.response(rid); res.Error != nil {
		t.Fatalf("resume: %s", res)
	}
	th := e.srv.thread(id)
	if th == nil {
		t.Fatal("the resumed thread is not loaded")
	}
	th.mu.Lock()
	subscribed := len(th.st.subscribers) == 1 && !th.st.unloaded
	th.mu.Unlock()
	if !subscribed {
		t.Fatal("the resumed thread is not live and subscribed")
	}
}
