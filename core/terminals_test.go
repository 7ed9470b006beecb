package core

import (
	"testing"

	"github.com/codexd/codexd/agent"
)

// A command still running when exec_command returns is a background
// terminal until it is terminated; clean stops the rest.
func TestBackgroundTerminals(t *testing.T) {
	m := newFakeModel(
		callResponse("call_1", "exec_command", map[string]any{"cmd": "sleep 30", "yield_time_ms": 250}),
		callResponse("call_2", "exec_command", map[string]any{"cmd": "sleep 31", "yield_time_ms": 250}),
		textResponse("m1", "left running"),
	)
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("start two")})
	until(t, th, isTurnCompleted)
	term := th.(agent.Terminals)
	list := term.BackgroundTerminals()
	if len(list) != 2 || list[0].ItemID != "call_1" || list[1].ItemID != "call_2" || list[0].Cwd != h.dir ||
		list[0].Command != "sleep 30" {
		t.Fatalf("terminals %+v", list)
	}
	if term.TerminateTerminal("nope") || term.TerminateTerminal("1") {
		t.Fatal("terminated a terminal that does not exist")
	}
	if !term.TerminateTerminal(list[0].ProcessID) {
		t.Fatal("not terminated")
	}
	if got := term.BackgroundTerminals(); len(got) != 1 || got[0].ProcessID != list[1].ProcessID {
		t.Fatalf("after terminate %+v", got)
	}
	if term.TerminateTerminal(list[0].ProcessID) {
		t.Fatal("terminated twice")
	}
	term.CleanTerminals()
	if got := term.BackgroundTerminals(); len(got) != 0 {
		t.Fatalf("after clean %+v", got)
	}
}
