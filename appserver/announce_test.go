package appserver

import (
	"strings"
	"testing"
	"time"

	"github.com/codexd/codexd/appproto"
)

// A handler that answers and then announces to every connection
// (thread/unarchive's thread/unarchived) must have the announcement on
// its caller's connection before anything a later request of that caller
// sends. A client that resumes the thread the moment unarchive answers
// got the resume's warning first when the server was slow to announce
// (a fresh-clone CI run of the differential session resume-model-warning
// saw it); Codex sends them in request order. The hook holds the
// unarchive handler between its caller's part and the rest, and the
// resume runs to its answer meanwhile.
func TestAnnouncementPrecedesTheNextRequest(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	r := newRealEnv(t, home, cwd)
	c := r.dial("client")
	c.initialize(nil)
	id := c.startThread(nil)
	c.call(appproto.MethodTurnStart, map[string]any{"threadId": id, "input": text("MOCK:hello")})
	c.next("turn/completed", func(m *wmsg) bool { return m.Method == "turn/completed" })
	c.call(appproto.MethodThreadArchive, map[string]any{"threadId": id})

	held, release := make(chan struct{}), make(chan struct{})
	hook := func(method string) {
		if method != "thread/unarchived" { // (the archive may still be finishing)
			return
		}
		close(held)
		select {
		case <-release:
		case <-time.After(wait):
		}
	}
	r.srv.announceHook.Store(&hook)
	unarchive := c.request(appproto.MethodThreadUnarchive, map[string]any{"threadId": id})
	select {
	case <-held:
	case <-time.After(wait):
		t.Fatal("thread/unarchive never reached its announcement")
	}
	if m := c.response(unarchive); m.Error != nil {
		t.Fatalf("thread/unarchive: %+v", *m.Error)
	}
	// Resume away from the recorded model, so that the resume warns.
	if m := c.call(appproto.MethodThreadResume, map[string]any{"threadId": id, "model": "other-model"}); m.Error != nil {
		t.Fatalf("thread/resume: %+v", *m.Error)
	}
	r.srv.announceHook.Store(nil)
	close(release)
	c.next("thread/unarchived", func(m *wmsg) bool { return m.Method == "thread/unarchived" })

	var order []string
	for _, m := range c.logged() {
		switch {
		case m.Method == "thread/unarchived":
			order = append(order, m.Method)
		case m.Method == "warning" && strings.Contains(string(m.Params), "recorded with model"):
			order = append(order, "the resume's warning")
		}
	}
	if strings.Join(order, ", ") != "thread/unarchived, the resume's warning" {
		t.Fatalf("order: %v", order)
	}
}
