//go:build linux

package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codexd/codexd/mockmodel"
	"github.com/codexd/codexd/sandbox"
)

// longWindow is the model_context_window of the long-session test: small,
// so that a few turns fill it.
const longWindow = 32_000

// TestCodexTUILongSession is the acceptance test of compaction and review
// with the real client: the Codex 0.169 TUI (`codex --remote ws://…`),
// driven through tmux, against `codexd app-server` with a 32,000-token
// model_context_window and a mock model that refuses any request past
// that window. It checks, on screen and at the model:
//   - /compact shows the compaction, and the next prompt is answered;
//   - /review, then "Review uncommitted changes", in a git work dir with a
//     change, shows the reviewer's finding about the changed file;
//   - a 40-turn session, every turn typed in the TUI and adding about 5,000
//     tokens (a command's output), completes every turn: codexd compacts
//     by itself, no request is ever refused for its size, and no error
//     reaches the screen.
func TestCodexTUILongSession(t *testing.T) {
	codex := codexBin(t)
	tmuxBin(t)
	if !inNetns() {
		codexd := buildCodexd(t)
		t.Setenv("CODEXD_TUI_TEST_BIN", codexd)
		runInNetns(t, "TestCodexTUILongSession", 4*time.Minute)
		return
	}
	if err := loopbackUp(); err != nil {
		t.Fatalf("bringing up lo: %v", err)
	}
	st := startTUIStack(t, codex, os.Getenv("CODEXD_TUI_TEST_BIN"), mockmodel.Options{ContextWindow: longWindow},
		fmt.Sprintf("model_context_window = %d\ntool_output_token_limit = 6000\n", longWindow))
	tui, model := st.tui, st.model
	const wait = 60 * time.Second
	prompt := func(text string) {
		t.Helper()
		tui.send(true, text)
		tui.waitText(wait, "› "+text) // in the composer before Enter
		tui.send(false, "Enter")
	}
	command := func(cmd string) {
		t.Helper()
		tui.send(true, cmd)
		tui.waitText(wait, "› "+cmd)
		tui.send(false, "Enter")
	}
	// noError fails the test if the screen shows an error (the TUI marks
	// errors with ■).
	noError := func(scr, when string) {
		t.Helper()
		if strings.Contains(scr, "■") {
			t.Fatalf("an error on screen %s:\n%s", when, scr)
		}
	}

	// 1. /compact: the compaction shows, and the next prompt is answered.
	prompt("MOCK:bulk=1000 first")
	tui.waitText(wait, "tokens of output. first")
	command("/compact")
	tui.waitText(wait, "Context compacted")
	prompt("MOCK:bulk=10 after-compact")
	noError(tui.waitText(wait, "Read about 10 tokens of output. after-compact"), "after /compact")
	if n := countAnswers(model, "compaction"); n != 1 {
		t.Fatalf("%d summarisation requests after /compact, want 1", n)
	}

	// 2. /review of the uncommitted change: the finding about the changed
	// file is shown.
	command("/review")
	// The presets, the first selected: one Down selects the second.
	tui.waitText(wait, "Select a review preset", "› 1. Review against a base branch", "2. Review uncommitted changes")
	tui.send(false, "Down")
	tui.waitText(wait, "› 2. Review uncommitted changes")
	tui.send(false, "Enter")
	noError(tui.waitText(wait, ">> Code review started: current changes <<", "<< Code review finished >>",
		"[P2] Check the change to changed.txt — changed.txt:1-1"), "after /review")
	if countAnswers(model, "review:findings") != 1 {
		t.Fatal("the reviewer was never asked for its findings")
	}

	// 3. Forty turns of about 5,000 tokens each, in the TUI: six times the
	// window. Every turn completes; the compactions are codexd's own.
	before := countAnswers(model, "compaction")
	bulkBefore := countAnswers(model, "MOCK:bulk")
	const turns = 40
	for i := 1; i <= turns; i++ {
		tag := fmt.Sprintf("L%02d", i)
		prompt("MOCK:bulk=5000 " + tag)
		noError(tui.waitText(wait, "tokens of output. "+tag), "at turn "+tag)
	}
	auto := countAnswers(model, "compaction") - before
	if auto < turns*5000/longWindow {
		t.Fatalf("%d compactions in %d turns of 5,000 tokens at a %d-token window", auto, turns, longWindow)
	}
	// Each turn asked for its command once and answered once: a compaction
	// between the command's output and the next request kept the call (the
	// mock runs a command again when it finds no output for it).
	if n := countAnswers(model, "MOCK:bulk") - bulkBefore; n != 2*turns {
		t.Fatalf("%d MOCK:bulk requests in %d turns, want %d: a compaction lost a turn's command", n, turns, 2*turns)
	}
	for _, ex := range model.Requests() {
		if strings.HasPrefix(ex.Answer, "context window") {
			t.Fatalf("model request #%d was refused for its size (%s): the trigger left no headroom", ex.N, ex.Answer)
		}
	}
	t.Logf("%d turns, %d automatic compactions, %d model requests", turns, auto, len(model.Requests()))
	st.quit(wait)
}

func countAnswers(m *mockmodel.Server, answer string) int {
	n := 0
	for _, ex := range m.Requests() {
		if ex.Answer == answer {
			n++
		}
	}
	return n
}

// tuiStack is the Codex TUI in tmux, through a transcript-keeping proxy,
// on `codexd app-server`, on a mock model; the TUI's cwd is a git work
// dir with a committed file and an uncommitted change to changed.txt.
type tuiStack struct {
	t      *testing.T
	tui    *tmuxSession
	model  *mockmodel.Server
	work   string
	server *tuiServer
	// serverHome is codexd's CODEX_HOME.
	serverHome string
	// launch starts the server and the TUI on the stack's directories:
	// again after quit, to restart both on the same CODEX_HOME.
	launch func()
}

// startTUIStack starts the stack; extraConfig is added to codexd's
// config.toml. Everything is stopped when the test ends.
func startTUIStack(t *testing.T, codex, codexd string, opts mockmodel.Options, extraConfig string) *tuiStack {
	t.Helper()
	root := t.TempDir()
	work := mkdir(t, root, "work")
	tmp := mkdir(t, root, "tmp")
	home := mkdir(t, root, "home")
	gitWorkDir(t, work, home)

	opts.Logf = t.Logf
	model := mockmodel.New(opts)
	modelURL, err := model.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { model.Close() })

	sandboxMode := "workspace-write"
	if _, err := sandbox.Available(); err != nil {
		sandboxMode = "danger-full-access" // no Landlock here: do not pretend
	}
	serverHome := mkdir(t, root, "codexd-home")
	writeFile(t, filepath.Join(serverHome, "config.toml"), tuiServerConfig(modelURL, "never", sandboxMode, extraConfig))
	st := &tuiStack{t: t, model: model, work: work, serverHome: serverHome}
	st.launch = func() {
		st.server = startTUIServer(t, codexd, work, serverHome, tmp, home)
		st.tui = startRemoteTUI(t, root, work, tmp, home, codex, st.server.URL, `sandbox_mode = "`+sandboxMode+`"
approval_policy = "never"`)
	}
	st.launch()
	return st
}

// quit leaves the TUI with /quit, checks its status 0, and stops the
// server with SIGTERM, checking that it exits cleanly.
func (st *tuiStack) quit(wait time.Duration) {
	st.t.Helper()
	quitTUI(st.t, st.tui, wait)
	st.server.stop()
}

// gitWorkDir makes dir a git work tree with one commit and an uncommitted
// change to changed.txt.
func gitWorkDir(t *testing.T, dir, home string) {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed; the review test reviews a git work tree")
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(gitBin, append([]string{"-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	writeFile(t, filepath.Join(dir, "changed.txt"), "first version\n")
	run("init", "-q")
	run("add", "changed.txt")
	run("commit", "-q", "-m", "the first version")
	writeFile(t, filepath.Join(dir, "changed.txt"), "second version\n")
}
