package core

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/environment"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/execserver"
	"github.com/codexd/codexd/internal/cutproxy"
	"github.com/codexd/codexd/internal/execproctest"
	"github.com/codexd/codexd/jsonrpc"
	"github.com/codexd/codexd/sandbox"
)

// envServer is a real exec-server on a loopback WebSocket confined to a
// root of its own; it returns the URL and the root.
func envServer(t testing.TB) (string, string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := execserver.New(execserver.Config{Roots: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := srv.Listen(jsonrpc.Listen{Scheme: "ws", Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- l.Serve(nil, nil) }()
	t.Cleanup(func() {
		l.Close()
		<-done
		srv.Close()
	})
	return l.URL(), root
}

// scriptedByInput answers a user message "RUN:<cmd>" with exec_command
// <cmd> and "PATCH:<patch>" with apply_patch, and a tool's output with a
// message.
func scriptedByInput() *fakeModel {
	m := newFakeModel()
	var mu sync.Mutex
	n := 0
	m.next = func(req *prompt.Request) fakeResponse {
		mu.Lock()
		n++
		id := fmt.Sprintf("call_%d", n)
		mu.Unlock()
		last := req.Input[len(req.Input)-1]
		if last.Type == prompt.TypeFunctionCallOutput || last.Type == prompt.TypeCustomToolCallOutput {
			return textResponse("msg_"+id, "done")
		}
		for i := len(req.Input) - 1; i >= 0; i-- {
			it := req.Input[i]
			if it.Type != prompt.TypeMessage || it.Role != "user" {
				continue
			}
			for _, c := range it.Content {
				if cmd, ok := strings.CutPrefix(c.Text, "RUN:"); ok {
					return callResponse(id, "exec_command", map[string]any{"cmd": cmd, "yield_time_ms": 20000})
				}
				if patch, ok := strings.CutPrefix(c.Text, "PATCH:"); ok {
					return callResponse(id, "apply_patch", map[string]any{"input": patch})
				}
			}
		}
		return textResponse("msg_"+id, "nothing to do")
	}
	return m
}

// toolOutput runs one turn of input on th and returns the output its tool
// call got.
func envToolOutput(t *testing.T, th agent.Thread, in agent.UserInput) string {
	t.Helper()
	if _, err := th.Submit(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	evs := until(t, th, isTurnCompleted)
	for _, ev := range evs {
		if m, ok := ev.Msg.(agent.ItemCompleted); ok {
			switch it := m.Item.(type) {
			case *agent.CommandExecution:
				if it.Output == nil {
					return ""
				}
				return *it.Output
			case *agent.FileChange:
				return string(it.Status)
			}
		}
	}
	t.Fatalf("no tool item in %s", describe(evs))
	return ""
}

func envsOf(id, cwd string) *[]agent.Environment {
	return &[]agent.Environment{{ID: id, Cwd: cwd}}
}

// Two threads on two exec-servers run at once, and each command runs
// where its thread says: each writes a marker in its own exec-server's
// root, then waits for the other's, so both finish only if they overlap.
func TestEnvironmentsTwoThreadsTwoServers(t *testing.T) {
	urlA, rootA := envServer(t)
	urlB, rootB := envServer(t)
	reg := environment.New(environment.Options{})
	t.Cleanup(func() { reg.Close() })
	for id, url := range map[string]string{"a": urlA, "b": urlB} {
		if err := reg.Add(environment.AddParams{ID: id, URL: url}); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, scriptedByInput(), func(c *Config) { c.Environments = reg })
	thA := h.start(agent.Overrides{Environments: envsOf("a", rootA)})
	thB := h.start(agent.Overrides{Environments: envsOf("b", rootB)})
	cmd := func(me, other string) string {
		return fmt.Sprintf("echo %s > marker; pwd; while [ ! -e %s/marker ]; do sleep 0.01; done; echo overlapped", me, other)
	}
	outs := make([]string, 2)
	var wg sync.WaitGroup
	for i, c := range []struct {
		th   agent.Thread
		text string
	}{{thA, cmd("a", rootB)}, {thB, cmd("b", rootA)}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = envToolOutput(t, c.th, agent.UserInput{Input: text("RUN:" + c.text)})
		}()
	}
	wg.Wait()
	for i, root := range []string{rootA, rootB} {
		if !strings.Contains(outs[i], root+"\n") || !strings.Contains(outs[i], "overlapped") {
			t.Errorf("thread %d's command printed %q, want its cwd %s and overlapped", i, outs[i], root)
		}
		b, err := os.ReadFile(filepath.Join(root, "marker"))
		if want := []string{"a\n", "b\n"}[i]; err != nil || string(b) != want {
			t.Errorf("marker in %s: %q %v, want %q", root, b, err, want)
		}
	}

	// apply_patch runs there too, and a turn may switch environments.
	patch := "*** Begin Patch\n*** Add File: patched.txt\n+from the patch\n*** End Patch"
	if st := envToolOutput(t, thA, agent.UserInput{Input: text("PATCH:" + patch), Overrides: agent.Overrides{Environments: envsOf("b", rootB)}}); st != "completed" {
		t.Fatalf("patch: %s", st)
	}
	if b, err := os.ReadFile(filepath.Join(rootB, "patched.txt")); err != nil || string(b) != "from the patch\n" {
		t.Fatalf("patched file in b: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(rootA, "patched.txt")); err == nil {
		t.Fatal("the patch landed in a")
	}
	// The switch is sticky: the next turn of thread A still runs on b.
	if out := envToolOutput(t, thA, agent.UserInput{Input: text("RUN:pwd")}); out != rootB+"\n" {
		t.Fatalf("next turn ran in %q", out)
	}
}

// environments: [] leaves a turn without environment access, as Codex
// 0.169 answers it (observed side by side, session environments-empty):
// exec_command gets Codex's text and starts no command item; apply_patch is
// no tool of such a turn. The choice is sticky: a later turn that names no
// environments has none either, until one names an environment again.
func TestEnvironmentsNone(t *testing.T) {
	m := scriptedByInput()
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{Environments: &[]agent.Environment{}})
	lastOutput := func(in agent.UserInput) (string, []agent.Event) {
		t.Helper()
		if _, err := th.Submit(context.Background(), in); err != nil {
			t.Fatal(err)
		}
		evs := until(t, th, isTurnCompleted)
		m.mu.Lock()
		defer m.mu.Unlock()
		for i := len(m.requests) - 1; i >= 0; i-- {
			in := m.requests[i].Input
			if last := in[len(in)-1]; last.Output != nil {
				return *last.Output, evs
			}
		}
		t.Fatalf("no tool output reached the model: %s", describe(evs))
		return "", nil
	}
	for _, in := range []string{"RUN:echo should-not-run", "RUN:echo still-none"} {
		out, evs := lastOutput(agent.UserInput{Input: text(in)})
		if out != noEnvironmentText {
			t.Fatalf("%s: output %q", in, out)
		}
		if cmds := itemsCompleted[*agent.CommandExecution](evs); len(cmds) != 0 {
			t.Fatalf("%s: a command item without an environment: %s", in, describe(evs))
		}
	}
	if out, evs := lastOutput(agent.UserInput{Input: text("PATCH:*** Begin Patch\n*** Add File: p.txt\n+hi\n*** End Patch\n")}); out != "unsupported call: apply_patch" {
		t.Fatalf("apply_patch without an environment: %q (%s)", out, describe(evs))
	}
	if _, err := os.Stat(filepath.Join(h.dir, "p.txt")); err == nil {
		t.Fatal("the patch was applied")
	}
	// A model that is offered apply_patch gets the same answer as for
	// exec_command.
	th = h.start(agent.Overrides{Model: strp("gpt-5.5"), Environments: &[]agent.Environment{}})
	if out, evs := lastOutput(agent.UserInput{Input: text("PATCH:*** Begin Patch\n*** Add File: p.txt\n+hi\n*** End Patch\n")}); out != noEnvironmentText {
		t.Fatalf("an offered apply_patch without an environment: %q (%s)", out, describe(evs))
	}
	if _, err := os.Stat(filepath.Join(h.dir, "p.txt")); err == nil {
		t.Fatal("the patch was applied")
	}
	th = h.start(agent.Overrides{Environments: &[]agent.Environment{}})
	// A later turn that names local runs again, and so does the next.
	out := envToolOutput(t, th, agent.UserInput{Input: text("RUN:echo ran"), Overrides: agent.Overrides{Environments: envsOf("local", h.dir)}})
	if out != "ran\n" {
		t.Fatalf("output %q", out)
	}
	if out := envToolOutput(t, th, agent.UserInput{Input: text("RUN:echo again")}); out != "again\n" {
		t.Fatalf("output %q", out)
	}
}

// An exec-server that never comes back fails the running command of its
// thread with an error naming the environment; a thread on another
// environment goes on.
func TestEnvironmentsServerLost(t *testing.T) {
	url, root := envServer(t)
	px := cutproxy.New(t, strings.TrimPrefix(url, "ws://"))
	reg := environment.New(environment.Options{Client: execclient.Options{
		ReconnectAttempts: 1, ReconnectTimeout: 2 * time.Second, DialTimeout: time.Second}})
	t.Cleanup(func() { reg.Close() })
	if err := reg.Add(environment.AddParams{ID: "r", URL: "ws://" + px.Addr()}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, scriptedByInput(), func(c *Config) { c.Environments = reg })
	thR := h.start(agent.Overrides{Environments: envsOf("r", root)})
	thL := h.start(agent.Overrides{})
	if _, err := thR.Submit(context.Background(), agent.UserInput{Input: text("RUN:echo started; sleep 60")}); err != nil {
		t.Fatal(err)
	}
	until(t, thR, func(ev agent.Event) bool {
		d, ok := ev.Msg.(agent.CommandOutputDelta)
		return ok && strings.Contains(string(d.Data), "started")
	})
	px.Kill()
	evs := until(t, thR, isTurnCompleted)
	cmds := itemsCompleted[*agent.CommandExecution](evs)
	if len(cmds) != 1 || cmds[0].Output == nil || !strings.Contains(*cmds[0].Output, "the exec-server of environment `r` was lost") ||
		cmds[0].Status != agent.ItemStatusFailed {
		t.Fatalf("the command's item: %s", describe(evs))
	}
	if out := envToolOutput(t, thL, agent.UserInput{Input: text("RUN:echo fine")}); out != "fine\n" {
		t.Fatalf("the local thread's command printed %q", out)
	}
}

// A command started while the client resumes a session that is then lost
// fails naming its environment, as a running one does.
func TestEnvironmentsStartDuringLostResume(t *testing.T) {
	url, root := envServer(t)
	px := cutproxy.New(t, strings.TrimPrefix(url, "ws://"))
	// The resume keeps trying for 2s, long after the command asks to start.
	reg := environment.New(environment.Options{Client: execclient.Options{
		ReconnectAttempts: 5, ReconnectBackoff: 300 * time.Millisecond, ReconnectTimeout: 2 * time.Second, DialTimeout: time.Second}})
	t.Cleanup(func() { reg.Close() })
	if err := reg.Add(environment.AddParams{ID: "r", URL: "ws://" + px.Addr()}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, scriptedByInput(), func(c *Config) { c.Environments = reg })
	th := h.start(agent.Overrides{Environments: envsOf("r", root)})
	if out := envToolOutput(t, th, agent.UserInput{Input: text("RUN:echo up")}); out != "up\n" {
		t.Fatalf("before the cut: %q", out)
	}
	px.Kill()
	if out := envToolOutput(t, th, agent.UserInput{Input: text("RUN:echo during")}); !strings.Contains(out, "environment `r`") {
		t.Fatalf("a start that failed with the session: %q", out)
	}
}

// An exec-server that restarts loses its session: the command that ran in
// it fails, naming the environment and saying the session was refused; the
// registry opens a fresh session by itself and announces it, and the next
// turn of the thread runs there.
func TestEnvironmentsServerRestarted(t *testing.T) {
	srv := execproctest.Start(t)
	reg := environment.New(environment.Options{Client: execclient.Options{
		ReconnectAttempts: 1000, ReconnectTimeout: 20 * time.Second, ReconnectMaxBackoff: 100 * time.Millisecond}})
	t.Cleanup(func() { reg.Close() })
	if err := reg.Add(environment.AddParams{ID: "r", URL: srv.URL}); err != nil {
		t.Fatal(err)
	}
	connected := make(chan struct{}, 1)
	stop := reg.Watch(func(e environment.Event) {
		if e.ID == "r" && e.Connected {
			select {
			case connected <- struct{}{}:
			default:
			}
		}
	})
	defer stop()
	h := newHarness(t, scriptedByInput(), func(c *Config) { c.Environments = reg })
	th := h.start(agent.Overrides{Environments: envsOf("r", srv.Root)})
	if _, err := th.Submit(context.Background(), agent.UserInput{Input: text("RUN:echo started; sleep 60")}); err != nil {
		t.Fatal(err)
	}
	until(t, th, func(ev agent.Event) bool {
		d, ok := ev.Msg.(agent.CommandOutputDelta)
		return ok && strings.Contains(string(d.Data), "started")
	})
	srv.Kill()
	srv.Start()
	evs := until(t, th, isTurnCompleted)
	cmds := itemsCompleted[*agent.CommandExecution](evs)
	if len(cmds) != 1 || cmds[0].Output == nil || cmds[0].Status != agent.ItemStatusFailed ||
		!strings.Contains(*cmds[0].Output, "the exec-server of environment `r` was lost") || !strings.Contains(*cmds[0].Output, "restarted") {
		t.Fatalf("the command's item: %s", describe(evs))
	}
	select {
	case <-connected:
	case <-time.After(30 * time.Second):
		t.Fatal("the fresh session was not announced")
	}
	if out := envToolOutput(t, th, agent.UserInput{Input: text("RUN:echo again; pwd")}); out != "again\n"+srv.Root+"\n" {
		t.Fatalf("the next turn printed %q", out)
	}
}

// A sandboxed command on a remote environment is confined where it runs,
// by the exec-server with its own sandbox helper: the app-server's
// executable path means nothing on another machine. Here the exec-server
// runs from a copy of the binary at another path, and the path the core
// would wrap commands with does not exist at all.
func TestEnvironmentsRemoteSandbox(t *testing.T) {
	if _, err := sandbox.Available(); err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	srv := execproctest.StartCopy(t)
	reg := environment.New(environment.Options{})
	t.Cleanup(func() { reg.Close() })
	if err := reg.Add(environment.AddParams{ID: "r", URL: srv.URL}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, scriptedByInput(), func(c *Config) {
		c.Environments = reg
		c.Sandbox = LandlockSandbox{Self: filepath.Join(t.TempDir(), "no-such-app-server")}
	})
	outside := filepath.Join(t.TempDir(), "escaped")
	// t.TempDir lives under /tmp, which workspace-write allows unless
	// excluded.
	ws := agent.SandboxPolicy{Mode: agent.SandboxWorkspaceWrite, ExcludeSlashTmp: true, ExcludeTmpdirEnvVar: true}
	th := h.start(agent.Overrides{Environments: envsOf("r", srv.Root), Sandbox: &ws})
	out := envToolOutput(t, th, agent.UserInput{Input: text("RUN:echo in > inside && cat inside && (echo out > " + outside + ") 2>/dev/null || echo denied")})
	if out != "in\ndenied\n" {
		t.Fatalf("the confined command printed %q", out)
	}
	if _, err := os.Stat(filepath.Join(srv.Root, "inside")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Fatal("the command wrote outside its workspace")
	}
	// Read-only: nothing is writable, not even the workspace.
	ro := agent.SandboxPolicy{Mode: agent.SandboxReadOnly}
	out = envToolOutput(t, th, agent.UserInput{Input: text("RUN:(echo x > ro) 2>/dev/null || echo denied"), Overrides: agent.Overrides{Sandbox: &ro}})
	if out != "denied\n" {
		t.Fatalf("read-only printed %q", out)
	}
}

// A new thread that names no environment gets the configured default
// (environments.toml's `default`), in its cwd; "none" gets none.
func TestEnvironmentsDefault(t *testing.T) {
	url, root := envServer(t)
	reg := environment.New(environment.Options{})
	t.Cleanup(func() { reg.Close() })
	if err := reg.Add(environment.AddParams{ID: "a", URL: url}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, scriptedByInput(), func(c *Config) { c.Environments, c.DefaultEnvironment = reg, "a" })
	l, err := h.core.StartThread(context.Background(), agent.StartOptions{Overrides: agent.Overrides{Cwd: &root}})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Thread.Settings().Environments; len(got) != 1 || got[0].ID != "a" || got[0].Cwd != root {
		t.Fatalf("environments %+v", got)
	}
	if out := envToolOutput(t, l.Thread, agent.UserInput{Input: text("RUN:pwd")}); out != root+"\n" {
		t.Fatalf("ran in %q", out)
	}

	h2 := newHarness(t, scriptedByInput(), func(c *Config) { c.DefaultEnvironment = "none" })
	th := h2.start(agent.Overrides{})
	if _, err := th.Submit(context.Background(), agent.UserInput{Input: text("RUN:echo x")}); err != nil {
		t.Fatal(err)
	}
	if evs := until(t, th, isTurnCompleted); len(itemsCompleted[*agent.CommandExecution](evs)) != 0 {
		t.Fatalf("without a default environment a command ran: %s", describe(evs))
	}
}

// A new thread that names no environment gets, as in Codex 0.169, every
// configured environment: the default first (the core's own exec-server,
// `local`, when none is configured), then the others by id (Codex: in no
// fixed order), each in the thread's cwd with its workspace roots (the
// cwd and the writable roots). They are fixed when the thread starts (an
// environment added later is not among them); its tools run on the first.
// A cwd given to a turn or a settings update (even the thread's own)
// without environments gives the thread the defaults anew, in that cwd,
// as Codex does, even after it named its own.
func TestEnvironmentsDefaultAll(t *testing.T) {
	url, root := envServer(t)
	reg := environment.New(environment.Options{})
	t.Cleanup(func() { reg.Close() })
	for _, id := range []string{"x", "a"} {
		if err := reg.Add(environment.AddParams{ID: id, URL: url}); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, scriptedByInput(), func(c *Config) { c.Environments = reg })
	ww := agent.SandboxPolicy{Mode: agent.SandboxWorkspaceWrite, WritableRoots: []string{root + "/extra/"}}
	cwd := t.TempDir()
	th := h.start(agent.Overrides{Cwd: &cwd, Sandbox: &ww})
	ids := func(envs []agent.Environment, cwd string, roots ...string) string {
		var b strings.Builder
		for _, e := range envs {
			fmt.Fprintf(&b, "%s", e.ID)
			if e.Cwd != cwd || !slices.Equal(e.RuntimeWorkspaceRoots, append([]string{cwd}, roots...)) {
				fmt.Fprintf(&b, "(%s %q)", e.Cwd, e.RuntimeWorkspaceRoots)
			}
			b.WriteString(" ")
		}
		return b.String()
	}
	if got := ids(th.Settings().Environments, cwd, root+"/extra"); got != "local a x " {
		t.Fatalf("environments %s", got)
	}
	if err := reg.Add(environment.AddParams{ID: "b", URL: url}); err != nil {
		t.Fatal(err)
	}
	if out := envToolOutput(t, th, agent.UserInput{Input: text("RUN:pwd")}); out != cwd+"\n" {
		t.Fatalf("ran in %q", out)
	}
	if got := ids(th.Settings().Environments, cwd, root+"/extra"); got != "local a x " {
		t.Fatalf("after an environment was added: %s", got)
	}
	if out := envToolOutput(t, th, agent.UserInput{Input: text("RUN:pwd"), Overrides: agent.Overrides{Cwd: &root}}); out != root+"\n" {
		t.Fatalf("after a change of cwd ran in %q", out)
	}
	if got := ids(th.Settings().Environments, root, root+"/extra"); got != "local a b x " {
		t.Fatalf("after a change of cwd: %s", got)
	}
	own := []agent.Environment{{ID: "x", Cwd: root, RuntimeWorkspaceRoots: []string{root}}}
	h.submit(th, agent.UpdateSettings{Overrides: agent.Overrides{Environments: &own}})
	if got := ids(th.Settings().Environments, root); got != "x " {
		t.Fatalf("named: %s", got)
	}
	h.submit(th, agent.UpdateSettings{Overrides: agent.Overrides{Cwd: &root}})
	if got := ids(th.Settings().Environments, root, root+"/extra"); got != "local a b x " {
		t.Fatalf("after its own cwd was given again: %s", got)
	}
}
