package core

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
)

func hangingText(id, first string) fakeResponse {
	evs := textEvents(id, first)
	return fakeResponse{events: evs[:3], hang: true} // created, added, one delta
}

func isDelta(ev agent.Event) bool { _, ok := ev.Msg.(agent.AgentMessageDelta); return ok }

func TestInterruptDuringModelStream(t *testing.T) {
	m := newFakeModel(hangingText("msg_1", "Hel"), textResponse("msg_2", "again"))
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	if _, err := th.Submit(t.Context(), agent.Interrupt{}); !errors.Is(err, agent.ErrNoActiveTurn) {
		t.Fatalf("interrupt while idle: %v", err)
	}
	turnID := h.submit(th, agent.UserInput{Input: text("slow")})
	until(t, th, isDelta)
	var mm *agent.TurnMismatchError
	if _, err := th.Submit(t.Context(), agent.Interrupt{TurnID: "other"}); !errors.As(err, &mm) || mm.Active != turnID {
		t.Fatalf("wrong turn id: %v", err)
	}
	h.submit(th, agent.Interrupt{TurnID: turnID})
	evs := until(t, th, isTurnCompleted)
	done := evs[len(evs)-1].Msg.(agent.TurnCompleted)
	if done.Status != agent.TurnStatusInterrupted || done.Error != nil || evs[len(evs)-1].TurnID != turnID {
		t.Fatalf("turn %+v", done)
	}
	if n := len(itemsCompleted[*agent.AgentMessage](evs)); n != 0 {
		t.Fatalf("the partial message completed: %s", describe(evs))
	}
	if _, err := th.Submit(t.Context(), agent.Interrupt{TurnID: turnID}); !errors.Is(err, agent.ErrNoActiveTurn) {
		t.Fatalf("second interrupt: %v", err)
	}
	// The thread goes on.
	h.submit(th, agent.UserInput{Input: text("again")})
	evs = until(t, th, isTurnCompleted)
	if evs[len(evs)-1].Msg.(agent.TurnCompleted).Status != agent.TurnStatusCompleted {
		t.Fatalf("next turn %s", describe(evs))
	}
}

func TestInterruptBeforeTheModelAnswers(t *testing.T) {
	gate := make(chan struct{})
	defer close(gate)
	m := newFakeModel(fakeResponse{events: textEvents("msg_1", "x"), gate: gate})
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	id := h.submit(th, agent.UserInput{Input: text("go")})
	h.submit(th, agent.Interrupt{TurnID: id})
	evs := until(t, th, isTurnCompleted)
	if _, ok := evs[0].Msg.(agent.TurnStarted); !ok || evs[len(evs)-1].Msg.(agent.TurnCompleted).Status != agent.TurnStatusInterrupted {
		t.Fatalf("events %s", describe(evs))
	}
}

func TestInterruptDuringCommandStopsIt(t *testing.T) {
	m := newFakeModel(callResponse("call_1", "exec_command", map[string]any{"cmd": "echo $$ > pid; echo started; exec sleep 30", "yield_time_ms": 30000}))
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	id := h.submit(th, agent.UserInput{Input: text("go")})
	until(t, th, func(ev agent.Event) bool { _, ok := ev.Msg.(agent.CommandOutputDelta); return ok })
	b, err := os.ReadFile(filepath.Join(h.dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	h.submit(th, agent.Interrupt{TurnID: id})
	evs := until(t, th, isTurnCompleted)
	if evs[len(evs)-1].Msg.(agent.TurnCompleted).Status != agent.TurnStatusInterrupted {
		t.Fatalf("events %s", describe(evs))
	}
	// The command was killed: the pid is gone (or a zombie being reaped).
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil && !isZombie(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still running", pid)
		}
		time.Sleep(20 * time.Millisecond) // polling an external process; no event to wait on
	}
}

func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] == "Z"
}

func TestInterruptDuringApproval(t *testing.T) {
	m := newFakeModel(callResponse("call_1", "exec_command", map[string]any{"cmd": "touch nope"}))
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{Approval: policy(agent.ApprovalUntrusted)})
	id := h.submit(th, agent.UserInput{Input: text("go")})
	until(t, th, isApproval)
	h.submit(th, agent.Interrupt{TurnID: id})
	evs := until(t, th, isTurnCompleted)
	if evs[len(evs)-1].Msg.(agent.TurnCompleted).Status != agent.TurnStatusInterrupted {
		t.Fatalf("events %s", describe(evs))
	}
	if n := len(itemsCompleted[*agent.CommandExecution](evs)); n != 0 {
		t.Fatalf("the command item completed: %s", describe(evs))
	}
	if _, err := th.Submit(t.Context(), agent.ExecDecision{CallID: "call_1", Decision: agent.Accept}); !errors.Is(err, agent.ErrUnknownCall) {
		t.Fatalf("late decision: %v", err)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "nope")); err == nil {
		t.Fatal("the command ran")
	}
}

func TestSteerJoinsTheActiveTurn(t *testing.T) {
	m := newFakeModel(hangingText("msg_1", "Par"), textResponse("msg_2", "steered answer"))
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	if _, err := th.Submit(t.Context(), agent.Steer{ExpectedTurnID: "x", Input: text("s")}); !errors.Is(err, agent.ErrNoActiveTurn) {
		t.Fatalf("steer while idle: %v", err)
	}
	id := h.submit(th, agent.UserInput{Input: text("first")})
	until(t, th, isDelta)
	var mm *agent.TurnMismatchError
	if _, err := th.Submit(t.Context(), agent.Steer{ExpectedTurnID: "other", Input: text("s")}); !errors.As(err, &mm) || mm.Expected != "other" || mm.Active != id {
		t.Fatalf("mismatch: %v", err)
	}
	if _, err := th.Submit(t.Context(), agent.Steer{ExpectedTurnID: id}); !errors.Is(err, agent.ErrEmptyInput) {
		t.Fatalf("empty: %v", err)
	}
	got, err := th.Submit(t.Context(), agent.Steer{ExpectedTurnID: id, Input: text("second"), ClientID: "c2"})
	if err != nil || got != id {
		t.Fatalf("steer: %q %v", got, err)
	}
	evs := until(t, th, isTurnCompleted)
	if evs[len(evs)-1].TurnID != id || evs[len(evs)-1].Msg.(agent.TurnCompleted).Status != agent.TurnStatusCompleted {
		t.Fatalf("events %s", describe(evs))
	}
	users := itemsCompleted[*agent.UserMessage](evs)
	if len(users) != 1 || users[0].ClientID != "c2" {
		t.Fatalf("steered message %s", describe(evs))
	}
	for _, a := range itemsCompleted[*agent.AgentMessage](evs) {
		if a.ID == "msg_1" {
			t.Fatal("the cut-short message completed")
		}
	}
	m.request(t)
	req := m.request(t)
	var texts []string
	for _, it := range req.Input {
		if it.Type == prompt.TypeMessage && it.Role != "developer" && !strings.HasPrefix(it.Text(), "<environment") {
			texts = append(texts, it.Role+":"+it.Text())
		}
	}
	if strings.Join(texts, " ") != "user:first user:second" {
		t.Fatalf("second request %q", texts)
	}
}

func TestUserInputDuringATurnJoinsIt(t *testing.T) {
	m := newFakeModel(hangingText("msg_1", "Par"), textResponse("msg_2", "both"))
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	id := h.submit(th, agent.UserInput{Input: text("first")})
	until(t, th, isDelta)
	if got := h.submit(th, agent.UserInput{Input: text("more")}); got != id {
		t.Fatalf("joined turn %q, want %q", got, id)
	}
	evs := until(t, th, isTurnCompleted)
	if n := len(msgs[agent.TurnStarted](evs)); n != 0 {
		t.Fatalf("a second turn started: %s", describe(evs))
	}
}

func TestUpdateSettingsAppliesToTheNextTurn(t *testing.T) {
	m := newFakeModel(textResponse("msg_1", "a"))
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	model := "other-model"
	h.submit(th, agent.UpdateSettings{Overrides: agent.Overrides{Model: &model}})
	evs := until(t, th, func(ev agent.Event) bool { _, ok := ev.Msg.(agent.SettingsUpdated); return ok })
	if s := evs[len(evs)-1].Msg.(agent.SettingsUpdated).Settings; s.Model != model || th.Settings().Model != model {
		t.Fatalf("settings %+v", s)
	}
	h.submit(th, agent.UserInput{Input: text("hi")})
	until(t, th, isTurnCompleted)
	if r := m.request(t); r.Model != model {
		t.Fatalf("request model %q", r.Model)
	}
}

func TestShutdown(t *testing.T) {
	m := newFakeModel(hangingText("msg_1", "x"))
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("go")})
	until(t, th, isDelta)
	h.submit(th, agent.Shutdown{})
	var evs []agent.Event
	for ev := range th.Events() {
		evs = append(evs, ev)
	}
	n := len(evs)
	if n < 2 {
		t.Fatalf("events %s", describe(evs))
	}
	if _, ok := evs[n-1].Msg.(agent.ShutdownComplete); !ok {
		t.Fatalf("last event %s", describeEvent(evs[n-1]))
	}
	if tc, ok := evs[n-2].Msg.(agent.TurnCompleted); !ok || tc.Status != agent.TurnStatusInterrupted {
		t.Fatalf("events %s", describe(evs))
	}
	if _, err := th.Submit(t.Context(), agent.UserInput{Input: text("x")}); !errors.Is(err, agent.ErrThreadClosed) {
		t.Fatalf("submit after shutdown: %v", err)
	}
}

func TestStreamRetriesThenSucceeds(t *testing.T) {
	cut := &prompt.Error{Message: "stream disconnected before completion: idle timeout", Info: "responseStreamDisconnected", Stream: true}
	m := newFakeModel(
		fakeResponse{events: textEvents("msg_1", "par")[:3], err: cut},
		textResponse("msg_2", "whole"),
	)
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("go")})
	evs := until(t, th, isTurnCompleted)
	errs := msgs[agent.Error](evs)
	if len(errs) != 1 || !errs[0].WillRetry || errs[0].Err.Message != "Reconnecting... 1/2" || !strings.Contains(errs[0].Err.AdditionalDetails, "idle timeout") {
		t.Fatalf("errors %+v", errs)
	}
	if done := evs[len(evs)-1].Msg.(agent.TurnCompleted); done.Status != agent.TurnStatusCompleted || done.LastAgentMessage != "whole" {
		t.Fatalf("turn %+v", done)
	}
}

func TestStreamRetriesExhaustedFailsTheTurn(t *testing.T) {
	cut := &prompt.Error{Message: "idle timeout", Info: "responseStreamDisconnected", Stream: true}
	m := newFakeModel(fakeResponse{err: cut}, fakeResponse{err: cut}, fakeResponse{err: cut})
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("go")})
	evs := until(t, th, isTurnCompleted)
	errs := msgs[agent.Error](evs)
	if len(errs) != 3 || !errs[0].WillRetry || !errs[1].WillRetry || errs[2].WillRetry {
		t.Fatalf("errors %+v", errs)
	}
	done := evs[len(evs)-1].Msg.(agent.TurnCompleted)
	if done.Status != agent.TurnStatusFailed || done.Error.Info != "responseStreamDisconnected" || !strings.Contains(done.Error.Message, "after 2 retries") {
		t.Fatalf("turn %+v", done)
	}
}

func TestRequestRetriesAreReported(t *testing.T) {
	m := newFakeModel(fakeResponse{
		retries: []prompt.Event{{Kind: prompt.Retrying, Attempt: 1, Err: &prompt.Error{Message: "Too Many Requests", HTTPStatus: 429, Info: "usageLimitExceeded"}}},
		events:  append(textEvents("msg_1", "ok"), completed(1, 1)),
	})
	h := newHarness(t, m, func(c *Config) { c.Providers["mock"].RequestMaxRetries = 4 })
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("go")})
	evs := until(t, th, isTurnCompleted)
	errs := msgs[agent.Error](evs)
	if len(errs) != 1 || !errs[0].WillRetry || errs[0].Err.HTTPStatus != 429 || errs[0].Err.Message != "Reconnecting... 1/4" {
		t.Fatalf("errors %+v", errs)
	}
}

func TestModelHTTPErrorFailsTheTurn(t *testing.T) {
	m := newFakeModel(fakeResponse{startErr: &prompt.Error{Message: "We’re currently experiencing high demand, which may cause temporary errors.", Info: "internalServerError", HTTPStatus: 500}})
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("go")})
	evs := until(t, th, isTurnCompleted)
	n := len(evs)
	e, ok := evs[n-2].Msg.(agent.Error)
	if !ok || e.WillRetry || e.Err.Info != "internalServerError" {
		t.Fatalf("events %s", describe(evs))
	}
	if done := evs[n-1].Msg.(agent.TurnCompleted); done.Status != agent.TurnStatusFailed || done.Error.HTTPStatus != 500 {
		t.Fatalf("turn %+v", done)
	}
}

// TestSlowConsumerNeverBlocksSubmit: with nobody reading events, a turn
// that streams thousands of deltas is held back, but Submit answers and the
// interrupt takes effect; every event then arrives, in order.
func TestSlowConsumerNeverBlocksSubmit(t *testing.T) {
	deltas := make([]string, 5000)
	for i := range deltas {
		deltas[i] = "x"
	}
	evs := textEvents("msg_1", deltas...)
	m := newFakeModel(fakeResponse{events: evs[:len(evs)-1], hang: true})
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	id := h.submit(th, agent.UserInput{Input: text("flood")})
	m.request(t)
	done := make(chan error, 1)
	go func() {
		_, err := th.Submit(t.Context(), agent.Interrupt{TurnID: id})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Submit blocked on a consumer that does not read")
	}
	got := until(t, th, isTurnCompleted)
	for i, ev := range got {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d", i, ev.Seq)
		}
	}
	if got[len(got)-1].Msg.(agent.TurnCompleted).Status != agent.TurnStatusInterrupted {
		t.Fatalf("last %s", describeEvent(got[len(got)-1]))
	}
}

// TestInterruptedTurnLeavesEveryCallAnOutput: a response with two tool
// calls, interrupted while the first waits for approval. The next request
// must give each call an output (the Responses API refuses a function_call
// without one); only the call that was running got "aborted", so the
// thread could not go on.
func TestInterruptedTurnLeavesEveryCallAnOutput(t *testing.T) {
	two := callResponse("call_1", "exec_command", map[string]any{"cmd": "touch nope"})
	second := callResponse("call_2", "update_plan", map[string]any{"plan": []map[string]string{{"step": "x", "status": "pending"}}})
	two.events = append(two.events[:len(two.events)-1], second.events[1:]...) // call_1 added/done, call_2 added/done, completed
	m := newFakeModel(two, textResponse("msg_2", "next"))
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{Approval: policy(agent.ApprovalUntrusted)})
	id := h.submit(th, agent.UserInput{Input: text("go")})
	until(t, th, isApproval)
	h.submit(th, agent.Interrupt{TurnID: id})
	until(t, th, isTurnCompleted)
	h.submit(th, agent.UserInput{Input: text("again")})
	until(t, th, isTurnCompleted)
	m.request(t)
	req := m.request(t)
	for _, call := range []string{"call_1", "call_2"} {
		if out := lastOutput(t, req, call); out != "aborted" {
			t.Errorf("%s: %q", call, out)
		}
	}
}

// TestCloseReleasesThreadsShutDownButUnread: a thread shut down whose
// events nobody reads any more. Its actor is gone and it is no longer
// loaded, but its event pump still waits to deliver ShutdownComplete; Close
// must release it as it releases loaded threads. It used to wait forever
// (a goroutine and the undelivered events leaked past Close).
func TestCloseReleasesThreadsShutDownButUnread(t *testing.T) {
	h := newHarness(t, newFakeModel(), nil)
	th := h.start(agent.Overrides{})
	h.submit(th, agent.Shutdown{})
	inner := th.(*thread)
	select {
	case <-inner.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the actor did not end")
	}
	if err := h.core.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-inner.q.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the event pump of a shut-down thread outlived Close")
	}
}
