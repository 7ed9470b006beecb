package promptcli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/codexd/codexd/config"
)

// gitRepo makes e.dir a repository with marker.txt committed, then changed.
func gitRepo(t *testing.T, e *env) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.email=t@t", "-c", "user.name=t", "add", "marker.txt"},
		{"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = e.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(e.dir, "marker.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestExecReviewJSON(t *testing.T) {
	e := newEnv(t)
	gitRepo(t, e)
	last := filepath.Join(t.TempDir(), "last.txt")
	r := e.exec(Options{JSON: true, Review: &ReviewFlags{Uncommitted: true}, OutputLastMessage: last}, config.LoadOptions{})
	if r.code != ExitCompleted {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	evs := decodeEvents(t, r.stdout)
	// As codex exec review --json: the reviewer's command, then the review
	// as the agent message.
	want := []string{"thread.started", "turn.started", "item.started:command_execution:in_progress",
		"item.completed:command_execution:completed", "item.completed:agent_message", "turn.completed"}
	if got := sigs(evs); !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q\n%s", got, want, r.stdout)
	}
	text := evs[4].Item["text"].(string)
	if !strings.Contains(text, "Review comment:\n\n- [P2] Check the change to marker.txt — marker.txt:1-1\n  ") {
		t.Fatalf("review text %q", text)
	}
	if b, err := os.ReadFile(last); err != nil || string(b) != text {
		t.Fatalf("last message %q %v", b, err)
	}
}

func TestExecReviewHuman(t *testing.T) {
	e := newEnv(t)
	gitRepo(t, e)
	r := e.exec(Options{Review: &ReviewFlags{Commit: "HEAD", Title: "init"}}, config.LoadOptions{})
	if r.code != ExitCompleted {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "--------\nuser\ncommit HEAD: init\n") || !strings.Contains(r.stderr, "\ncodex\n") {
		t.Fatalf("stderr:\n%s", r.stderr)
	}
	if !strings.HasPrefix(r.stdout, "The mock reviewer looked at the changes") || !strings.HasSuffix(r.stdout, "\n") {
		t.Fatalf("stdout %q", r.stdout)
	}
}

func TestExecReviewUsage(t *testing.T) {
	for _, c := range []struct {
		f      ReviewFlags
		prompt string
		msg    string
	}{
		{ReviewFlags{}, "", "Specify --uncommitted, --base, --commit, or provide custom review instructions"},
		{ReviewFlags{Uncommitted: true, Base: "main"}, "", "the argument '--uncommitted' cannot be used with '--base <BRANCH>'"},
		{ReviewFlags{Base: "main", Commit: "abc"}, "", "the argument '--base <BRANCH>' cannot be used with '--commit <SHA>'"},
		{ReviewFlags{Title: "t"}, "", "--title needs --commit <SHA>"},
		{ReviewFlags{Uncommitted: true}, "and this", "custom review instructions cannot be used with --uncommitted"},
	} {
		_, err := Prepare(Options{Review: &c.f, Prompt: c.prompt})
		var ue *UsageError
		if !errors.As(err, &ue) || ue.Msg != c.msg {
			t.Errorf("%+v %q: %v, want %q", c.f, c.prompt, err, c.msg)
		}
	}
	// Custom instructions from stdin.
	j, err := Prepare(Options{Review: &ReviewFlags{}, Prompt: "-", Stdin: strings.NewReader("look at the docs\n")})
	if err != nil || j.review.Type != "custom" || j.review.Instructions != "look at the docs" {
		t.Fatalf("%+v %v", j, err)
	}
}
