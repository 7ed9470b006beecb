package appserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/core"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/execserver"
	"github.com/codexd/codexd/imageinput/imagetest"
	"github.com/codexd/codexd/store"
)

// holdModel answers like echoModel, except that a request whose input
// says HOLD streams nothing past its start until the turn is interrupted.
type holdModel struct{ echoModel }

func (m *holdModel) Stream(ctx context.Context, req *prompt.Request, onRetry func(prompt.Event)) (prompt.Stream, error) {
	for _, it := range req.Input {
		for _, c := range it.Content {
			if strings.Contains(c.Text, "HOLD") {
				return &heldStream{ctx: ctx}, nil
			}
		}
	}
	return m.echoModel.Stream(ctx, req, onRetry)
}

type heldStream struct {
	ctx     context.Context
	started bool
}

func (s *heldStream) Next() (prompt.Event, error) {
	if !s.started {
		s.started = true
		return prompt.Event{Kind: prompt.Created}, nil
	}
	<-s.ctx.Done()
	return prompt.Event{}, s.ctx.Err()
}

func (s *heldStream) Close() error { return nil }

// imageEnv is a server over a real core whose exec-server runs in
// process, with the store in a temporary CODEX_HOME.
func imageEnv(t *testing.T, cwd string) *realEnv {
	t.Helper()
	home := t.TempDir()
	st, err := store.Open(context.Background(), home, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	es, err := execserver.New(execserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { es.Close() })
	c, err := core.New(core.Config{
		Settings: agent.Settings{Model: "mock-model", ModelProvider: "mock", Cwd: cwd,
			Approval: agent.ApprovalNever, Sandbox: agent.SandboxPolicy{Mode: agent.SandboxReadOnly}},
		CodexHome: home,
		Providers: map[string]*core.Provider{"mock": {Name: "mock", Client: &holdModel{}}},
		ExecDialer: func(ctx context.Context) (*execclient.Client, error) {
			return execclient.NewInProcess(ctx, es, execclient.Options{})
		},
		Store: st,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Core: c, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	r := &realEnv{env: &env{t: t, srv: srv}, core: c}
	t.Cleanup(r.close)
	return r
}

func imageInput(text string, path string) []map[string]any {
	return []map[string]any{{"type": "text", "text": text, "text_elements": []any{}}, {"type": "localImage", "path": path}}
}

// readTurns is thread/read's turns of id.
func readTurns(t *testing.T, c *jclient, id string) []appproto.Turn {
	t.Helper()
	var r appproto.ThreadReadResponse
	if err := pointer(c.call(appproto.MethodThreadRead, map[string]any{"threadId": id, "includeTurns": true}).Result, "", &r); err != nil {
		t.Fatal(err)
	}
	return r.Thread.Turns
}

func lineCount(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte("\n"))
}

// TestLocalImageRefusedBeforeTheTurn: turn/start refuses a localImage
// whose file is missing, a directory, not a regular file, or unreadable,
// with -32600 naming the path, before anything is recorded: no turn, no
// item, no rollout line. A file that exists but is no image still runs the
// turn (the model is told in the image's place). On main the turn ran with
// codexd's replacement text.
func TestLocalImageRefusedBeforeTheTurn(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.png"), []byte("not an image"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dot.png"), imagetest.PNGHeader(1, 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	locked := filepath.Join(dir, "locked.png")
	if err := os.WriteFile(locked, imagetest.PNGHeader(1, 1), 0o000); err != nil {
		t.Fatal(err)
	}

	e := imageEnv(t, dir)
	c := e.dial("A")
	c.initialize(nil)
	started := c.call(appproto.MethodThreadStart, map[string]any{})
	id := started.str(t, "/thread/id")
	rollout := started.str(t, "/thread/path")

	// The control: an undecodable file is Codex's "could not be processed"
	// in the turn, and the turn runs.
	c.call(appproto.MethodTurnStart, map[string]any{"threadId": id, "input": imageInput("look", filepath.Join(dir, "notes.png"))})
	c.note("turn/completed")
	c.barrier()
	lines, seen := lineCount(t, rollout), len(c.logged())

	cases := []struct{ path, want string }{
		{filepath.Join(dir, "missing.png"), "local image `" + dir + "/missing.png` cannot be read: No such file or directory (os error 2)"},
		{"gone.png", "local image `gone.png` (" + dir + "/gone.png) cannot be read: No such file or directory (os error 2)"},
		{filepath.Join(dir, "sub"), "local image `" + dir + "/sub` cannot be read: it is a directory"},
		{sock, "local image `" + sock + "` cannot be read: it is not a regular file"},
		{"", "local image `` cannot be read: the path is empty"},
	}
	if os.Geteuid() != 0 {
		cases = append(cases, struct{ path, want string }{locked, "local image `" + locked + "` cannot be read: Permission denied (os error 13)"})
	} else {
		t.Log("running as root: the unreadable (mode 000) case is not checked")
	}
	for _, tc := range cases {
		err := c.callErr(appproto.MethodTurnStart, map[string]any{"threadId": id, "input": imageInput("look", tc.path)})
		if err.Code != -32600 || err.Message != tc.want {
			t.Errorf("turn/start %q: %d %q, want -32600 %q", tc.path, err.Code, err.Message, tc.want)
		}
	}
	// Among good images, one bad one refuses the whole input.
	two := append(imageInput("two", filepath.Join(dir, "dot.png")), map[string]any{"type": "localImage", "path": filepath.Join(dir, "missing.png")})
	if err := c.callErr(appproto.MethodTurnStart, map[string]any{"threadId": id, "input": two}); err.Code != -32600 {
		t.Errorf("turn/start with a good and a missing image: %d %s", err.Code, err.Message)
	}
	c.barrier()
	for _, m := range c.logged()[seen:] {
		if m.Method != "" {
			t.Fatalf("a refused turn/start sent %s", m)
		}
	}
	if turns := readTurns(t, c, id); len(turns) != 1 {
		t.Fatalf("thread/read after the refusals has %d turns, want the control's 1", len(turns))
	}
	if n := lineCount(t, rollout); n != lines {
		t.Fatalf("the rollout grew from %d to %d lines on refused input", lines, n)
	}

	// A good one still runs.
	c.call(appproto.MethodTurnStart, map[string]any{"threadId": id, "input": imageInput("fine", "dot.png")})
	c.note("turn/completed")
	if turns := readTurns(t, c, id); len(turns) != 2 {
		t.Fatalf("thread/read after a good image has %d turns, want 2", len(turns))
	}
}

// TestLocalImageRefusedSteer: turn/steer refuses a missing local image the
// same way, and the running turn takes nothing of it (on main the steer was
// accepted).
func TestLocalImageRefusedSteer(t *testing.T) {
	dir := t.TempDir()
	e := imageEnv(t, dir)
	c := e.dial("A")
	c.initialize(nil)
	id := c.startThread(nil)
	turn := c.startTurn(id, "HOLD")
	c.note("turn/started")
	missing := filepath.Join(dir, "missing.png")
	err := c.callErr(appproto.MethodTurnSteer, map[string]any{"threadId": id, "expectedTurnId": turn, "input": imageInput("and this", missing)})
	if want := "local image `" + missing + "` cannot be read: No such file or directory (os error 2)"; err.Code != -32600 || err.Message != want {
		t.Fatalf("turn/steer: %d %q, want -32600 %q", err.Code, err.Message, want)
	}
	// A steer that names another turn is refused for that first, as Codex
	// refuses it.
	err = c.callErr(appproto.MethodTurnSteer, map[string]any{"threadId": id, "expectedTurnId": "other", "input": imageInput("and this", missing)})
	if err.Code != -32600 || !strings.HasPrefix(err.Message, "expected active turn id `other`") {
		t.Fatalf("turn/steer of another turn: %d %q", err.Code, err.Message)
	}
	c.call(appproto.MethodTurnInterrupt, map[string]any{"threadId": id, "turnId": turn})
	c.note("turn/completed")
	turns := readTurns(t, c, id)
	if len(turns) != 1 {
		t.Fatalf("%d turns, want 1", len(turns))
	}
	users := 0
	for _, it := range turns[0].Items {
		if it.UserMessage != nil {
			users++
		}
	}
	if users != 1 {
		t.Fatalf("the turn has %d user messages, want the first alone: %+v", users, turns[0].Items)
	}
}

// TestLocalImageWithoutEnvironment: a thread with no environment access
// (environments: []) cannot read any local image, so turn/start refuses
// one; an inline image still goes.
func TestLocalImageWithoutEnvironment(t *testing.T) {
	dir := t.TempDir()
	png := imagetest.PNGHeader(1, 1)
	if err := os.WriteFile(filepath.Join(dir, "dot.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	e := imageEnv(t, dir)
	c := e.dial("A")
	c.initialize(map[string]any{"experimentalApi": true})
	id := c.startThread(map[string]any{"environments": []any{}})
	err := c.callErr(appproto.MethodTurnStart, map[string]any{"threadId": id, "input": imageInput("look", filepath.Join(dir, "dot.png"))})
	if want := "local image `" + dir + "/dot.png` cannot be read: the thread has no environment (environments: []); send the image inline as a data URL"; err.Code != -32600 || err.Message != want {
		t.Fatalf("turn/start: %d %q, want -32600 %q", err.Code, err.Message, want)
	}
	inline := []map[string]any{{"type": "image", "url": "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)}}
	c.call(appproto.MethodTurnStart, map[string]any{"threadId": id, "input": inline})
	c.note("turn/completed")
}
