package core

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/codexd/codexd/agent"
)

// TestNotify: config.toml's notify runs at each turn's end with its
// arguments and Codex 0.169's JSON as the last one (every user message of
// the thread so far, the turn's answer); codexd ignored the key.
func TestNotify(t *testing.T) {
	dir := t.TempDir()
	// The program writes its arguments, one a line, into a FIFO the test
	// reads: each call is one writer, seen whole at its EOF.
	fifo := filepath.Join(dir, "calls")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "notify.sh")
	writeFile(t, script, "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \""+fifo+"\"\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	calls := make(chan string)
	go func() {
		for i := 0; i < 2; i++ {
			b, err := os.ReadFile(fifo)
			if err != nil {
				close(calls)
				return
			}
			calls <- string(b)
		}
	}()
	next := func() string {
		t.Helper()
		select {
		case c, ok := <-calls:
			if !ok {
				t.Fatal("reading the FIFO failed")
			}
			return c
		case <-time.After(30 * time.Second):
			t.Fatal("the notify program was not run within 30s")
		}
		return ""
	}
	m := newFakeModel(textResponse("msg_1", "first answer"), textResponse("msg_2", "second answer"))
	h := newHarness(t, m, func(c *Config) { c.Notify = []string{script, "an-arg"} })
	th := h.start(agent.Overrides{})
	t1 := h.submit(th, agent.UserInput{Input: text("one")})
	until(t, th, isTurnCompleted)
	var got [2]string
	got[0] = next()
	t2 := h.submit(th, agent.UserInput{Input: text("two")})
	until(t, th, isTurnCompleted)
	got[1] = next()

	for i, want := range []notifyPayload{
		{Type: "agent-turn-complete", ThreadID: th.ID(), TurnID: t1, InputMessages: []string{"one"}, LastAssistantMessage: ptrTo("first answer")},
		{Type: "agent-turn-complete", ThreadID: th.ID(), TurnID: t2, InputMessages: []string{"one", "two"}, LastAssistantMessage: ptrTo("second answer")},
	} {
		b := got[i]
		args := strings.SplitN(strings.TrimSuffix(b, "\n"), "\n", 2)
		if len(args) != 2 || args[0] != "an-arg" {
			t.Fatalf("call %d: arguments %q", i+1, b)
		}
		var p notifyPayload
		if err := json.Unmarshal([]byte(args[1]), &p); err != nil {
			t.Fatalf("call %d: %v in %s", i+1, err, args[1])
		}
		if p.Cwd == "" || p.Client == "" {
			t.Errorf("call %d: cwd %q client %q", i+1, p.Cwd, p.Client)
		}
		p.Cwd, p.Client = "", ""
		if !reflect.DeepEqual(p, want) {
			t.Errorf("call %d:\n got %+v\nwant %+v", i+1, args[1], want)
		}
		// Codex's member order.
		if !strings.HasPrefix(args[1], `{"type":"agent-turn-complete","thread-id":`) || !strings.Contains(args[1], `"input-messages":`) {
			t.Errorf("call %d: %s", i+1, args[1])
		}
	}
}

func ptrTo(s string) *string { return &s }
