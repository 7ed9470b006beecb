package appserver

import (
	"fmt"
	"strings"
	"testing"

	"github.com/codexd/codexd/appproto"
)

// The warning of a thread/resume that changes the model, as Codex 0.169
// decides it (checked side by side by the differential session
// resume-model-warning): it compares the model resumed with against the
// model of the thread's last turn, which a resume does not change, so a
// thread warns on every resume away from that model until a turn runs; a
// fork keeps its source's turns, and a loaded thread is not warned.
func TestResumeWarningAgainstLastTurn(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	r := newRealEnv(t, home, cwd)
	c := r.dial("client")
	c.initialize(nil)
	turn := func(id, prompt string) {
		t.Helper()
		c.call(appproto.MethodTurnStart, map[string]any{"threadId": id, "input": text("MOCK:" + prompt)})
		c.next("turn/completed of "+prompt, func(m *wmsg) bool {
			return m.Method == "turn/completed" && strings.Contains(string(m.Params), id)
		})
	}
	unload := func(id string) {
		t.Helper()
		c.call(appproto.MethodThreadArchive, map[string]any{"threadId": id})
		c.call(appproto.MethodThreadUnarchive, map[string]any{"threadId": id})
	}
	resume := func(id, model string) {
		t.Helper()
		params := map[string]any{"threadId": id}
		if model != "" {
			params["model"] = model
		}
		if m := c.call(appproto.MethodThreadResume, params); m.Error != nil {
			t.Fatalf("thread/resume %s: %+v", id, *m.Error)
		}
	}

	id := c.startThread(nil)
	turn(id, "hello one")     // on mock-model
	resume(id, "other-model") // loaded: no warning
	unload(id)
	resume(id, "other-model") // warns
	unload(id)
	resume(id, "") // other-model, as recorded: warns
	unload(id)
	resume(id, "other-model") // warns
	var fork appproto.ThreadStartResponse
	if err := pointer(c.call(appproto.MethodThreadFork, map[string]any{"threadId": id, "model": "other-model"}).Result, "", &fork); err != nil {
		t.Fatal(err)
	}
	unload(fork.Thread.ID)
	resume(fork.Thread.ID, "") // other-model, against its source's turn: warns
	turn(id, "hello two")      // on other-model
	unload(id)
	resume(id, "") // no warning
	unload(id)
	resume(id, "mock-model") // warns

	// Wait for the last warning itself (it once went out through the
	// thread's queue, after the answer, and under load came after a
	// barrier's round trip; since 52a70c7 it comes before the answer, as
	// Codex's does), then for anything queued behind it.
	c.next("the last resume's warning", func(m *wmsg) bool {
		return m.Method == "warning" && strings.Contains(string(m.Params), "is resuming with `mock-model`")
	})
	c.barrier()
	var got []string
	for _, m := range c.logged() {
		if m.Method == "warning" {
			var w appproto.WarningNotification
			if err := m.param("", &w); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(w.Message, "recorded with model") { // not the sandbox's
				got = append(got, deref(w.ThreadID)+": "+w.Message)
			}
		}
	}
	warning := func(id, recorded, model string) string {
		return fmt.Sprintf("%s: This session was recorded with model `%s` but is resuming with `%s`. "+
			"Consider switching back to `%s` as it may affect Codex performance.", id, recorded, model, recorded)
	}
	away := warning(id, "mock-model", "other-model")
	want := []string{away, away, away, warning(fork.Thread.ID, "mock-model", "other-model"), warning(id, "other-model", "mock-model")}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
