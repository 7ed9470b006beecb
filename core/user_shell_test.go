package core

import (
	"strings"
	"testing"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
)

// shellItems returns the userShell command items completed in evs.
// shellHarness is a harness whose login shell reads no profile of the
// machine's user (a slow ~/.profile would time the tests).
func shellHarness(t *testing.T, m *fakeModel) *harness {
	t.Setenv("HOME", t.TempDir())
	return newHarness(t, m, nil)
}

func shellItems(evs []agent.Event) (started, completed []*agent.CommandExecution, deltas string) {
	for _, ev := range evs {
		switch m := ev.Msg.(type) {
		case agent.ItemStarted:
			if c, ok := m.Item.(*agent.CommandExecution); ok && c.Source == "userShell" {
				started = append(started, c)
			}
		case agent.ItemCompleted:
			if c, ok := m.Item.(*agent.CommandExecution); ok && c.Source == "userShell" {
				completed = append(completed, c)
			}
		case agent.CommandOutputDelta:
			deltas += string(m.Data)
		}
	}
	return
}

func TestShellCommandRunsAsATurnAndReachesTheModel(t *testing.T) {
	m := newFakeModel(textResponse("m1", "ok"))
	h := shellHarness(t, m)
	th := h.start(agent.Overrides{})
	// The sandbox does not apply: the thread is read-only, the command
	// writes in its cwd all the same.
	ro := agent.SandboxPolicy{Mode: agent.SandboxReadOnly}
	h.submit(th, agent.UpdateSettings{Overrides: agent.Overrides{Sandbox: &ro}})
	turnID := h.submit(th, agent.ShellCommand{Command: "  echo out; echo err 1>&2; echo x > made.txt; exit 3  "})
	evs := until(t, th, isTurnCompleted)
	var ts agent.TurnStarted
	for _, ev := range evs {
		if m, ok := ev.Msg.(agent.TurnStarted); ok {
			ts = m
			if ev.TurnID != turnID {
				t.Fatalf("turn started %s, Submit said %s", ev.TurnID, turnID)
			}
		}
	}
	if ts.Kind != "userShell" {
		t.Fatalf("turn kind %q", ts.Kind)
	}
	started, done, deltas := shellItems(evs)
	if len(started) != 1 || len(done) != 1 {
		t.Fatalf("items started %d completed %d:%s", len(started), len(done), describe(evs))
	}
	c := done[0]
	if c.Command != "/bin/bash -lc 'echo out; echo err 1>&2; echo x > made.txt; exit 3'" && !strings.HasSuffix(c.Command, " -lc 'echo out; echo err 1>&2; echo x > made.txt; exit 3'") {
		t.Fatalf("command %q", c.Command)
	}
	if c.Status != agent.ItemStatusFailed || c.ExitCode == nil || *c.ExitCode != 3 || c.Output == nil || *c.Output != "out\nerr\n" && *c.Output != "err\nout\n" {
		t.Fatalf("completed item %+v", c)
	}
	if !strings.Contains(deltas, "out\n") || !strings.Contains(deltas, "err\n") {
		t.Fatalf("deltas %q", deltas)
	}
	if c.Cwd != h.dir {
		t.Fatalf("cwd %q, want %q", c.Cwd, h.dir)
	}
	for _, ev := range evs {
		if tc, ok := ev.Msg.(agent.TurnCompleted); ok && tc.Status != agent.TurnStatusCompleted {
			t.Fatalf("turn status %s", tc.Status)
		}
	}

	// The next turn's request carries the command and its output, in
	// Codex's record, before the user's message.
	h.submit(th, agent.UserInput{Input: text("what happened?")})
	req := m.request(t)
	until(t, th, isTurnCompleted)
	var rec string
	for i, it := range req.Input {
		if it.Type == prompt.TypeMessage && it.Role == "user" && strings.HasPrefix(it.Text(), "<user_shell_command>") {
			rec = it.Text()
			if next := req.Input[len(req.Input)-1].Text(); i == len(req.Input)-1 || next != "what happened?" {
				t.Fatalf("record is not before the user's message: last input %q", next)
			}
		}
	}
	want := "<user_shell_command>\n<command>\necho out; echo err 1>&2; echo x > made.txt; exit 3\n</command>\n<result>\nExit code: 3\nDuration: "
	if !strings.HasPrefix(rec, want) || !strings.HasSuffix(rec, " seconds\nOutput:\n"+*c.Output+"\n</result>\n</user_shell_command>") {
		t.Fatalf("record %q", rec)
	}
}

func TestShellCommandTimeout(t *testing.T) {
	h := shellHarness(t, newFakeModel())
	th := h.start(agent.Overrides{})
	h.submit(th, agent.ShellCommand{Command: "echo partial; sleep 30", Timeout: 300 * time.Millisecond})
	_, done, _ := shellItems(until(t, th, isTurnCompleted))
	if len(done) != 1 {
		t.Fatal("no completed item")
	}
	c := done[0]
	if *c.ExitCode != -1 || c.Status != agent.ItemStatusFailed || c.Duration != 0 {
		t.Fatalf("item %+v", c)
	}
	if !strings.HasPrefix(*c.Output, `execution error: Sandbox(Timeout { output: ExecToolCallOutput { exit_code: 124, stdout: StreamOutput { text: "partial\n", truncated_after_lines: None }`) ||
		!strings.HasSuffix(*c.Output, "timed_out: true } })") {
		t.Fatalf("output %q", *c.Output)
	}
}

func TestShellCommandInterrupted(t *testing.T) {
	h := shellHarness(t, newFakeModel())
	th := h.start(agent.Overrides{})
	h.submit(th, agent.ShellCommand{Command: "echo go; sleep 30"})
	until(t, th, func(ev agent.Event) bool { _, ok := ev.Msg.(agent.CommandOutputDelta); return ok })
	h.submit(th, agent.Interrupt{})
	evs := until(t, th, isTurnCompleted)
	_, done, _ := shellItems(evs)
	if len(done) != 1 || *done[0].Output != abortedByUser || *done[0].ExitCode != -1 {
		t.Fatalf("items %s", describe(evs))
	}
	if tc := evs[len(evs)-1].Msg.(agent.TurnCompleted); tc.Status != agent.TurnStatusInterrupted {
		t.Fatalf("status %s", tc.Status)
	}
}

func TestShellCommandBesideARunningTurn(t *testing.T) {
	gate := make(chan struct{})
	m := newFakeModel(fakeResponse{events: append(textEvents("m1", "done"), completed(1, 1)), gate: gate}, textResponse("m2", "next"))
	h := shellHarness(t, m)
	th := h.start(agent.Overrides{})
	turnID := h.submit(th, agent.UserInput{Input: text("hold")})
	m.request(t)
	if got := h.submit(th, agent.ShellCommand{Command: "echo beside"}); got != turnID {
		t.Fatalf("shell command joined %s, the running turn is %s", got, turnID)
	}
	evs := until(t, th, func(ev agent.Event) bool {
		c, ok := ev.Msg.(agent.ItemCompleted)
		_, cmd := c.Item.(*agent.CommandExecution)
		return ok && cmd
	})
	if evs[len(evs)-1].TurnID != turnID {
		t.Fatalf("item of turn %s", evs[len(evs)-1].TurnID)
	}
	close(gate)
	until(t, th, isTurnCompleted)
	h.submit(th, agent.UserInput{Input: text("again")})
	req := m.request(t)
	until(t, th, isTurnCompleted)
	found := false
	for _, it := range req.Input {
		if strings.Contains(it.Text(), "<command>\necho beside\n</command>") {
			found = true
		}
	}
	if !found {
		t.Fatal("the command beside the turn never reached the model")
	}
}

func TestShellCommandEmpty(t *testing.T) {
	h := shellHarness(t, newFakeModel())
	th := h.start(agent.Overrides{})
	if _, err := th.Submit(t.Context(), agent.ShellCommand{Command: " \n"}); err != agent.ErrEmptyInput {
		t.Fatalf("err %v", err)
	}
}

func TestRustDebugString(t *testing.T) {
	for in, want := range map[string]string{"a\nb": `"a\nb"`, `q"'\`: `"q\"'\\"`, "\x01é": `"\u{1}é"`} {
		if got := rustDebugString(in); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}
