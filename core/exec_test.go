package core

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
)

func TestExecCommandRunsAndReportsOutput(t *testing.T) {
	m := newFakeModel(
		callResponse("call_1", "exec_command", map[string]any{"cmd": "echo hi; echo err 1>&2; exit 3"}),
		textResponse("msg_2", "done"),
	)
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("run it")})
	evs := until(t, th, isTurnCompleted)

	started := msgs[agent.ItemStarted](evs)
	var cmdStart *agent.CommandExecution
	for _, s := range started {
		if c, ok := s.Item.(*agent.CommandExecution); ok {
			cmdStart = c
		}
	}
	if cmdStart == nil || cmdStart.ID != "call_1" || cmdStart.Source != "unifiedExecStartup" || cmdStart.ProcessID == "" ||
		cmdStart.Command != "/bin/bash -c 'echo hi; echo err 1>&2; exit 3'" || cmdStart.Cwd != h.dir {
		t.Fatalf("command started %+v", cmdStart)
	}
	var out strings.Builder
	for _, d := range msgs[agent.CommandOutputDelta](evs) {
		if d.ItemID != "call_1" {
			t.Fatalf("delta of %s", d.ItemID)
		}
		out.Write(d.Data)
	}
	if !strings.Contains(out.String(), "hi\n") || !strings.Contains(out.String(), "err\n") {
		t.Fatalf("deltas %q", out.String())
	}
	done := itemsCompleted[*agent.CommandExecution](evs)
	if len(done) != 1 || done[0].Status != agent.ItemStatusFailed || *done[0].ExitCode != 3 || !strings.Contains(*done[0].Output, "hi") {
		t.Fatalf("command completed %+v", done)
	}

	m.request(t)
	got := lastOutput(t, m.request(t), "call_1")
	re := regexp.MustCompile(`^Chunk ID: [0-9a-f]{6}\nWall time: \d+\.\d{4} seconds\nProcess exited with code 3\nOriginal token count: \d+\nOutput:\n`)
	if !re.MatchString(got) || !strings.Contains(got, "hi\n") {
		t.Fatalf("function output %q", got)
	}
}

func TestExecCommandWorkdirAndTruncation(t *testing.T) {
	sub := "sub"
	m := newFakeModel(
		callResponse("call_1", "exec_command", map[string]any{"cmd": "pwd; seq 1 5000", "workdir": sub, "max_output_tokens": 100}),
		textResponse("msg_2", "done"),
	)
	h := newHarness(t, m, nil)
	if err := os.Mkdir(filepath.Join(h.dir, sub), 0o755); err != nil {
		t.Fatal(err)
	}
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("go")})
	until(t, th, isTurnCompleted)
	m.request(t)
	got := lastOutput(t, m.request(t), "call_1")
	if !strings.Contains(got, "Output:\nTotal output lines: 5001\n\n"+filepath.Join(h.dir, sub)+"\n") ||
		!strings.Contains(got, "tokens truncated…") || !strings.HasSuffix(got, "4999\n5000\n") {
		t.Fatalf("output %q", got)
	}
}

func TestWriteStdinContinuesARunningCommand(t *testing.T) {
	m := newFakeModel(
		callResponse("call_1", "exec_command", map[string]any{"cmd": "read line; echo got:$line; read x; echo bye", "tty": true, "yield_time_ms": 300}),
	)
	re := regexp.MustCompile(`Process running with session ID (\d+)\n`)
	step := 0
	m.next = func(req *prompt.Request) fakeResponse {
		step++
		switch step {
		case 1:
			sm := re.FindStringSubmatch(lastOutputOf(req, "call_1"))
			if sm == nil {
				return textResponse("msg_x", "no session")
			}
			return callResponse("call_2", "write_stdin", map[string]any{"session_id": json.Number(sm[1]), "chars": "abc\nzzz\n", "yield_time_ms": 5000})
		default:
			return textResponse("msg_2", "done")
		}
	}
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("go")})
	evs := until(t, th, isTurnCompleted)
	m.request(t)
	first := lastOutput(t, m.request(t), "call_1")
	if !re.MatchString(first) || strings.Contains(first, "Process exited") {
		t.Fatalf("first output %q", first)
	}
	second := lastOutput(t, m.request(t), "call_2")
	if !strings.Contains(second, "Process exited with code 0\n") || !strings.Contains(second, "got:abc") || !strings.Contains(second, "bye") {
		t.Fatalf("second output %q", second)
	}
	done := itemsCompleted[*agent.CommandExecution](evs)
	if len(done) != 1 || done[0].ID != "call_1" || *done[0].ExitCode != 0 || !strings.Contains(*done[0].Output, "got:abc") {
		t.Fatalf("completed %+v", done)
	}
	var pty strings.Builder
	for _, d := range msgs[agent.CommandOutputDelta](evs) {
		if d.Stream != "pty" || d.ItemID != "call_1" {
			t.Fatalf("delta %+v", d)
		}
		pty.Write(d.Data)
	}
	if !strings.Contains(pty.String(), "bye") {
		t.Fatalf("pty output %q", pty.String())
	}
}

func TestWriteStdinErrors(t *testing.T) {
	m := newFakeModel(
		callResponse("call_1", "write_stdin", map[string]any{"session_id": 4242, "chars": ""}),
		callResponse("call_2", "exec_command", map[string]any{"cmd": "sleep 5", "yield_time_ms": 250}),
	)
	re := regexp.MustCompile(`Process running with session ID (\d+)\n`)
	step := 0
	m.next = func(req *prompt.Request) fakeResponse {
		step++
		if step == 1 {
			sm := re.FindStringSubmatch(lastOutputOf(req, "call_2"))
			if sm != nil {
				return callResponse("call_3", "write_stdin", map[string]any{"session_id": json.Number(sm[1]), "chars": "x"})
			}
		}
		return textResponse("msg_2", "done")
	}
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("go")})
	until(t, th, isTurnCompleted)
	m.request(t)
	if got := lastOutput(t, m.request(t), "call_1"); got != "write_stdin failed: UnknownProcessId { process_id: 4242 }" {
		t.Fatalf("unknown session: %q", got)
	}
	m.request(t)
	if got := lastOutput(t, m.request(t), "call_3"); got != "write_stdin failed: StdinClosed" {
		t.Fatalf("non-tty write: %q", got)
	}
}

func lastOutputOf(req *prompt.Request, callID string) string {
	for i := len(req.Input) - 1; i >= 0; i-- {
		it := req.Input[i]
		if it.Type == prompt.TypeFunctionCallOutput && it.CallID == callID && it.Output != nil {
			return *it.Output
		}
	}
	return ""
}

// TestBackgroundProcessOutlivesItsTurn: a command still running when its
// turn ends goes on, and a later turn's write_stdin reaches it.
func TestBackgroundProcessOutlivesItsTurn(t *testing.T) {
	m := newFakeModel(
		callResponse("call_1", "exec_command", map[string]any{"cmd": "read line; echo later:$line", "tty": true, "yield_time_ms": 250}),
		textResponse("msg_1", "started"),
	)
	re := regexp.MustCompile(`Process running with session ID (\d+)\n`)
	var session string
	step := 0
	m.next = func(req *prompt.Request) fakeResponse {
		step++
		if step == 1 {
			return callResponse("call_2", "write_stdin", map[string]any{"session_id": json.Number(session), "chars": "x\n", "yield_time_ms": 5000})
		}
		return textResponse("msg_2", "done")
	}
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("start it")})
	until(t, th, isTurnCompleted)
	m.request(t)
	sm := re.FindStringSubmatch(lastOutput(t, m.request(t), "call_1"))
	if sm == nil {
		t.Fatal("no session")
	}
	session = sm[1]
	h.submit(th, agent.UserInput{Input: text("continue it")})
	evs := until(t, th, isTurnCompleted)
	m.request(t)
	out := lastOutput(t, m.request(t), "call_2")
	if !strings.Contains(out, "later:x") || !strings.Contains(out, "Process exited with code 0") {
		t.Fatalf("model got %q", out)
	}
	done := itemsCompleted[*agent.CommandExecution](evs)
	if len(done) != 1 || done[0].ID != "call_1" || *done[0].ExitCode != 0 {
		t.Fatalf("items %s", describe(evs))
	}
}
