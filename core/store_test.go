package core

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/store"
)

func withStore(home string) func(*Config) {
	return func(c *Config) {
		c.CodexHome = home
		st, err := store.Open(context.Background(), home, store.Options{})
		if err != nil {
			panic(err)
		}
		c.Store = st
	}
}

func TestRolloutRoundTrip(t *testing.T) {
	home := t.TempDir()
	m := newFakeModel(
		callResponse("call_1", "exec_command", map[string]any{"cmd": "echo stored"}),
		textResponse("msg_2", "first answer"),
		textResponse("msg_3", "after resume"),
	)
	h := newHarness(t, m, withStore(home))
	l, err := h.core.StartThread(t.Context(), agent.StartOptions{Source: "exec"})
	if err != nil {
		t.Fatal(err)
	}
	th := l.Thread
	if l.Info.Path == "" || !strings.HasPrefix(l.Info.Path, filepath.Join(home, "sessions")) {
		t.Fatalf("path %q", l.Info.Path)
	}
	h.submit(th, agent.UserInput{Input: text("remember this")})
	until(t, th, isTurnCompleted)
	if err := h.core.SetThreadName(t.Context(), th.ID(), "named"); err != nil {
		t.Fatal(err)
	}
	page, err := h.core.ListThreads(t.Context(), agent.ThreadQuery{})
	if err != nil || len(page.Threads) != 1 || page.Threads[0].ID != th.ID() || page.Threads[0].Preview != "remember this" {
		t.Fatalf("list %+v %v", page, err)
	}
	id := th.ID()
	if err := h.core.Close(); err != nil {
		t.Fatal(err)
	}

	// A new core over the same CODEX_HOME.
	h2 := newHarness(t, m, withStore(home))
	info, turns, err := h2.core.ReadThread(t.Context(), id, true)
	if err != nil || len(turns) != 1 || turns[0].Status != agent.TurnStatusCompleted || info.Name != "named" {
		t.Fatalf("read %+v %+v %v", info, turns, err)
	}
	var kinds []string
	for _, it := range turns[0].Items {
		kinds = append(kinds, fmtTypeOf(it))
	}
	if strings.Join(kinds, " ") != "*agent.UserMessage *agent.CommandExecution *agent.AgentMessage" {
		t.Fatalf("items %v", kinds)
	}
	loaded, err := h2.core.ResumeThread(t.Context(), id, agent.Overrides{})
	if err != nil || len(loaded.History) != 1 || loaded.Usage == nil {
		t.Fatalf("resume %+v %v", loaded, err)
	}
	h2.submit(loaded.Thread, agent.UserInput{Input: text("and now?")})
	until(t, loaded.Thread, isTurnCompleted)
	// The model sees the whole conversation, the command's output included.
	m.request(t)
	m.request(t)
	req := m.request(t)
	if out := lastOutput(t, req, "call_1"); !strings.Contains(out, "stored") {
		t.Fatalf("history after resume: %q", out)
	}
	var users []string
	for _, it := range req.Input {
		if it.Role == "user" && !strings.HasPrefix(it.Text(), "<environment") {
			users = append(users, it.Text())
		}
	}
	if strings.Join(users, "|") != "remember this|and now?" {
		t.Fatalf("users %q", users)
	}

	if err := h2.core.ArchiveThread(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	page, _ = h2.core.ListThreads(t.Context(), agent.ThreadQuery{})
	if len(page.Threads) != 0 {
		t.Fatalf("archived thread listed: %+v", page)
	}
	if _, err := h2.core.UnarchiveThread(t.Context(), id); err != nil {
		t.Fatal(err)
	}
}

func TestResumeUnknownThread(t *testing.T) {
	h := newHarness(t, newFakeModel(), withStore(t.TempDir()))
	_, err := h.core.ResumeThread(t.Context(), newUUIDv7(), agent.Overrides{})
	if !errors.Is(err, agent.ErrThreadNotFound) {
		t.Fatalf("err %v", err)
	}
}

func TestEphemeralThreadIsNotStored(t *testing.T) {
	home := t.TempDir()
	m := newFakeModel(textResponse("msg_1", "hi"))
	h := newHarness(t, m, withStore(home))
	l, err := h.core.StartThread(t.Context(), agent.StartOptions{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	if l.Info.Path != "" {
		t.Fatalf("path %q", l.Info.Path)
	}
	h.submit(l.Thread, agent.UserInput{Input: text("x")})
	until(t, l.Thread, isTurnCompleted)
	page, _ := h.core.ListThreads(t.Context(), agent.ThreadQuery{})
	if len(page.Threads) != 0 {
		t.Fatalf("listed %+v", page)
	}
}

// TestCrashMidTurn kills a process running a turn (SIGKILL) and checks that
// a new core shows that turn interrupted and the turn before it whole.
func TestCrashMidTurn(t *testing.T) {
	if os.Getenv("CORE_CRASH_HOME") != "" {
		crashChild(t, os.Getenv("CORE_CRASH_HOME"))
		return
	}
	home := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashMidTurn$")
	cmd.Env = append(os.Environ(), "CORE_CRASH_HOME="+home)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child: %v\n%s", err, out)
	}
	id, err := os.ReadFile(filepath.Join(home, "thread-id"))
	if err != nil {
		t.Fatalf("child output:\n%s", out)
	}
	m := newFakeModel(textResponse("msg_9", "recovered"))
	h := newHarness(t, m, withStore(home))
	l, err := h.core.ResumeThread(t.Context(), string(id), agent.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.History) != 2 || l.History[0].Status != agent.TurnStatusCompleted || l.History[1].Status != agent.TurnStatusInterrupted {
		t.Fatalf("history %+v", l.History)
	}
	if answers := len(l.History[0].Items); answers != 2 {
		t.Fatalf("first turn items %+v", l.History[0].Items)
	}
	h.submit(l.Thread, agent.UserInput{Input: text("go on")})
	evs := until(t, l.Thread, isTurnCompleted)
	if evs[len(evs)-1].Msg.(agent.TurnCompleted).Status != agent.TurnStatusCompleted {
		t.Fatalf("after recovery %s", describe(evs))
	}
}

func crashChild(t *testing.T, home string) {
	m := newFakeModel(textResponse("msg_1", "kept"), hangingText("msg_2", "lost"))
	h := newHarness(t, m, withStore(home))
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("one")})
	until(t, th, isTurnCompleted)
	h.submit(th, agent.UserInput{Input: text("two")})
	until(t, th, isDelta)
	if err := os.WriteFile(filepath.Join(home, "thread-id"), []byte(th.ID()), 0o644); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// TestTruncatedRollout cuts a rollout in the middle of its last line: the
// thread still loads, with what was whole.
func TestTruncatedRollout(t *testing.T) {
	home := t.TempDir()
	m := newFakeModel(textResponse("msg_1", "first"), textResponse("msg_2", "second"), textResponse("msg_3", "third"))
	h := newHarness(t, m, withStore(home))
	l, err := h.core.StartThread(t.Context(), agent.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.submit(l.Thread, agent.UserInput{Input: text("one")})
	until(t, l.Thread, isTurnCompleted)
	h.submit(l.Thread, agent.UserInput{Input: text("two")})
	until(t, l.Thread, isTurnCompleted)
	id, path := l.Thread.ID(), l.Info.Path
	if err := h.core.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	trimmed := strings.TrimRight(string(b), "\n")
	if err := os.WriteFile(path, []byte(trimmed[:len(trimmed)-10]), 0o644); err != nil {
		t.Fatal(err)
	}
	h2 := newHarness(t, m, withStore(home))
	loaded, err := h2.core.ResumeThread(t.Context(), id, agent.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded.History) != 2 || loaded.History[0].Status != agent.TurnStatusCompleted {
		t.Fatalf("history %+v", loaded.History)
	}
	h2.submit(loaded.Thread, agent.UserInput{Input: text("three")})
	evs := until(t, loaded.Thread, isTurnCompleted)
	if evs[len(evs)-1].Msg.(agent.TurnCompleted).Status != agent.TurnStatusCompleted {
		t.Fatalf("%s", describe(evs))
	}
}
