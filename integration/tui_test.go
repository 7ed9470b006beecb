//go:build linux

package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/codexd/codexd/mockmodel"
	"github.com/codexd/codexd/sandbox"
)

// TestCodexTUIOnCodexdAppServer is the acceptance test of codexd's
// app-server and agent core with the real client: the Codex 0.169 TUI
// (`codex --remote ws://…`), driven through tmux as a person would drive it,
// against `codexd app-server --listen ws://…`, whose core asks a mock model
// (mockmodel, in this test) for its answers. It checks, on screen and at
// the model:
//   - a prompt is answered;
//   - Esc interrupts a slow answer;
//   - Enter during a turn steers it (the model sees the new input);
//   - a command that needs approval shows the approval prompt, `y` runs it,
//     and its output reaches the model;
//   - /quit leaves the TUI with status 0, and the server stops cleanly.
//
// Everything runs in a network namespace with only a loopback interface.
func TestCodexTUIOnCodexdAppServer(t *testing.T) {
	codex := codexBin(t)
	tmuxBin(t)
	if !inNetns() {
		codexd := buildCodexd(t)
		t.Setenv("CODEXD_TUI_TEST_BIN", codexd)
		runInNetns(t, "TestCodexTUIOnCodexdAppServer", 6*time.Minute)
		return
	}
	if err := loopbackUp(); err != nil {
		t.Fatalf("bringing up lo: %v", err)
	}
	codexd := os.Getenv("CODEXD_TUI_TEST_BIN")
	root := t.TempDir()
	work := mkdir(t, root, "work")
	tmp := mkdir(t, root, "tmp")
	// A home of the test's own: commands run in login shells, which must
	// not depend on (or wait for) the dotfiles of whoever runs the test.
	home := mkdir(t, root, "home")

	model := mockmodel.New(mockmodel.Options{Logf: t.Logf})
	modelURL, err := model.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()

	// codexd's CODEX_HOME: the mock as the model provider; commands ask
	// for approval when the model asks to escalate.
	sandboxMode := "workspace-write"
	if _, err := sandbox.Available(); err != nil {
		sandboxMode = "danger-full-access" // no Landlock here: do not pretend
	}
	serverHome := mkdir(t, root, "codexd-home")
	writeFile(t, filepath.Join(serverHome, "config.toml"), tuiServerConfig(modelURL, "on-request", sandboxMode, ""))
	// The TUI talks to codexd through a proxy that keeps a transcript, to
	// show on failure.
	server := startTUIServer(t, codexd, work, serverHome, tmp, home)
	proxy := server.proxy

	tui := startRemoteTUI(t, root, work, tmp, home, codex, server.URL, `sandbox_mode = "`+sandboxMode+`"`)
	const wait = 60 * time.Second

	prompt := func(text string) {
		tui.send(true, text)
		tui.waitText(wait, "› "+text) // in the composer before Enter
		tui.send(false, "Enter")
	}

	// 1. A prompt is answered.
	prompt("MOCK:hello greet the TUI")
	tui.waitText(wait, mockmodel.HelloText)

	// 1b. An @ mention: the TUI lists the match (Codex 0.169's TUI searches
	// the work dir itself, also with --remote), and the chosen path reaches
	// the model with the prompt.
	mkdir(t, work, "src/app")
	writeFile(t, filepath.Join(work, "src", "app", "server.go"), "package app\n")
	writeFile(t, filepath.Join(work, "notes.txt"), "")
	before := len(model.Requests())
	tui.send(true, "@srvgo")
	tui.waitText(wait, "server.go  src/app/") // the popup: name, then where
	tui.send(false, "Tab")
	tui.waitText(wait, "› src/app/server.go")
	tui.send(true, "MOCK:hello what is in it")
	tui.waitText(wait, "server.go MOCK:hello what is in it")
	tui.send(false, "Enter")
	tui.waitFor("the answer to the prompt with a mention", wait, func(s string) bool {
		return strings.Count(s, mockmodel.HelloText) >= 2
	})
	mention := lastAnswered(t, model, before, "MOCK:hello")
	if !strings.Contains(string(mention.Body), "src/app/server.go") {
		t.Fatalf("the model request after an @ mention lacks the chosen path: %s", mention.Body)
	}

	// 1c. A ! command runs in the thread's shell through codexd's
	// thread/shellCommand, and its output shows.
	tui.send(true, "!echo shell-$((6*7))-done")
	tui.waitText(wait, "echo shell-$((6*7))-done")
	tui.send(false, "Enter")
	tui.waitText(wait, "shell-42-done")
	if !strings.Contains(proxy.transcript(100000), `"method":"thread/shellCommand"`) {
		t.Fatal("the ! command did not go to codexd as thread/shellCommand")
	}

	// 2. Esc interrupts a slow answer, and the model's stream is dropped.
	before = len(model.Requests())
	prompt("MOCK:slow tell me a long story")
	tui.waitText(wait, "This answer is streamed")
	tui.send(false, "Escape")
	tui.waitText(wait, "Conversation interrupted")
	slow := lastAnswered(t, model, before, "MOCK:slow")
	waitClosed(t, slow.Gone(), "the slow model stream to be dropped after Esc")

	// 3. Enter during a turn steers it: the model gets the new input in the
	// same turn and answers it.
	before = len(model.Requests())
	prompt("MOCK:slow another long story")
	tui.waitText(wait, "another long story", "This answer is streamed")
	prompt("MOCK:hello steered in")
	tui.waitFor("the steered answer", wait, func(s string) bool {
		return strings.Count(s, mockmodel.HelloText) >= 3 || afterLast(s, "steered in", mockmodel.HelloText)
	})
	steered := false
	for _, ex := range model.Requests()[before:] {
		if strings.Contains(string(ex.Body), "another long story") && strings.Contains(string(ex.Body), "steered in") {
			steered = true
		}
	}
	if !steered {
		t.Fatalf("no model request after the steer carried both the turn's input and the steered input")
	}

	// 4. Approvals: ask for approval (as a person does, with /permissions),
	// then a command the model wants to run outside the sandbox.
	tui.send(true, "/permissions")
	tui.waitText(wait, "› /permissions")
	tui.send(false, "Enter")
	tui.waitText(wait, "Update Model Permissions", "› 1. Ask for approval")
	tui.send(false, "Enter")
	tui.waitText(wait, "Permission selection requested")
	before = len(model.Requests())
	prompt("MOCK:escalate")
	tui.waitText(wait, "Would you like to run the following command?", "echo approved by the user")
	tui.send(true, "y")
	tui.waitText(wait, "You approved")
	tui.waitFor("the answer quoting the approved command's output", wait, func(s string) bool {
		return strings.Contains(s, "It printed:") && strings.Contains(s, "approved by the user")
	})
	reached := false
	for _, ex := range model.Requests()[before:] {
		body := string(ex.Body)
		if strings.Contains(body, `"function_call_output"`) && strings.Contains(body, `approved by the user\n`) {
			reached = true
		}
	}
	if !reached {
		for _, ex := range model.Requests()[before:] {
			t.Logf("model request #%d (%s): %s", ex.N, ex.Answer, ex.Body)
		}
		t.Fatalf("the approved command's output never reached the model")
	}

	// 5. /quit: the TUI ends with status 0; the server stops on SIGTERM.
	quitTUI(t, tui, wait)
	server.stop()
}

// lastAnswered returns the last model request after the first skip ones
// whose answer is named answer.
func lastAnswered(t *testing.T, m *mockmodel.Server, skip int, answer string) *mockmodel.Exchange {
	t.Helper()
	var found *mockmodel.Exchange
	for _, ex := range m.Requests()[skip:] {
		if strings.HasPrefix(ex.Answer, answer) {
			found = ex
		}
	}
	if found == nil {
		t.Fatalf("the model never answered %s", answer)
	}
	return found
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// afterLast reports whether b appears after the last a in s.
func afterLast(s, a, b string) bool {
	i := strings.LastIndex(s, a)
	return i >= 0 && strings.Contains(s[i:], b)
}

// buildCodexd builds the codexd binary for the test, with the race
// detector (its compiled packages are those `go test -race` already built).
func buildCodexd(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "codexd")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := []string{"build", "-o", out}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.CommandContext(ctx, goTool(), append(args, "../cmd/codexd")...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build codexd: %v\n%s", err, b)
	}
	return out
}

func goTool() string {
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return "go"
}

func mkdir(t *testing.T, parent, name string) string {
	t.Helper()
	p := filepath.Join(parent, name)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
