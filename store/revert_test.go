package store

import (
	"errors"
	"testing"
)

func TestRevert(t *testing.T) {
	e := newEnv(t)
	id := testID(50)
	stored(t, e, id, 0, 3, "turn")
	th, err := e.s.Read(bg, id)
	if err != nil || len(th.Turns) != 3 {
		t.Fatalf("read: %v %d", err, len(th.Turns))
	}
	second := th.Turns[1].ID
	if err := e.s.Revert(bg, id, "no-such-turn"); !errors.Is(err, ErrTurnNotFound) {
		t.Fatalf("unknown turn: %v", err)
	}
	if err := e.s.Revert(bg, id, second); err != nil {
		t.Fatal(err)
	}
	th, err = e.s.Read(bg, id)
	if err != nil || len(th.Turns) != 1 || th.Turns[0].ID == second {
		t.Fatalf("after revert: %v %+v", err, th.Turns)
	}
	// A restart reads the same prefix, and the thread resumes from it.
	e.reopen()
	th2, w, err := e.s.Resume(bg, id)
	if err != nil || len(th2.Turns) != 1 {
		t.Fatalf("resume: %v %d", err, len(th2.Turns))
	}
	if err := e.s.Revert(bg, id, th2.Turns[0].ID); !errors.Is(err, ErrThreadBusy) {
		t.Fatalf("revert under a writer: %v", err)
	}
	w.Close()
	if err := e.s.Revert(bg, id, th2.Turns[0].ID); err != nil {
		t.Fatal(err)
	}
	if th, err := e.s.Read(bg, id); err != nil || len(th.Turns) != 0 {
		t.Fatalf("reverted to nothing: %v %+v", err, th)
	}
}
