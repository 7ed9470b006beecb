package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/codexd/codexd/mockmodel"
)

// The whole system after a crash: a real `codexd app-server` process is
// killed with SIGKILL in the middle of a turn, either while the answer
// streams after a completed command, or while the command still runs. A new
// process shows that turn interrupted, with what completed before the
// crash (and nothing left in progress), keeps the turn before it whole,
// resumes the thread, and the next turn sends the model all of that
// history: a call that never got its output gets an "aborted" one.
func TestAppServerKill9MidTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	cases := []struct {
		name string
		cmd  string
		// killAt: the notification after which the process is killed.
		killAt  string
		isKill  func(map[string]any) bool
		cmdDone bool     // the dead turn keeps the completed command
		want    []string // in the model request after the restart
	}{
		{"answer streaming", "echo crash-marker", "item/agentMessage/delta", nil, true,
			[]string{"first answer", `"call_id":"call_crash"`, "crash-marker", `"third"`}},
		// The command starts a child of its own, prints both pids in one
		// write, then is the process the exec-server started until it is
		// killed.
		{"command running", `sleep 600 >/dev/null 2>&1 & echo "codexd-pid=$$ codexd-pid=$!"; exec sleep 600`, "item/commandExecution/outputDelta", func(p map[string]any) bool {
			d, _ := p["delta"].(string)
			return strings.Contains(d, "codexd-pid=")
		}, false,
			[]string{"first answer", `"call_id":"call_crash"`, `"output":"aborted"`, `"third"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kill9MidTurn(t, c.cmd, c.killAt, c.isKill, c.cmdDone, c.want)
		})
	}
}

var pidRE = regexp.MustCompile(`codexd-pid=(\d+)`)

func kill9MidTurn(t *testing.T, command, killAt string, isKill func(map[string]any) bool, cmdDone bool, want []string) {
	step0 := 0
	args, _ := json.Marshal(map[string]string{"cmd": command})
	script := &mockmodel.Script{Rules: []mockmodel.Rule{
		{When: mockmodel.Match{UserContains: "first"}, Respond: mockmodel.Response{
			Output: []mockmodel.Output{{Type: "message", Text: "first answer"}}}},
		{When: mockmodel.Match{UserContains: "second", Step: &step0}, Respond: mockmodel.Response{
			Output: []mockmodel.Output{{Type: "function_call", Name: "exec_command", CallID: "call_crash",
				Arguments: args}}}},
		// The answer after the command stalls after its first delta,
		// until the client goes away.
		{When: mockmodel.Match{UserContains: "second", LastInput: "function_call_output"}, Respond: mockmodel.Response{
			Output: []mockmodel.Output{{Type: "message", Text: "never finished", Deltas: 5}}, StallAfter: 6}},
		{When: mockmodel.Match{UserContains: "third"}, Respond: mockmodel.Response{
			Output: []mockmodel.Output{{Type: "message", Text: "third answer"}}}},
	}}
	mm := mockmodel.New(mockmodel.Options{Script: script})
	url, err := mm.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mm.Close()

	home, dir := t.TempDir(), t.TempDir()
	cfg := fmt.Sprintf(`model = "m"
model_provider = "local"
approval_policy = "never"
sandbox_mode = "danger-full-access"
[model_providers.local]
name = "local"
base_url = %q
request_max_retries = 0
stream_max_retries = 0
`, url)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), asCodexdEnv+"=1", "CODEX_HOME="+home, "HOME="+t.TempDir(), "CODEX_EXEC_SERVER_URL=")

	s := startAppServer(t, env, dir)
	s.initialize()
	started := s.call("thread/start", map[string]any{"cwd": dir})
	var th struct {
		Thread struct{ ID string } `json:"thread"`
	}
	s.decode(started, &th)
	tid := th.Thread.ID
	s.call("turn/start", map[string]any{"threadId": tid, "input": []any{map[string]any{"type": "text", "text": "first"}}})
	s.waitFor("turn/completed", nil)
	s.call("turn/start", map[string]any{"threadId": tid, "input": []any{map[string]any{"type": "text", "text": "second"}}})
	if cmdDone {
		s.waitFor("item/completed", func(p map[string]any) bool {
			item, _ := p["item"].(map[string]any)
			return item["type"] == "commandExecution"
		})
	}
	at := s.waitFor(killAt, isKill)
	// A command still running must not outlive the server, nor its own
	// child: each is watched from before the kill, so that its pid cannot
	// have been reused. On the main of 2026-12-02 the command was
	// reparented to init and kept running; later pdeathsig killed it, but
	// not its child (procs' guard does).
	var gone []func(time.Duration) error
	for _, m := range pidRE.FindAllStringSubmatch(string(at), -1) {
		pid, _ := strconv.Atoi(m[1])
		gone = append(gone, watchPid(t, pid))
	}
	s.kill9()
	for _, cmdGone := range gone {
		if err := cmdGone(20 * time.Second); err != nil {
			t.Errorf("a command outlived the server killed with SIGKILL: %v", err)
		}
	}

	// The restarted server reads the thread back from its rollout.
	s = startAppServer(t, env, dir)
	defer s.close()
	s.initialize()
	check := func(what string, res json.RawMessage, wantTurns int) {
		t.Helper()
		var r struct {
			Thread struct {
				Turns []struct {
					Status string
					Items  []map[string]any
				}
			}
		}
		s.decode(res, &r)
		turns := r.Thread.Turns
		if len(turns) != wantTurns {
			t.Fatalf("%s: %d turns: %s", what, len(turns), res)
		}
		if turns[0].Status != "completed" || len(turns[0].Items) != 2 || turns[0].Items[1]["text"] != "first answer" {
			t.Errorf("%s: the turn before the crash: %s", what, res)
		}
		dead := turns[1]
		if dead.Status != "interrupted" || len(dead.Items) < 1 || dead.Items[0]["type"] != "userMessage" {
			t.Fatalf("%s: the turn that died: %s", what, res)
		}
		if cmdDone {
			if len(dead.Items) < 2 {
				t.Fatalf("%s: the completed command was lost: %s", what, res)
			}
			cmd := dead.Items[1]
			if cmd["type"] != "commandExecution" || cmd["status"] != "completed" ||
				!strings.Contains(fmt.Sprint(cmd["aggregatedOutput"]), "crash-marker") {
				t.Errorf("%s: the completed command was lost: %v", what, cmd)
			}
		}
		for _, it := range dead.Items {
			if it["status"] == "inProgress" {
				t.Errorf("%s: an item of the dead turn is still in progress: %v", what, it)
			}
		}
	}
	check("thread/read", s.call("thread/read", map[string]any{"threadId": tid, "includeTurns": true}), 2)
	check("thread/resume", s.call("thread/resume", map[string]any{"threadId": tid}), 2)

	s.call("turn/start", map[string]any{"threadId": tid, "input": []any{map[string]any{"type": "text", "text": "third"}}})
	done := s.waitFor("turn/completed", nil)
	if !strings.Contains(string(done), `"status":"completed"`) {
		t.Fatalf("the turn after the restart: %s", done)
	}
	check("thread/read after a new turn", s.call("thread/read", map[string]any{"threadId": tid, "includeTurns": true}), 3)
	// The model was sent everything completed before the crash.
	reqs := mm.Requests()
	last := string(reqs[len(reqs)-1].Body)
	for _, w := range want {
		if !strings.Contains(last, w) {
			t.Errorf("the request after the restart lacks %s: %s", w, last)
		}
	}
}

// appServerProc drives a `codexd app-server` process over stdio.
type appServerProc struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	msgs  chan map[string]json.RawMessage
	ended chan struct{}
	next  int
}

func startAppServer(t *testing.T, env []string, dir string) *appServerProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "app-server", "--cd", dir)
	cmd.Env = env
	cmd.Stderr = io.Discard
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &appServerProc{t: t, cmd: cmd, in: in, msgs: make(chan map[string]json.RawMessage, 1024), ended: make(chan struct{})}
	go func() {
		defer close(s.ended)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				s.msgs <- m
			}
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return s
}

func (s *appServerProc) send(m map[string]any) {
	s.t.Helper()
	b, _ := json.Marshal(m)
	if _, err := s.in.Write(append(b, '\n')); err != nil {
		s.t.Fatal(err)
	}
}

// read returns the next message, failing the test after a minute.
func (s *appServerProc) read() map[string]json.RawMessage {
	s.t.Helper()
	select {
	case m := <-s.msgs:
		return m
	case <-s.ended:
		s.t.Fatal("the app-server closed its stdout")
	case <-time.After(time.Minute):
		s.t.Fatal("no message from the app-server for a minute")
	}
	return nil
}

// call sends a request and returns its result, failing on an error.
func (s *appServerProc) call(method string, params any) json.RawMessage {
	s.t.Helper()
	s.next++
	id := s.next
	s.send(map[string]any{"id": id, "method": method, "params": params})
	for {
		m := s.read()
		if _, isReq := m["method"]; isReq || string(m["id"]) != fmt.Sprint(id) {
			continue
		}
		if e, ok := m["error"]; ok {
			s.t.Fatalf("%s: %s", method, e)
		}
		return m["result"]
	}
}

// waitFor returns the params of the next notification of method that
// match (nil matches any).
func (s *appServerProc) waitFor(method string, match func(map[string]any) bool) json.RawMessage {
	s.t.Helper()
	for {
		m := s.read()
		if string(m["method"]) != `"`+method+`"` {
			continue
		}
		var p map[string]any
		s.decode(m["params"], &p)
		if match == nil || match(p) {
			return m["params"]
		}
	}
}

func (s *appServerProc) decode(raw json.RawMessage, v any) {
	s.t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		s.t.Fatalf("%v: %s", err, raw)
	}
}

func (s *appServerProc) initialize() {
	s.t.Helper()
	s.call("initialize", map[string]any{"clientInfo": map[string]any{"name": "crash-test", "version": "1"}})
	s.send(map[string]any{"method": "initialized"})
}

func (s *appServerProc) kill9() {
	s.t.Helper()
	if err := s.cmd.Process.Kill(); err != nil {
		s.t.Fatal(err)
	}
	_ = s.cmd.Wait()
	<-s.ended
}

// close ends stdin; the server exits 0.
func (s *appServerProc) close() {
	s.t.Helper()
	s.in.Close()
	if err := s.cmd.Wait(); err != nil {
		s.t.Errorf("the app-server exited with %v", err)
	}
	<-s.ended
}
