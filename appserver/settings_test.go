package appserver

import (
	"strings"
	"testing"

	"github.com/codexd/codexd/appproto"
)

// A turn's overrides become the thread's settings, as in Codex 0.169: a
// real change is announced with thread/settings/updated just before that
// turn's turn/started, to the subscribers with experimentalApi only; the
// same overrides again, a turn without overrides and a
// thread/settings/update that changes nothing send nothing. Before,
// turn/start overrides sent nothing (and thread/read kept the old effort),
// and every thread/settings/update sent it, to every subscriber.
func TestTurnOverridesUpdateTheThreadSettings(t *testing.T) {
	r := newRealEnv(t, t.TempDir(), t.TempDir())
	exp, plain := r.dial("experimental"), r.dial("plain")
	exp.initialize(map[string]any{"experimentalApi": true})
	plain.initialize(nil)
	thread := exp.startThread(nil)
	join(exp, plain, thread)

	// turn runs one turn from c with the given overrides and returns the
	// methods exp got for it, in order, up to turn/completed.
	turn := func(c *jclient, overrides map[string]any) []string {
		t.Helper()
		params := map[string]any{"threadId": thread, "input": text("go")}
		for k, v := range overrides {
			params[k] = v
		}
		c.call(appproto.MethodTurnStart, params)
		for _, cl := range []*jclient{exp, plain} {
			cl.next("turn/completed", func(m *wmsg) bool { return m.Method == "turn/completed" })
		}
		exp.barrier()
		got := methodsOf(exp.logged())
		exp.mu.Lock()
		exp.queue, exp.log = nil, nil
		exp.mu.Unlock()
		return got
	}
	settingsNotes := func(methods []string) (n int) {
		for _, m := range methods {
			if m == "thread/settings/updated" {
				n++
			}
		}
		return n
	}

	overrides := map[string]any{"model": "other-model", "effort": "high", "approvalPolicy": "on-request"}
	got := turn(exp, overrides)
	if settingsNotes(got) != 1 || indexOf(got, "thread/settings/updated") > indexOf(got, "turn/started") {
		t.Fatalf("a turn with new overrides: want one thread/settings/updated before turn/started, got %v", got)
	}
	if got := turn(exp, overrides); settingsNotes(got) != 0 {
		t.Fatalf("the same overrides again: %v", got)
	}
	if got := turn(exp, nil); settingsNotes(got) != 0 {
		t.Fatalf("a turn without overrides: %v", got)
	}
	// The other client's overrides are the thread's too.
	if got := turn(plain, map[string]any{"effort": "medium"}); settingsNotes(got) != 1 {
		t.Fatalf("the other client's override: %v", got)
	}
	if eff := exp.call(appproto.MethodThreadRead, map[string]any{"threadId": thread}).str(t, "/thread/reasoningEffort"); eff != "medium" {
		t.Fatalf("thread/read after the overrides: effort %q", eff)
	}

	// thread/settings/update: only a change is announced.
	exp.call(appproto.MethodThreadSettingsUpdate, map[string]any{"threadId": thread, "effort": "medium"})
	exp.call(appproto.MethodThreadSettingsUpdate, map[string]any{"threadId": thread, "effort": "low"})
	note := exp.note("thread/settings/updated")
	if !strings.Contains(string(note.Params), `"effort":"low"`) {
		t.Fatalf("thread/settings/updated: %s", note)
	}
	exp.barrier()
	if n := settingsNotes(methodsOf(exp.logged())); n != 1 {
		t.Fatalf("%d thread/settings/updated for one change", n)
	}
	plain.barrier()
	for _, m := range plain.logged() {
		if m.Method == "thread/settings/updated" {
			t.Fatalf("a client without experimentalApi got %s", m)
		}
	}
}
