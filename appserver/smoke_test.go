package appserver

import (
	"testing"

	"github.com/codexd/codexd/agent/agenttest"
)

func TestSmokeTurn(t *testing.T) {
	e := newEnv(t, agenttest.Options{}, Config{})
	c := e.dial("smoke")
	c.initialize(nil)
	thread := c.startThread(nil)
	c.note("thread/started")
	turn := c.startTurn(thread, "hello")
	done := c.note("turn/completed")
	if done.str(t, "/turn/id") != turn || done.str(t, "/turn/status") != "completed" {
		t.Fatalf("turn/completed: %s", done)
	}
	for _, m := range c.logged() {
		t.Logf("%s", m.raw)
	}
}
