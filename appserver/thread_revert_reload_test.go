package appserver

import (
	"strings"
	"testing"

	"github.com/codexd/codexd/appproto"
)

// A revert reloads the thread as Codex 0.169's does (side by side in
// session revert-resume): its connections see it notLoaded, then idle,
// then the reload's resume warning (the thread keeps the model of the cut
// turn, the kept turn ran on another), and only then thread/reverted; and
// the reload restores the thread's service tier, which Codex records as
// "default" when the thread had none, so a later resume answers "default"
// (after its warning, which comes first, as Codex sends it).
func TestThreadRevertReload(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	r := newRealEnv(t, home, cwd)
	c := r.dial("client")
	c.initialize(nil)
	id := c.startThread(nil)
	turn := func(params map[string]any) string {
		t.Helper()
		m := c.call(appproto.MethodTurnStart, params)
		turnID := m.str(t, "/turn/id")
		c.next("turn/completed of "+turnID, func(m *wmsg) bool {
			return m.Method == "turn/completed" && strings.Contains(string(m.Params), turnID)
		})
		return turnID
	}
	turn(map[string]any{"threadId": id, "input": text("MOCK:hello three")})
	cut := turn(map[string]any{"threadId": id, "input": text("MOCK:hello four"), "model": "other-model"})
	c.barrier()
	before := len(c.logged())
	if m := c.call(appproto.MethodThreadRevert, map[string]any{"threadId": id, "beforeTurnId": cut}); m.Error != nil {
		t.Fatalf("thread/revert: %+v", *m.Error)
	}
	c.note("thread/reverted")
	var got []string
	for _, m := range c.logged()[before:] {
		switch m.Method {
		case "thread/status/changed":
			got = append(got, m.Method+" "+m.str(t, "/status/type"))
		case "warning":
			if w := m.str(t, "/message"); strings.Contains(w, "recorded with model") {
				got = append(got, m.Method+" "+w)
			}
		case "thread/reverted":
			got = append(got, m.Method)
		}
	}
	want := []string{
		"thread/status/changed notLoaded",
		"thread/status/changed idle",
		"warning This session was recorded with model `mock-model` but is resuming with `other-model`. " +
			"Consider switching back to `mock-model` as it may affect Codex performance.",
		"thread/reverted",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("notifications of the revert:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	c.call(appproto.MethodThreadArchive, map[string]any{"threadId": id})
	c.call(appproto.MethodThreadUnarchive, map[string]any{"threadId": id})
	before = len(c.logged())
	m := c.call(appproto.MethodThreadResume, map[string]any{"threadId": id})
	// As Codex, the resume's warning comes before its answer (and status).
	got = nil
	for _, l := range c.logged()[before:] {
		switch {
		case l.Method == "warning" && strings.Contains(l.str(t, "/message"), "recorded with model"):
			got = append(got, "warning")
		case l.Method == "thread/status/changed":
			got = append(got, "thread/status/changed "+l.str(t, "/status/type"))
		case l.Method == "" && string(l.ID) == string(m.ID):
			got = append(got, "answer")
		}
	}
	if want := "warning thread/status/changed idle answer"; strings.Join(got, " ") != want {
		t.Fatalf("resume after a revert: %q, want %q", strings.Join(got, " "), want)
	}
	if tier := m.str(t, "/serviceTier"); tier != "default" {
		t.Fatalf("serviceTier after a revert: %q (%s)", tier, m.Result)
	}
	if model := m.str(t, "/model"); model != "other-model" {
		t.Fatalf("model after a revert: %q", model)
	}
}
