package core

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/execserver"
	"github.com/codexd/codexd/imageinput"
)

// TestCheckInputLocalImages: CheckInput refuses a local image its turn
// cannot read on the exec-server's machine, with the path and the reason,
// and passes what the turn itself handles (no image, a file too large, an
// exec-server it cannot reach, a steer of another turn). A path outside the
// exec-server's roots is unreadable to root as well.
func TestCheckInputLocalImages(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	srv, err := execserver.New(execserver.Config{Roots: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	m := newFakeModel(textResponse("msg_1", "ok"))
	h := newHarness(t, m, func(c *Config) {
		c.Settings.Cwd = root
		c.ExecDialer = func(ctx context.Context) (*execclient.Client, error) {
			return execclient.NewInProcess(ctx, srv, execclient.Options{})
		}
	})
	writeFile(t, filepath.Join(root, "notes.png"), "not an image")
	writeFile(t, filepath.Join(outside, "dot.png"), "x")
	th := h.start(agent.Overrides{})
	check := func(in ...agent.Input) error {
		return th.CheckInput(context.Background(), agent.UserInput{Input: in})
	}
	img := func(p string) agent.Input { return agent.Input{Type: "localImage", Path: p} }

	if err := check(agent.Input{Type: "text", Text: "hi"}, img("notes.png")); err != nil {
		t.Fatalf("an existing file: %v", err)
	}
	// Past the input limit (sparse: not read, and the turn says it is too
	// large).
	writeFile(t, filepath.Join(root, "huge.png"), "")
	if err := os.Truncate(filepath.Join(root, "huge.png"), imageinput.MaxInputBytes+1); err != nil {
		t.Fatal(err)
	}
	if err := check(img("huge.png")); err != nil {
		t.Fatalf("a file past the limit: %v", err)
	}
	for _, tc := range []struct {
		path, want string
	}{
		{filepath.Join(outside, "dot.png"), "local image `" + outside + "/dot.png` cannot be read: "},
		{"notes.png/x", "local image `notes.png/x` (" + root + "/notes.png/x) cannot be read: Not a directory (os error 20)"},
		{".", "local image `.` (" + root + ") cannot be read: it is a directory"},
	} {
		err := check(img(tc.path))
		var li *agent.LocalImageError
		if !errors.As(err, &li) || len(err.Error()) < len(tc.want) || err.Error()[:len(tc.want)] != tc.want {
			t.Errorf("%q: %v, want %s…", tc.path, err, tc.want)
		}
		t.Logf("%q: %v", tc.path, err)
	}

	// A steer of no running turn is Submit's to refuse.
	if err := th.CheckInput(context.Background(), agent.Steer{ExpectedTurnID: "t", Input: []agent.Input{img("missing.png")}}); err != nil {
		t.Fatalf("a steer of no turn: %v", err)
	}

	// An exec-server that cannot be reached is no refusal: the turn
	// reports it.
	h2 := newHarness(t, newFakeModel(), func(c *Config) {
		c.ExecDialer = func(context.Context) (*execclient.Client, error) { return nil, errors.New("down") }
	})
	th2 := h2.start(agent.Overrides{})
	if err := th2.CheckInput(context.Background(), agent.UserInput{Input: []agent.Input{img("missing.png")}}); err != nil {
		t.Fatalf("an unreachable exec-server: %v", err)
	}
}

// TestCheckInputTakesTheTurnsCwd: a relative path is taken from the cwd
// the input will be read with: the overrides' for a new turn, the running
// turn's for input that joins it (a steer, or input while a turn runs).
func TestCheckInputTakesTheTurnsCwd(t *testing.T) {
	m := newFakeModel(fakeResponse{hang: true})
	h := newHarness(t, m, nil)
	sub := filepath.Join(h.dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(sub, "a.png"), "x")
	th := h.start(agent.Overrides{})
	in := []agent.Input{{Type: "localImage", Path: "a.png"}}
	if err := th.CheckInput(context.Background(), agent.UserInput{Input: in}); err == nil {
		t.Fatal("a.png in the thread's cwd: no refusal")
	}
	if err := th.CheckInput(context.Background(), agent.UserInput{Input: in, Overrides: agent.Overrides{Cwd: &sub}}); err != nil {
		t.Fatalf("a.png in the turn's cwd: %v", err)
	}
	if th.Settings().Cwd == sub {
		t.Fatal("CheckInput applied the overrides")
	}

	turn := h.submit(th, agent.UserInput{Input: text("hold")})
	m.request(t)
	joining := agent.UserInput{Input: in, Overrides: agent.Overrides{Cwd: &sub}}
	if err := th.CheckInput(context.Background(), joining); err == nil {
		t.Fatal("input joining a turn in the thread's cwd was checked in the overrides' cwd")
	}
	if err := th.CheckInput(context.Background(), agent.Steer{ExpectedTurnID: turn, Input: in}); err == nil {
		t.Fatal("a steer of a turn in the thread's cwd: no refusal")
	}
	h.submit(th, agent.Interrupt{TurnID: turn})
	until(t, th, isTurnCompleted)
}
