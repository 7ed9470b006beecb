//go:build linux

package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/codexd/codexd/mockmodel"
)

// TestTwoWaySessions is the drop-in proof of issue 16 on one CODEX_HOME:
// the real Codex 0.169 and codexd take turns on the same thread, each in a
// fresh app-server process, as a user switching between them would.
//
// Codex first: Codex runs two turns (the second runs a command); codexd
// lists, resumes and continues the thread with a third; Codex lists and
// resumes it again, shows all three turns, and runs a fourth. Then the
// other way round, codexd starting the thread. The mock model checks that
// every request of every turn carries the whole history before it: each
// earlier prompt, answer and command output. Codex keeps SQLite indexes
// beside the rollouts (thread_history_1.sqlite projects the turns,
// state_5.sqlite lists the threads); what Codex shows after codexd wrote
// proves they were not left behind.
func TestTwoWaySessions(t *testing.T) {
	codex, codexd, ok := oneHomeBins(t, "TestTwoWaySessions")
	if !ok {
		return
	}
	sides := map[string]string{"codex": codex, "codexd": codexd}
	for _, order := range [][3]string{{"codex", "codexd", "codex"}, {"codexd", "codex", "codexd"}} {
		t.Run(order[0]+"-first", func(t *testing.T) {
			runTwoWay(t, sides, order)
		})
	}
}

// twoWayTurn is one turn of the shared thread: its prompt, and, for a
// turn that runs a command, the text only that command's output holds.
type twoWayTurn struct {
	prompt, output, answer string
	// header is what turn/completed said of the turn (its id, times and
	// duration): whoever reads the thread later must say the same.
	header map[string]any
}

func twoWayTurns(order [3]string) []twoWayTurn {
	turns := make([]twoWayTurn, 4)
	for i := range turns {
		tag := fmt.Sprintf("twoway-%s-turn%d", order[0], i+1)
		switch i {
		case 0, 3:
			turns[i] = twoWayTurn{prompt: "MOCK:hello " + tag, answer: mockmodel.HelloText}
		default:
			turns[i] = twoWayTurn{prompt: "MOCK:exec echo " + tag + "-out", output: tag + "-out"}
		}
	}
	return turns
}

func runTwoWay(t *testing.T, sides map[string]string, order [3]string) {
	model := mockmodel.New(mockmodel.Options{})
	url, err := model.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { model.Close() })
	home, work := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(home, "config.toml"), twoWayConfig(url))
	turns := twoWayTurns(order)

	// 1. The first side starts the thread and runs two turns.
	first := startTwoWayApp(t, order[0], sides[order[0]], home, work)
	res := first.call(t, "thread/start", map[string]any{"cwd": work})
	tid, _ := lookupPath(res, "thread.id")
	threadID, _ := tid.(string)
	if threadID == "" {
		t.Fatalf("%s thread/start returned no thread id: %v", order[0], res)
	}
	first.runTurn(t, threadID, &turns[0])
	first.runTurn(t, threadID, &turns[1])
	first.stop(t)

	// 2. The other side lists it, resumes it, shows both turns and adds
	// the third.
	second := startTwoWayApp(t, order[1], sides[order[1]], home, work)
	second.mustList(t, threadID)
	second.resumeAndCheck(t, threadID, turns[:2])
	second.runTurn(t, threadID, &turns[2])
	second.stop(t)

	// 3. The first side again: all three turns, and a fourth.
	third := startTwoWayApp(t, order[2], sides[order[2]], home, work)
	third.mustList(t, threadID)
	// Not loaded, Codex serves thread/read from its projection: the turn
	// the other side added must be there before any resume.
	read0 := third.call(t, "thread/read", map[string]any{"threadId": threadID, "includeTurns": true})
	checkTwoWayTurns(t, order[2]+" thread/read before resuming", read0, turns[:3])
	third.resumeAndCheck(t, threadID, turns[:3])
	third.runTurn(t, threadID, &turns[3])
	read := third.call(t, "thread/read", map[string]any{"threadId": threadID, "includeTurns": true})
	checkTwoWayTurns(t, order[2]+" thread/read after the fourth turn", read, turns)
	third.stop(t)

	// 4. Archive, unarchive and name, each side undoing the other's: what
	// one did, the other shows, and can act on.
	a := startTwoWayApp(t, order[1], sides[order[1]], home, work)
	a.call(t, "thread/name/set", map[string]any{"threadId": threadID, "name": "named by " + order[1]})
	a.call(t, "thread/archive", map[string]any{"threadId": threadID})
	a.stop(t)
	b := startTwoWayApp(t, order[0], sides[order[0]], home, work)
	b.checkThread(t, threadID, "named by "+order[1], true)
	b.call(t, "thread/unarchive", map[string]any{"threadId": threadID})
	b.checkThread(t, threadID, "named by "+order[1], false)
	b.call(t, "thread/name/set", map[string]any{"threadId": threadID, "name": "named by " + order[0]})
	b.call(t, "thread/archive", map[string]any{"threadId": threadID})
	b.stop(t)
	a = startTwoWayApp(t, order[1], sides[order[1]], home, work)
	a.checkThread(t, threadID, "named by "+order[0], true)
	a.call(t, "thread/unarchive", map[string]any{"threadId": threadID})
	a.checkThread(t, threadID, "named by "+order[0], false)
	a.stop(t)
	// Both sides still show the four turns after all that.
	for _, side := range order[:2] {
		c := startTwoWayApp(t, side, sides[side], home, work)
		read := c.call(t, "thread/read", map[string]any{"threadId": threadID, "includeTurns": true})
		checkTwoWayTurns(t, side+" thread/read at the end", read, turns)
		c.stop(t)
	}

	checkTwoWayHistory(t, model, turns)
}

func twoWayConfig(modelURL string) string {
	return fmt.Sprintf(`model = "mock-model"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false
allow_login_shell = false
[analytics]
enabled = false
[feedback]
enabled = false
[otel]
exporter = "none"
[features]
plugins = false
remote_plugin = false
apps = false
in_app_updates = false
tool_suggest = false
[model_providers.mock]
name = "mock"
base_url = %q
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`, modelURL)
}

// twoWayApp is one app-server process over stdio, driven one request at a
// time; notifications are kept for runTurn.
type twoWayApp struct {
	name   string
	cmd    *exec.Cmd
	in     io.WriteCloser
	msgs   chan map[string]any
	next   int
	stderr *bytes.Buffer
	done   chan struct{}
	mu     sync.Mutex
	// onRequest answers a server request (an approval); nil accepts.
	onRequest func(m map[string]any) any
}

func startTwoWayApp(t *testing.T, name, bin, home, work string) *twoWayApp {
	t.Helper()
	cmd := exec.Command(bin, "app-server")
	cmd.Dir = work
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"CODEX_HOME=" + home,
		"TMPDIR=" + home,
		"RUST_LOG=error",
		"NO_COLOR=1",
		"LANG=C.UTF-8",
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	a := &twoWayApp{name: name, cmd: cmd, msgs: make(chan map[string]any, 1024), stderr: &bytes.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = &lockedWriter{mu: &a.mu, w: a.stderr}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s app-server: %v", name, err)
	}
	a.in = in
	go func() {
		defer close(a.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				a.msgs <- m
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-a.done
		_ = cmd.Wait()
	})
	a.call(t, "initialize", map[string]any{
		"clientInfo":   map[string]any{"name": "twoway", "version": "0"},
		"capabilities": map[string]any{"experimentalApi": true},
	})
	a.send(t, map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	return a
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (a *twoWayApp) send(t *testing.T, m map[string]any) {
	t.Helper()
	b, _ := json.Marshal(m)
	if _, err := a.in.Write(append(b, '\n')); err != nil {
		t.Fatalf("%s: writing %s: %v", a.name, m["method"], err)
	}
}

// take returns the next message for which f holds, answering server
// requests (none are expected under approval_policy never, but a stray
// one must not hang the test) and dropping other messages.
func (a *twoWayApp) take(t *testing.T, what string, f func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.After(90 * time.Second)
	for {
		select {
		case m := <-a.msgs:
			if f(m) {
				return m
			}
			if _, isReq := m["method"]; isReq && m["id"] != nil {
				var result any = map[string]any{"decision": "accept"}
				if a.onRequest != nil {
					result = a.onRequest(m)
				}
				a.send(t, map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": result})
			}
		case <-a.done:
			a.mu.Lock()
			defer a.mu.Unlock()
			t.Fatalf("%s app-server ended while waiting for %s; stderr:\n%s", a.name, what, limitLog(a.stderr.String()))
		case <-deadline:
			a.mu.Lock()
			defer a.mu.Unlock()
			t.Fatalf("%s: no %s within 90s; stderr:\n%s", a.name, what, limitLog(a.stderr.String()))
		}
	}
}

func (a *twoWayApp) call(t *testing.T, method string, params any) map[string]any {
	t.Helper()
	a.next++
	id := float64(a.next)
	a.send(t, map[string]any{"jsonrpc": "2.0", "id": a.next, "method": method, "params": params})
	m := a.take(t, method+" response", func(m map[string]any) bool {
		_, isReq := m["method"]
		return !isReq && m["id"] == id
	})
	if e, ok := m["error"]; ok {
		t.Fatalf("%s %s: error %v", a.name, method, e)
	}
	res, _ := m["result"].(map[string]any)
	return res
}

func (a *twoWayApp) stop(t *testing.T) {
	t.Helper()
	_ = a.in.Close()
	select {
	case <-a.done:
	case <-time.After(30 * time.Second):
		t.Errorf("%s app-server did not exit within 30s of its stdin closing", a.name)
		_ = a.cmd.Process.Kill()
		<-a.done
	}
	_ = a.cmd.Wait()
}

// runTurn starts a turn, waits for it to complete and keeps what
// turn/completed said of it.
func (a *twoWayApp) runTurn(t *testing.T, threadID string, turn *twoWayTurn) {
	t.Helper()
	turn.header = a.runPrompt(t, threadID, turn.prompt)
}

// runPrompt runs one turn of prompt and returns its header.
func (a *twoWayApp) runPrompt(t *testing.T, threadID, prompt string) map[string]any {
	t.Helper()
	a.call(t, "turn/start", map[string]any{
		"threadId": threadID,
		"input":    []any{map[string]any{"type": "text", "text": prompt, "text_elements": []any{}}},
	})
	m := a.take(t, "turn/completed", func(m map[string]any) bool {
		p, _ := m["params"].(map[string]any)
		return m["method"] == "turn/completed" && p["threadId"] == threadID
	})
	if st, _ := lookupPath(m, "params.turn.status"); st != "completed" {
		t.Fatalf("%s: turn %q ended %v: %v", a.name, prompt, st, m)
	}
	v, _ := lookupPath(m, "params.turn")
	return turnHeader(v)
}

// turnHeaderKeys are the members of a turn that do not depend on who
// reads it.
var turnHeaderKeys = []string{"id", "rootTurnId", "status", "startedAt", "completedAt", "durationMs"}

func turnHeader(v any) map[string]any {
	m, _ := v.(map[string]any)
	h := map[string]any{}
	for _, k := range turnHeaderKeys {
		h[k] = m[k]
	}
	return h
}

func (a *twoWayApp) mustList(t *testing.T, threadID string) {
	t.Helper()
	res := a.call(t, "thread/list", map[string]any{})
	data, _ := res["data"].([]any)
	for _, th := range data {
		if m, _ := th.(map[string]any); m["id"] == threadID {
			return
		}
	}
	t.Fatalf("%s thread/list does not list thread %s: %v", a.name, threadID, res)
}

// checkThread checks what thread/read and thread/list say of the thread:
// its name, whether it is archived, and a path where its rollout is.
func (a *twoWayApp) checkThread(t *testing.T, threadID, name string, archived bool) {
	t.Helper()
	res := a.call(t, "thread/read", map[string]any{"threadId": threadID})
	got, _ := lookupPath(res, "thread.name")
	path, _ := lookupPath(res, "thread.path")
	p, _ := path.(string)
	if got != name {
		t.Errorf("%s thread/read: name %v, want %q", a.name, got, name)
	}
	if _, err := os.Stat(p); err != nil || strings.Contains(p, "archived_sessions") != archived {
		t.Errorf("%s thread/read: path %q (%v), archived %v", a.name, p, err, archived)
	}
	list := a.call(t, "thread/list", map[string]any{"archived": archived})
	data, _ := list["data"].([]any)
	for _, th := range data {
		if m, _ := th.(map[string]any); m["id"] == threadID {
			if m["name"] != name {
				t.Errorf("%s thread/list: name %v, want %q", a.name, m["name"], name)
			}
			return
		}
	}
	t.Errorf("%s thread/list (archived %v) does not list the thread", a.name, archived)
}

func (a *twoWayApp) resumeAndCheck(t *testing.T, threadID string, turns []twoWayTurn) {
	t.Helper()
	res := a.call(t, "thread/resume", map[string]any{"threadId": threadID})
	checkTwoWayTurns(t, a.name+" thread/resume", res, turns)
	read := a.call(t, "thread/read", map[string]any{"threadId": threadID, "includeTurns": true})
	checkTwoWayTurns(t, a.name+" thread/read", read, turns)
}

// checkTwoWayTurns checks that res.thread.turns are the turns, in order,
// each with its prompt, its command (and output) and its answer.
func checkTwoWayTurns(t *testing.T, what string, res map[string]any, want []twoWayTurn) {
	t.Helper()
	v, _ := lookupPath(res, "thread.turns")
	got, _ := v.([]any)
	if len(got) != len(want) {
		t.Errorf("%s: %d turns, want %d: %.2000v", what, len(got), len(want), got)
		return
	}
	for i, w := range want {
		turn, _ := got[i].(map[string]any)
		items, _ := turn["items"].([]any)
		var kinds []string
		var user, cmd, out, agent string
		for _, it := range items {
			m, _ := it.(map[string]any)
			k, _ := m["type"].(string)
			kinds = append(kinds, k)
			b, _ := json.Marshal(m)
			switch k {
			case "userMessage":
				user += string(b)
			case "commandExecution":
				cmd += fmt.Sprint(m["command"])
				out += fmt.Sprint(m["aggregatedOutput"])
			case "agentMessage":
				agent += fmt.Sprint(m["text"])
			}
		}
		if st := turn["status"]; st != "completed" {
			t.Errorf("%s: turn %d is %v, want completed", what, i+1, st)
		}
		if h := turnHeader(turn); w.header != nil && fmt.Sprint(h) != fmt.Sprint(w.header) {
			t.Errorf("%s: turn %d is %v; the side that ran it said %v", what, i+1, h, w.header)
		}
		if !strings.Contains(user, jsonText(w.prompt)) {
			t.Errorf("%s: turn %d has no user message %q (items %v)", what, i+1, w.prompt, kinds)
		}
		if w.output != "" && (!strings.Contains(cmd, w.output) || !strings.Contains(out, w.output)) {
			t.Errorf("%s: turn %d has no command %q with its output (items %v; command %q, output %q)", what, i+1, w.output, kinds, cmd, out)
		}
		if agent == "" || (w.answer != "" && !strings.Contains(agent, w.answer)) || (w.output != "" && !strings.Contains(agent, w.output)) {
			t.Errorf("%s: turn %d has no answer (items %v, answer %q)", what, i+1, kinds, agent)
		}
	}
}

// jsonText is s as it appears inside a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// checkTwoWayHistory checks every model request of the four turns: its
// input carries every earlier turn's prompt, its command's output and its
// answer, whichever side ran that turn.
func checkTwoWayHistory(t *testing.T, model *mockmodel.Server, turns []twoWayTurn) {
	t.Helper()
	seen := make([]int, len(turns))
	for _, ex := range model.Requests() {
		var req struct {
			Tools []any `json:"tools"`
			Input []struct {
				Type    string          `json:"type"`
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
				Output  json.RawMessage `json:"output"`
			} `json:"input"`
		}
		if json.Unmarshal(ex.Body, &req) != nil || len(req.Tools) == 0 {
			continue // not a turn's request (Codex's title job, for one)
		}
		var users, outputs, answers []string
		for _, it := range req.Input {
			switch {
			case it.Type == "function_call_output":
				outputs = append(outputs, string(it.Output))
			case it.Role == "user":
				users = append(users, string(it.Content))
			case it.Role == "assistant":
				answers = append(answers, string(it.Content))
			}
		}
		k := -1
		for i := len(turns) - 1; i >= 0 && k < 0; i-- {
			if anyContains(users, jsonText(turns[i].prompt)) {
				k = i
			}
		}
		if k < 0 {
			continue
		}
		seen[k]++
		for j, tu := range turns[:k] {
			if !anyContains(users, jsonText(tu.prompt)) {
				t.Errorf("request %d (turn %d) lacks turn %d's prompt %q", ex.N, k+1, j+1, tu.prompt)
			}
			if tu.output != "" && !anyContains(outputs, tu.output) {
				t.Errorf("request %d (turn %d) lacks turn %d's command output %q", ex.N, k+1, j+1, tu.output)
			}
			want := tu.answer
			if want == "" {
				want = tu.output
			}
			if !anyContains(answers, want) {
				t.Errorf("request %d (turn %d) lacks turn %d's answer (%q)", ex.N, k+1, j+1, want)
			}
		}
	}
	t.Logf("model requests checked for turns 1-4: %v", seen)
	for i, n := range seen {
		if n == 0 {
			t.Errorf("the model got no request for turn %d (%q)", i+1, turns[i].prompt)
		}
	}
}

func anyContains(ss []string, sub string) bool {
	for _, s := range ss {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// oneHomeBins runs the calling test inside a loopback-only network
// namespace (the first call re-runs it there, building codexd once, and
// returns ok false) and, inside, returns the real Codex and the codexd
// binary that the tests sharing one CODEX_HOME drive.
func oneHomeBins(t *testing.T, name string) (codex, codexd string, ok bool) {
	t.Helper()
	codex = codexBin(t)
	if !inNetns() {
		if os.Getenv("CODEXD_TWOWAY_BIN") == "" {
			t.Setenv("CODEXD_TWOWAY_BIN", buildCodexd(t))
		}
		runInNetns(t, name, 4*time.Minute)
		return "", "", false
	}
	if err := loopbackUp(); err != nil {
		t.Fatalf("bringing up lo in the test's network namespace: %v", err)
	}
	codexd = os.Getenv("CODEXD_TWOWAY_BIN")
	if codexd == "" {
		t.Fatal("CODEXD_TWOWAY_BIN is not set in the namespace")
	}
	return codex, codexd, true
}
