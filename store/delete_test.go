package store

import (
	"errors"
	"os"
	"testing"

	"github.com/codexd/codexd/agent"
)

func TestDelete(t *testing.T) {
	e := newEnv(t)
	live, archived := testID(40), testID(41)
	livePath := stored(t, e, live, 0, 2, "delete me")
	stored(t, e, archived, 1, 1, "archived, then deleted")
	if err := e.s.Archive(bg, archived); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{live, archived} {
		if err := e.s.Delete(bg, id); err != nil {
			t.Fatalf("Delete(%s): %v", id, err)
		}
		if _, err := e.s.Info(bg, id); !errors.Is(err, agent.ErrThreadNotFound) {
			t.Fatalf("Info after Delete: %v", err)
		}
		if err := e.s.Delete(bg, id); !errors.Is(err, agent.ErrThreadNotFound) {
			t.Fatalf("second Delete: %v", err)
		}
	}
	if _, err := os.Stat(livePath); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("rollout still there: %v", err)
	}
	if ids := listIDs(t, e, agent.ThreadQuery{}); len(ids) != 0 {
		t.Fatalf("listed after delete: %v", ids)
	}
	if ids := listIDs(t, e, agent.ThreadQuery{Archived: true}); len(ids) != 0 {
		t.Fatalf("archived listing after delete: %v", ids)
	}
	// A restart (and its rescan) does not bring them back.
	e.reopen()
	if ids := listIDs(t, e, agent.ThreadQuery{}); len(ids) != 0 {
		t.Fatalf("listed after restart: %v", ids)
	}
}

func TestDeleteRefusesAnOpenWriter(t *testing.T) {
	e := newEnv(t)
	id := testID(42)
	w, err := e.s.Create(bg, meta(id, 0))
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, w, turnRecords("t1", 10, "one")...)
	if err := e.s.Delete(bg, id); !errors.Is(err, ErrThreadBusy) {
		t.Fatalf("Delete under a writer: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.s.Delete(bg, id); err != nil {
		t.Fatal(err)
	}
}
