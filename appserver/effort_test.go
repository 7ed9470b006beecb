package appserver

import (
	"strings"
	"testing"

	"github.com/codexd/codexd/appproto"
)

// The model, provider and effort a thread runs with across an unload, as
// Codex 0.169 decides them (checked side by side by the differential
// session unloaded-effort): a thread that is not loaded reports the effort
// its rollout last recorded; thread/resume restores the stored model,
// provider and effort unless the request names a model or a provider, and
// then all three come from the configuration, with a warning when the
// model is not the one last recorded; thread/fork takes all three from the
// configuration.
func TestEffortAcrossUnload(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	first := newRealEnv(t, home, cwd)
	c := first.dial("before")
	c.initialize(nil)
	ids := map[string]string{}
	for _, name := range []string{"plain", "model", "provider", "fork"} {
		id := c.startThread(map[string]any{"model": "stored-model"})
		c.call(appproto.MethodTurnStart, map[string]any{"threadId": id, "input": text("MOCK:hello " + name), "effort": "high"})
		c.next("turn/completed of "+name, func(m *wmsg) bool {
			return m.Method == "turn/completed" && strings.Contains(string(m.Params), id)
		})
		ids[name] = id
	}
	c.conn.Close()
	first.close()

	second := newRealEnv(t, home, cwd)
	d := second.dial("after")
	d.initialize(nil)
	var read appproto.ThreadReadResponse
	if err := pointer(d.call(appproto.MethodThreadRead, map[string]any{"threadId": ids["plain"]}).Result, "", &read); err != nil {
		t.Fatal(err)
	}
	if read.Thread.Status.Type != appproto.StatusNotLoaded || deref(read.Thread.ReasoningEffort) != "high" {
		t.Fatalf("thread/read of an unloaded thread: status %v, effort %v; want notLoaded, high", read.Thread.Status, read.Thread.ReasoningEffort)
	}
	var page appproto.ThreadListResponse
	if err := pointer(d.call(appproto.MethodThreadList, map[string]any{}).Result, "", &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 4 {
		t.Fatalf("thread/list: %d threads, want 4", len(page.Data))
	}
	for _, th := range page.Data {
		if deref(th.ReasoningEffort) != "high" {
			t.Fatalf("thread/list: %s has effort %v, want high", th.ID, th.ReasoningEffort)
		}
	}

	resume := func(name string, params map[string]any) appproto.ThreadResumeResponse {
		t.Helper()
		params["threadId"] = ids[name]
		var r appproto.ThreadResumeResponse
		if err := pointer(d.call(appproto.MethodThreadResume, params).Result, "", &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	check := func(what string, model, provider string, effort *string, r appproto.ThreadStartResponse) {
		t.Helper()
		if r.Model != model || r.ModelProvider != provider || deref(r.ReasoningEffort) != deref(effort) ||
			deref(r.Thread.ReasoningEffort) != deref(effort) {
			t.Fatalf("%s: model %q provider %q effort %v (thread %v); want %q %q %v", what, r.Model, r.ModelProvider,
				r.ReasoningEffort, r.Thread.ReasoningEffort, model, provider, effort)
		}
	}
	high := ptr("high")
	check("resume without overrides", "stored-model", "mock", high, resume("plain", map[string]any{}).ThreadStartResponse)
	check("resume with a model", "other-model", "mock", nil, resume("model", map[string]any{"model": "other-model"}).ThreadStartResponse)
	check("resume with a provider", "mock-model", "other", nil, resume("provider", map[string]any{"modelProvider": "other"}).ThreadStartResponse)
	var fork appproto.ThreadStartResponse
	if err := pointer(d.call(appproto.MethodThreadFork, map[string]any{"threadId": ids["fork"]}).Result, "", &fork); err != nil {
		t.Fatal(err)
	}
	check("fork", "mock-model", "mock", nil, fork)

	// The warnings of the two resumes that changed the model, each to its
	// thread, and none for the others.
	d.barrier()
	warned := map[string]string{}
	for _, m := range d.logged() {
		if m.Method == "warning" {
			var w appproto.WarningNotification
			if err := m.param("", &w); err != nil {
				t.Fatal(err)
			}
			warned[deref(w.ThreadID)] = w.Message
		}
	}
	want := map[string]string{
		ids["model"]:    "This session was recorded with model `stored-model` but is resuming with `other-model`. Consider switching back to `stored-model` as it may affect Codex performance.",
		ids["provider"]: "This session was recorded with model `stored-model` but is resuming with `mock-model`. Consider switching back to `stored-model` as it may affect Codex performance.",
	}
	if len(warned) != len(want) || warned[ids["model"]] != want[ids["model"]] || warned[ids["provider"]] != want[ids["provider"]] {
		t.Fatalf("warnings: %q\nwant %q", warned, want)
	}
}
