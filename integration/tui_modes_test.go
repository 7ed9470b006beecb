//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codexd/codexd/mockmodel"
)

// The TUI tests of this file drive the Codex 0.169 TUI (`codex --remote`)
// in tmux, each on a `codexd app-server` of its own, through what a person
// reaches with a few keys: Esc Esc to edit an earlier prompt, Plan mode
// (Shift+Tab), and a skill named with `$`. Each checks the screen, what the
// TUI asked codexd, and what reached the model.

// modesWait bounds each wait for the screen.
const modesWait = 60 * time.Second

// modesStack is one test's TUI, server and mock model.
type modesStack struct {
	t      *testing.T
	tui    *tmuxSession
	model  *mockmodel.Server
	server *tuiServer
	home   string // codexd's CODEX_HOME
}

// startModesStack starts the mock model, codexd's app-server (its
// CODEX_HOME prepared by prep, if not nil, before the server starts) and
// the TUI, and waits for the thread's model in the status line: the TUI
// shows its composer before its thread has started.
func startModesStack(t *testing.T, codex, codexd string, prep func(home, work string)) *modesStack {
	t.Helper()
	root := t.TempDir()
	work, tmp, userHome := mkdir(t, root, "work"), mkdir(t, root, "tmp"), mkdir(t, root, "home")
	model := mockmodel.New(mockmodel.Options{Logf: t.Logf})
	modelURL, err := model.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { model.Close() })
	home := mkdir(t, root, "codexd-home")
	writeFile(t, filepath.Join(home, "config.toml"), tuiServerConfig(modelURL, "never", "danger-full-access", ""))
	if prep != nil {
		prep(home, work)
	}
	server := startTUIServer(t, codexd, work, home, tmp, userHome)
	tui := startRemoteTUI(t, root, work, tmp, userHome, codex, server.URL, "sandbox_mode = \"danger-full-access\"\napproval_policy = \"never\"")
	tui.waitText(modesWait, "mock-model")
	return &modesStack{t: t, tui: tui, model: model, server: server, home: home}
}

// prompt types text in the composer and, once it shows there, sends it.
func (st *modesStack) prompt(text string) {
	st.t.Helper()
	st.tui.send(true, text)
	st.tui.waitText(modesWait, "› "+text)
	st.tui.send(false, "Enter")
}

// answered waits until the screen shows answer after the last prompt,
// and the turn's end ("Worked for"): keys sent while a turn runs act on
// it (Esc interrupts, Enter steers), not on the composer.
func (st *modesStack) answered(prompt, answer string) string {
	st.t.Helper()
	return st.tui.waitFor("the answer to "+prompt, modesWait, func(s string) bool {
		i := strings.LastIndex(s, prompt)
		return i >= 0 && strings.Contains(s[i:], answer) && strings.Contains(s[strings.Index(s[i:], answer)+i:], "Worked for")
	})
}

// asked reports whether the TUI sent codexd a request of method.
func (st *modesStack) asked(method string) bool {
	return strings.Contains(st.server.proxy.transcript(1_000_000), `"method":"`+method+`"`)
}

// waitWire waits until codexd has sent the TUI a message holding text.
func (st *modesStack) waitWire(what, text string) {
	st.t.Helper()
	deadline := time.Now().Add(modesWait)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, line := range strings.Split(st.server.proxy.transcript(1_000_000), "\n") {
			if strings.Contains(line, " << ") && strings.Contains(line, text) {
				return
			}
		}
		if time.Now().After(deadline) {
			st.t.Fatalf("waiting for %s: codexd never sent %s", what, text)
		}
		<-tick.C
	}
}

// end quits the TUI (status 0) and stops the server (cleanly).
func (st *modesStack) end() {
	st.t.Helper()
	quitTUI(st.t, st.tui, modesWait)
	st.server.stop()
}

// inNetnsOrRerun runs the rest of test name inside a loopback-only network
// namespace: it returns true there, and false outside, where it has built
// codexd and run the test in the namespace.
func inNetnsOrRerun(t *testing.T, name string) (codex, codexd string, inside bool) {
	t.Helper()
	codex = codexBin(t)
	tmuxBin(t)
	if !inNetns() {
		t.Setenv("CODEXD_TUI_TEST_BIN", buildCodexd(t))
		runInNetns(t, name, 3*time.Minute)
		return "", "", false
	}
	if err := loopbackUp(); err != nil {
		t.Fatalf("bringing up lo: %v", err)
	}
	return codex, os.Getenv("CODEXD_TUI_TEST_BIN"), true
}

// TestCodexTUIModesEditPrompt: after two answered prompts, Esc Esc, the
// first prompt picked and edited: the TUI says the conversation was
// reverted, the edited prompt is answered, codexd was asked for the items
// (thread/items/list) and to revert (thread/revert), and the model's next
// request holds neither of the dropped turns.
func TestCodexTUIModesEditPrompt(t *testing.T) {
	codex, codexd, inside := inNetnsOrRerun(t, "TestCodexTUIModesEditPrompt")
	if !inside {
		return
	}
	st := startModesStack(t, codex, codexd, nil)
	tui := st.tui
	st.prompt("MOCK:hello alpha question")
	st.answered("alpha question", mockmodel.HelloText)
	st.prompt("MOCK:hello beta question")
	st.answered("beta question", mockmodel.HelloText)

	// Esc Esc in the empty composer browses the transcript from the last
	// prompt; Left moves to the first, Enter rewinds to it and puts it in
	// the composer. The second Esc waits for the first one's hint: two
	// sent at once reach the TUI as one key (Alt+Esc).
	tui.send(false, "Escape")
	tui.waitText(modesWait, "esc again to edit previous message")
	tui.send(false, "Escape")
	tui.waitText(modesWait, "Browsing transcript", "rewind")
	tui.send(false, "Left")
	tui.waitFor("the first prompt selected", modesWait, func(string) bool {
		return selectedLine(tui, "alpha question")
	})
	tui.send(false, "Enter")
	tui.waitText(modesWait, "Conversation reverted to this point", "› MOCK:hello alpha question")
	before := len(st.model.Requests())
	tui.send(true, " revised")
	tui.waitText(modesWait, "› MOCK:hello alpha question revised")
	tui.send(false, "Enter")
	scr := st.answered("alpha question revised", mockmodel.HelloText)
	if strings.Contains(scr, "beta question") {
		t.Fatalf("the dropped prompt is still on screen:\n%s", scr)
	}
	for _, m := range []string{"thread/items/list", "thread/revert"} {
		if !st.asked(m) {
			t.Fatalf("the TUI never sent %s", m)
		}
	}
	ex := lastAnswered(t, st.model, before, "MOCK:hello")
	body := string(ex.Body)
	if !strings.Contains(body, "alpha question revised") || strings.Count(body, "alpha question") != 1 || strings.Contains(body, "beta question") {
		t.Fatalf("the request after the edit should hold the edited prompt and neither dropped turn: %s", body)
	}
	st.end()
}

// htmlEscaped is s as it appears in a JSON body written with Go's
// default escaping: <, > and & as \u003c, \u003e and \u0026.
func htmlEscaped(s string) string {
	return strings.NewReplacer("<", `\u003c`, ">", `\u003e`, "&", `\u0026`).Replace(s)
}

// selectedLine reports whether the line holding text is highlighted (drawn
// in reverse video) on the TUI's screen.
func selectedLine(s *tmuxSession, text string) bool {
	out, err := s.cmd("capture-pane", "-p", "-e", "-t", s.name).Output()
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(out), "\n") {
		if i := strings.Index(line, text); i >= 0 && (strings.Contains(line[:i], "\x1b[0;7m") || strings.Contains(line[:i], "\x1b[7m")) {
			return true
		}
	}
	return false
}

// TestCodexTUIModesSkill: a skill in codexd's $CODEX_HOME/skills shows in
// the TUI's `$` popup; picked there and sent with a prompt, it reaches
// the model as Codex 0.169 sends it: the list of skills in the
// developer context, and the whole SKILL.md in a <skill> block. Turned
// off in /skills, it is written to codexd's config.toml
// (skills/config/write) and no longer brought in.
func TestCodexTUIModesSkill(t *testing.T) {
	codex, codexd, inside := inNetnsOrRerun(t, "TestCodexTUIModesSkill")
	if !inside {
		return
	}
	const skill = "---\nname: greeter\ndescription: Greets people warmly\n---\nAlways greet with the word SKILL-MARKER-77.\n"
	var skillPath string
	st := startModesStack(t, codex, codexd, func(home, work string) {
		skillPath = filepath.Join(mkdir(t, home, "skills/greeter"), "SKILL.md")
		writeFile(t, skillPath, skill)
	})
	tui := st.tui
	tui.send(true, "$gree")
	tui.waitText(modesWait, "greeter  [Skill] Greets people warmly")
	tui.send(false, "Enter")
	tui.waitText(modesWait, "› $greeter")
	before := len(st.model.Requests())
	tui.send(true, "MOCK:hello say hi") // after the "$greeter " the popup put in
	tui.waitText(modesWait, "› $greeter MOCK:hello say hi")
	tui.send(false, "Enter")
	st.answered("say hi", mockmodel.HelloText)
	if !st.asked("skills/list") {
		t.Fatal("the TUI never sent skills/list")
	}
	body := string(lastAnswered(t, st.model, before, "MOCK:hello").Body)
	for _, want := range []string{
		"<skills_instructions>", "- greeter: Greets people warmly (file: ",
		`<skill>\n<name>greeter</name>\n<path>` + skillPath + `</path>`, "Always greet with the word SKILL-MARKER-77.",
	} {
		if !strings.Contains(body, htmlEscaped(want)) {
			t.Fatalf("the model request lacks %q: %s", want, body)
		}
	}

	// /skills, "Enable/Disable Skills": Space turns greeter off, which
	// codexd writes to its config.toml; the popup no longer offers it, and
	// a later $greeter brings nothing in.
	st.prompt("/skills")
	tui.waitText(modesWait, "2. Enable/Disable Skills")
	tui.send(false, "Down")
	tui.waitText(modesWait, "› 2. Enable/Disable Skills")
	tui.send(false, "Enter")
	tui.waitText(modesWait, "[x] greeter")
	tui.send(false, "Space")
	tui.waitText(modesWait, "[ ] greeter")
	tui.send(false, "Escape")
	tui.waitText(modesWait, "Ask Codex to do anything")
	if !st.asked("skills/config/write") {
		t.Fatal("the TUI never sent skills/config/write")
	}
	cfg, err := os.ReadFile(filepath.Join(st.home, "config.toml"))
	if err != nil || !strings.Contains(string(cfg), "[[skills.config]]\npath = \""+skillPath+"\"\nenabled = false\n") {
		t.Fatalf("codexd's config.toml after the toggle (%v):\n%s", err, cfg)
	}
	before = len(st.model.Requests())
	st.prompt("MOCK:hello $greeter once more")
	st.answered("once more", mockmodel.HelloText)
	body = string(lastAnswered(t, st.model, before, "MOCK:hello").Body)
	if n := strings.Count(body, htmlEscaped(`<skill>\n<name>greeter</name>`)); n != 1 {
		t.Fatalf("%d greeter blocks after it was disabled, want only the first turn's: %s", n, body)
	}
	st.end()
}

// TestCodexTUIModesPlan: Shift+Tab switches the TUI to Plan mode; a
// prompt there is answered with a <proposed_plan>, which the TUI shows as
// its plan and offers to implement; the model's request carried codexd's
// Plan-mode instructions and the request_user_input tool. A question the
// model asks with that tool shows as the TUI's question form, and the
// choice made there reaches the model.
func TestCodexTUIModesPlan(t *testing.T) {
	codex, codexd, inside := inNetnsOrRerun(t, "TestCodexTUIModesPlan")
	if !inside {
		return
	}
	st := startModesStack(t, codex, codexd, nil)
	tui := st.tui
	// The TUI ignores Shift+Tab until it knows the modes codexd offers: a
	// person would wait for the composer to settle; the test waits for
	// collaborationMode/list's answer, then for an echo of /plan typed
	// after it, and switches with the command.
	st.waitWire("the collaboration modes", `"mode":"plan"`)
	st.prompt("/plan")
	tui.waitText(modesWait, "Plan mode (shift+tab to cycle)")
	before := len(st.model.Requests())
	st.prompt("MOCK:proposeplan rename the flag")
	tui.waitText(modesWait, "Proposed Plan", "# Rename the flag", "2. Update the two callers.", "Implement this plan?")
	body := string(lastAnswered(t, st.model, before, "MOCK:proposeplan").Body)
	for _, want := range []string{"<collaboration_mode># Mode: Plan", "Plan mode is in effect until a developer message ends it", `"name":"request_user_input"`} {
		if !strings.Contains(body, htmlEscaped(want)) {
			t.Fatalf("the Plan-mode request lacks %q: %s", want, body)
		}
	}
	// "No, stay in Plan mode", then a question from the model.
	tui.send(true, "3")
	tui.waitText(modesWait, "Ask Codex to do anything")
	before = len(st.model.Requests())
	tui.send(true, `MOCK:tool request_user_input {"questions":[{"id":"db","header":"DB","question":"Which database?","options":[{"label":"Postgres","description":"Deployed."},{"label":"SQLite","description":"One file."}]}]}`)
	tui.waitText(modesWait, `"One file."}]}]}`)
	tui.send(false, "Enter")
	tui.waitText(modesWait, "Which database?", "1. Postgres", "2. SQLite")
	tui.send(false, "Down")
	tui.send(false, "Enter")
	tui.waitText(modesWait, "answer: SQLite")
	st.answered("answer: SQLite", "The tool printed:")
	if !strings.Contains(st.server.proxy.transcript(1_000_000), `"method":"item/tool/requestUserInput"`) {
		t.Fatal("codexd never sent item/tool/requestUserInput")
	}
	answered := false
	for _, ex := range st.model.Requests()[before:] {
		b := string(ex.Body)
		answered = answered || strings.Contains(b, `"function_call_output"`) && strings.Contains(b, `SQLite`) && strings.Contains(b, `answers`)
	}
	if !answered {
		t.Fatal("the answer to the question never reached the model")
	}
	st.end()
}
