package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/codexd/codexd/config"
)

var testServerBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcp-test")
	if err != nil {
		panic(err)
	}
	testServerBin = filepath.Join(dir, "testserver")
	if out, err := exec.Command("go", "build", "-o", testServerBin, "./internal/testserver").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the test server: %v\n%s", err, out)
		os.Exit(1)
	}
	code := 0
	func() {
		defer func() { _ = os.RemoveAll(dir) }()
		goleak.VerifyTestMain(exitCatcher{&code, m})
	}()
	os.Exit(code)
}

// exitCatcher lets TestMain remove its directory after goleak's checks.
type exitCatcher struct {
	code *int
	m    *testing.M
}

func (e exitCatcher) Run() int { *e.code = e.m.Run(); return *e.code }

// statusLog records every state change, for waiting on one.
type statusLog struct {
	mu sync.Mutex
	ch chan struct{}
	ev []string
}

func newStatusLog() *statusLog { return &statusLog{ch: make(chan struct{}, 1000)} }

func (l *statusLog) on(server string, st State, reason string) {
	l.mu.Lock()
	l.ev = append(l.ev, server+"="+string(st))
	l.mu.Unlock()
	l.ch <- struct{}{}
}

func (l *statusLog) events() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.ev...)
}

// waitEvent waits until the log holds event ("server=state").
func (l *statusLog) waitEvent(t *testing.T, event string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		for _, e := range l.events() {
			if e == event {
				return
			}
		}
		select {
		case <-l.ch:
		case <-deadline:
			t.Fatalf("no %s in %v", event, l.events())
		}
	}
}

func stdio(name string, args ...string) config.MCPServer {
	return config.MCPServer{Name: name, Command: testServerBin, Args: args, Enabled: true}
}

func waitState(t *testing.T, m *Manager, server string, want State) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, reason := m.Wait(ctx, server)
	if st != want {
		t.Fatalf("%s: state %s (%s), want %s", server, st, reason, want)
	}
	return reason
}

func call(t *testing.T, m *Manager, server, tool, args string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := m.Call(ctx, server, tool, json.RawMessage(args), nil)
	if err != nil {
		return "", err
	}
	var c struct{ Text string }
	_ = json.Unmarshal(res.Content[0], &c)
	return c.Text, nil
}

func TestStdioServerToolsAndCall(t *testing.T) {
	log := newStatusLog()
	m := New([]config.MCPServer{stdio("ts")}, Options{OnStatus: log.on})
	defer m.Close()
	m.Start()
	waitState(t, m, "ts", StateReady)
	var names []string
	for _, tl := range m.Tools() {
		names = append(names, tl.Namespace+"/"+tl.Callable)
		if tl.Name == "echo" && (tl.ReadOnlyHint == nil || !*tl.ReadOnlyHint || !strings.Contains(string(tl.InputSchema), `"text"`)) {
			t.Fatalf("echo: annotations or schema lost: %+v %s", tl, tl.InputSchema)
		}
	}
	if got := strings.Join(names, ","); got != "mcp__ts/crash,mcp__ts/destroy,mcp__ts/echo,mcp__ts/elicit,mcp__ts/open,mcp__ts/pid,mcp__ts/slow,mcp__ts/withdraw" {
		t.Fatalf("tools: %s", got)
	}
	if out, err := call(t, m, "ts", "echo", `{"text":"hi there"}`); err != nil || out != "hi there" {
		t.Fatalf("echo: %q %v", out, err)
	}
	if ev := log.events(); strings.Join(ev, ",") != "ts=starting,ts=ready" {
		t.Fatalf("status events: %v", ev)
	}
}

func TestProgressAndCancellation(t *testing.T) {
	m := New([]config.MCPServer{stdio("ts")}, Options{})
	defer m.Close()
	m.Start()
	var mu sync.Mutex
	var msgs []string
	got := make(chan struct{}, 10)
	res, err := m.Call(context.Background(), "ts", "slow", json.RawMessage(`{"ms":200}`), func(s string) {
		mu.Lock()
		msgs = append(msgs, s)
		mu.Unlock()
		got <- struct{}{}
	})
	if err != nil || res.IsError {
		t.Fatalf("slow: %+v %v", res, err)
	}
	mu.Lock()
	if len(msgs) == 0 || msgs[0] != "step 1" {
		t.Fatalf("progress: %v", msgs)
	}
	mu.Unlock()

	// Cancelling the context ends the call at once (the SDK sends
	// notifications/cancelled) and the server stays usable.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := m.Call(ctx, "ts", "slow", json.RawMessage(`{"ms":60000}`), func(string) { got <- struct{}{} })
		done <- err
	}()
	select {
	case <-got:
	case <-time.After(20 * time.Second):
		t.Fatal("no progress from the long call")
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("cancelled call succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancel did not end the call")
	}
	if out, err := call(t, m, "ts", "echo", `{"text":"still here"}`); err != nil || out != "still here" {
		t.Fatalf("after cancel: %q %v", out, err)
	}
}

func TestToolTimeout(t *testing.T) {
	c := stdio("ts")
	c.ToolTimeout = 300 * time.Millisecond
	m := New([]config.MCPServer{c}, Options{})
	defer m.Close()
	m.Start()
	waitState(t, m, "ts", StateReady)
	_, err := m.Call(context.Background(), "ts", "slow", json.RawMessage(`{"ms":60000}`), nil)
	if err == nil || !strings.Contains(err.Error(), "timed out after 300ms") {
		t.Fatalf("want a timeout, got %v", err)
	}
}

func TestSlowServerIsNeverFailed(t *testing.T) {
	c := stdio("slow", "-delay", "1500ms")
	c.StartupTimeout = 100 * time.Millisecond // a timeout does not fail it
	log := newStatusLog()
	m := New([]config.MCPServer{c, stdio("fast")}, Options{OnStatus: log.on})
	defer m.Close()
	m.Start()
	waitState(t, m, "fast", StateReady)
	for _, tl := range m.Tools() {
		if tl.Server == "slow" {
			t.Fatal("tools of a server still starting offered")
		}
	}
	waitState(t, m, "slow", StateReady)
	n := 0
	for _, tl := range m.Tools() {
		if tl.Server == "slow" {
			n++
		}
	}
	if n != 8 {
		t.Fatalf("slow server's tools: %d", n)
	}
	for _, e := range log.events() {
		if e == "slow=failed" {
			t.Fatalf("slow server failed: %v", log.events())
		}
	}
}

func TestCrashMidCallRestartsOnNextUse(t *testing.T) {
	log := newStatusLog()
	m := New([]config.MCPServer{stdio("ts")}, Options{OnStatus: log.on})
	defer m.Close()
	m.Start()
	pid1, err := call(t, m, "ts", "pid", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = call(t, m, "ts", "crash", `{}`)
	if err == nil || !strings.Contains(err.Error(), "tool call failed") {
		t.Fatalf("crash: %v", err)
	}
	log.waitEvent(t, "ts=failed")
	reason := m.Statuses()[0].Reason
	if !strings.Contains(reason, "exited") {
		t.Fatalf("reason: %q", reason)
	}
	// The tools stay listed, unavailable.
	if len(m.Tools()) != 8 || m.Statuses()[0].Available {
		t.Fatalf("after the crash: %d tools, %+v", len(m.Tools()), m.Statuses()[0])
	}
	pid2, err := call(t, m, "ts", "pid", `{}`)
	if err != nil || pid2 == pid1 || pid2 == "" {
		t.Fatalf("restart: %q %v (was %s)", pid2, err, pid1)
	}
}

func TestGarbageServerFailsWithReason(t *testing.T) {
	c := stdio("junk", "-garbage")
	c.Required = true
	m := New([]config.MCPServer{c, stdio("ok")}, Options{})
	defer m.Close()
	m.Start()
	reason := waitState(t, m, "junk", StateFailed)
	if !strings.Contains(reason, "handshake failed") {
		t.Fatalf("reason: %q", reason)
	}
	err := m.AwaitRequired(context.Background())
	if err == nil || !strings.Contains(err.Error(), "junk: handshake failed") {
		t.Fatalf("AwaitRequired: %v", err)
	}
	if _, err := call(t, m, "junk", "echo", `{"text":"x"}`); err == nil || !strings.Contains(err.Error(), "unavailable") {
		t.Fatalf("call on the failed server: %v", err)
	}
	if out, err := call(t, m, "ok", "echo", `{"text":"fine"}`); err != nil || out != "fine" {
		t.Fatalf("the other server: %q %v", out, err)
	}
}

func TestMissingCommandFails(t *testing.T) {
	c := config.MCPServer{Name: "gone", Command: filepath.Join(t.TempDir(), "nope"), Enabled: true}
	m := New([]config.MCPServer{c}, Options{})
	defer m.Close()
	m.Start()
	if reason := waitState(t, m, "gone", StateFailed); !strings.Contains(reason, "nope") {
		t.Fatalf("reason: %q", reason)
	}
}

func TestCloseKillsTheProcessGroup(t *testing.T) {
	m := New([]config.MCPServer{stdio("ts")}, Options{})
	m.Start()
	pid, err := call(t, m, "ts", "pid", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(pid)
	m.Close()
	if err := syscall.Kill(n, 0); err == nil {
		t.Fatalf("server %d still alive after Close", n)
	}
}

func TestDisabledAndReload(t *testing.T) {
	off := stdio("off")
	off.Enabled = false
	log := newStatusLog()
	m := New([]config.MCPServer{off, stdio("a")}, Options{OnStatus: log.on})
	defer m.Close()
	m.Start()
	waitState(t, m, "a", StateReady)
	if st := m.Statuses(); st[1].Name != "off" || st[1].State != StateCancelled {
		t.Fatalf("statuses: %+v", st)
	}
	pidA, _ := call(t, m, "a", "pid", `{}`)
	// b is new, a is unchanged, off is removed.
	m.Reload([]config.MCPServer{stdio("a"), stdio("b")})
	waitState(t, m, "b", StateReady)
	if pid, _ := call(t, m, "a", "pid", `{}`); pid != pidA {
		t.Fatalf("unchanged server restarted: %s -> %s", pidA, pid)
	}
	// a changes: restarted.
	m.Reload([]config.MCPServer{stdio("a", "-name", "other"), stdio("b")})
	waitState(t, m, "a", StateReady)
	if pid, _ := call(t, m, "a", "pid", `{}`); pid == pidA {
		t.Fatal("changed server not restarted")
	}
	if len(m.Statuses()) != 2 {
		t.Fatalf("statuses: %+v", m.Statuses())
	}
}

func TestStreamableHTTPServer(t *testing.T) {
	cmd := exec.Command(testServerBin, "-http", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	url, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	c := config.MCPServer{Name: "web", URL: strings.TrimSpace(url), Enabled: true,
		HTTPHeaders: map[string]string{"X-Test": "1"}, BearerTokenEnvVar: "TOKEN"}
	m := New([]config.MCPServer{c}, Options{Getenv: func(k string) string {
		if k == "TOKEN" {
			return "secret"
		}
		return ""
	}})
	defer m.Close()
	m.Start()
	waitState(t, m, "web", StateReady)
	if out, err := call(t, m, "web", "echo", `{"text":"over http"}`); err != nil || out != "over http" {
		t.Fatalf("echo: %q %v", out, err)
	}
}

func TestMissingBearerTokenFails(t *testing.T) {
	c := config.MCPServer{Name: "web", URL: "http://127.0.0.1:1/mcp", Enabled: true, BearerTokenEnvVar: "NOPE"}
	m := New([]config.MCPServer{c}, Options{Getenv: func(string) string { return "" }})
	defer m.Close()
	m.Start()
	if reason := waitState(t, m, "web", StateFailed); !strings.Contains(reason, "NOPE") {
		t.Fatalf("reason: %q", reason)
	}
}

// No progress callback runs once Call returned: the SDK hands a call its
// result as soon as it is read, while the progress notifications read
// before it may still be queued for their handler, so a late callback
// used to run after the call's item completed (an item/mcpToolCall/progress
// after item/completed), or block whoever took a lock after the call.
func TestNoProgressAfterCallReturned(t *testing.T) {
	m := New([]config.MCPServer{stdio("ts")}, Options{})
	defer m.Close()
	m.Start()
	waitState(t, m, "ts", StateReady)
	returned := make(chan struct{})
	var late atomic.Int32
	res, err := m.Call(context.Background(), "ts", "slow", json.RawMessage(`{"ms":4}`), func(string) {
		select {
		case <-returned:
			late.Add(1)
			return
		default:
		}
		// Hold the handler until the call returns (as a lock taken after
		// the call would), or give up: the fixed Call waits for us.
		select {
		case <-returned:
			late.Add(1)
		case <-time.After(time.Second):
		}
	})
	close(returned)
	if err != nil || res.IsError {
		t.Fatalf("slow: %+v %v", res, err)
	}
	if n := late.Load(); n > 0 {
		t.Fatalf("%d progress callbacks ran after Call returned", n)
	}
}

// A tool's approval mode changes without restarting its server: set for
// every thread and the threads to come (an "always allow"), or by a
// reload that changes only approval modes.
func TestApprovalModeChangesWithoutRestart(t *testing.T) {
	mode := func(m *Manager, tool string) string {
		for _, tl := range m.Tools() {
			if tl.Name == tool {
				return tl.ApprovalMode
			}
		}
		t.Fatalf("no tool %s", tool)
		return ""
	}
	r := NewRegistry([]config.MCPServer{stdio("ts")}, Options{}, nil)
	m := r.NewThread("t1", nil)
	defer m.Close()
	waitState(t, m, "ts", StateReady)
	pid, _ := call(t, m, "ts", "pid", `{}`)
	if got := mode(m, "destroy"); got != "" {
		t.Fatalf("mode before: %q", got)
	}
	r.SetToolApprovalMode("ts", "destroy", "approve")
	if got := mode(m, "destroy"); got != "approve" {
		t.Fatalf("running thread: %q", got)
	}
	if got := mode(m, "echo"); got != "" {
		t.Fatalf("another tool: %q", got)
	}
	m2 := r.NewThread("t2", nil)
	defer m2.Close()
	waitState(t, m2, "ts", StateReady)
	if got := mode(m2, "destroy"); got != "approve" {
		t.Fatalf("new thread: %q", got)
	}

	c := stdio("ts")
	c.DefaultToolsApprovalMode = "prompt"
	m.Reload([]config.MCPServer{c})
	if got, other := mode(m, "destroy"), mode(m, "echo"); got != "prompt" || other != "prompt" {
		t.Fatalf("after the reload: %q %q", got, other)
	}
	if again, _ := call(t, m, "ts", "pid", `{}`); again != pid {
		t.Fatalf("restarted: %s -> %s", pid, again)
	}
}
