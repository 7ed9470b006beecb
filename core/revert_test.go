package core

import (
	"errors"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
)

// After RevertThread and a resume, the model's next request holds only
// the turns before the reverted one.
func TestRevertThreadKeepsThePrefixForTheModel(t *testing.T) {
	m := newFakeModel(textResponse("msg_1", "first answer"), textResponse("msg_2", "second answer"), textResponse("msg_3", "third answer"))
	h := newHarness(t, m, withStore(t.TempDir()))
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("one")})
	until(t, th, isTurnCompleted)
	second := h.submit(th, agent.UserInput{Input: text("two")})
	until(t, th, isTurnCompleted)
	if err := h.core.RevertThread(t.Context(), th.ID(), "no-such-turn"); !errors.Is(err, ErrTurnNotFound) {
		t.Fatalf("unknown turn: %v", err)
	}
	l, err := h.core.ResumeThread(t.Context(), th.ID(), agent.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.core.RevertThread(t.Context(), l.Thread.ID(), second); err != nil {
		t.Fatal(err)
	}
	l, err = h.core.ResumeThread(t.Context(), th.ID(), agent.Overrides{})
	if err != nil || len(l.History) != 1 {
		t.Fatalf("resume after revert: %v, %d turns", err, len(l.History))
	}
	h.submit(l.Thread, agent.UserInput{Input: text("three")})
	until(t, l.Thread, isTurnCompleted)
	m.request(t)
	m.request(t)
	req := m.request(t)
	var texts []string
	for _, it := range req.Input {
		if it.Role == "user" && !strings.HasPrefix(it.Text(), "<environment") || it.Role == "assistant" {
			texts = append(texts, it.Text())
		}
	}
	if got := strings.Join(texts, "|"); got != "one|first answer|three" {
		t.Fatalf("history sent after the revert %q", got)
	}
	// Deleting it leaves nothing to resume.
	if err := h.core.DeleteThread(t.Context(), th.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.core.ResumeThread(t.Context(), th.ID(), agent.Overrides{}); !errors.Is(err, agent.ErrThreadNotFound) {
		t.Fatalf("resume after delete: %v", err)
	}
}
