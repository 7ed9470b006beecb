package core

import (
	"testing"

	"github.com/codexd/codexd/agent"
)

// TestUserMessageStartsAndCompletesAtOnce: a user message is whole when it
// is shown, so its item starts and completes at one instant, and a stored
// turn reports startedAtMs == completedAtMs for it, as Codex's does. The two
// events were stamped one after the other: beside a CPU burner a full
// `-race -count=5 ./appserver/...` saw the restarted thread's times a
// millisecond apart (TestItemTimesSurviveARestart).
func TestUserMessageStartsAndCompletesAtOnce(t *testing.T) {
	m := newFakeModel(textResponse("msg_1", "hi"))
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("Say hello")})
	evs := until(t, th, isTurnCompleted)
	var started, completed []agent.Event
	for _, ev := range evs {
		switch msg := ev.Msg.(type) {
		case agent.ItemStarted:
			if _, ok := msg.Item.(*agent.UserMessage); ok {
				started = append(started, ev)
			}
		case agent.ItemCompleted:
			if _, ok := msg.Item.(*agent.UserMessage); ok {
				completed = append(completed, ev)
			}
		}
	}
	if len(started) != 1 || len(completed) != 1 {
		t.Fatalf("user message events: %d started, %d completed", len(started), len(completed))
	}
	if !started[0].Time.Equal(completed[0].Time) {
		t.Errorf("the user message started at %v and completed at %v", started[0].Time, completed[0].Time)
	}
}
