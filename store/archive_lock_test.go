package store

import (
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
)

// Archive and Unarchive respect the lock of a writer in another process,
// as Resume and SetName do: the rollout is not moved under it (its
// appends would land in archived_sessions/ and its clients never hear of
// the archive), and the error says why. Before, both moved it.
func TestArchiveRespectsAnotherProcessLock(t *testing.T) {
	home, id := t.TempDir(), testID(90)
	// A real second process holds the thread's writer.
	cmd, lines, wg := runAppender(t, "mid", home, id)
	waitFor(t, lines, func(l string) bool { return l == "mid" })
	s, err := Open(bg, home, Options{Logger: slog.New(&logSink{})})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	path := s.findFile(id)
	if path == "" || isArchivedPath(home, path) {
		t.Fatalf("the appender's rollout: %q", path)
	}
	busy := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrThreadBusy) || !strings.Contains(err.Error(), "another process") {
			t.Fatalf("%s of a thread another process writes: %v", what, err)
		}
	}
	busy("Archive", s.Archive(bg, id))
	if got := s.findFile(id); got != path {
		t.Fatalf("the rollout moved to %q", got)
	}
	// The appender exits (its lock goes with it): now it can be archived.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	wg.Wait()
	if err := s.Archive(bg, id); err != nil {
		t.Fatal(err)
	}
	archived := s.findFile(id)
	if !isArchivedPath(home, archived) || filepath.Base(archived) != filepath.Base(path) {
		t.Fatalf("archived to %q", archived)
	}

	// Another store on the same home (another process) resumes the
	// archived thread: Unarchive is refused, then works once it lets go.
	other, err := Open(bg, home, Options{Logger: slog.New(&logSink{})})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, w, err := other.Resume(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Unarchive(bg, id)
	busy("Unarchive", err)
	if got := s.findFile(id); got != archived {
		t.Fatalf("the rollout moved to %q", got)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	info, err := s.Unarchive(bg, id)
	if err != nil || info.Archived || s.findFile(id) != path {
		t.Fatalf("Unarchive: %+v %v (at %q)", info, err, s.findFile(id))
	}
	// And the unarchive's own record is there, readable.
	if th, err := s.Read(bg, id); err != nil || len(th.Turns) != midTurns+1 {
		t.Fatalf("after unarchive: %v", err)
	}
}
