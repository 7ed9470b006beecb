//go:build linux

package integration

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/codexd/codexd/mockmodel"
)

// TestCodexTUIMCP: the Codex 0.169 TUI on `codexd app-server`, with an MCP
// server configured (the Go test server of package mcp), driven through
// tmux: /mcp lists the server and its tools; a prompt that makes the
// model call one of them shows the call and its result, which reaches the
// model; a destructive tool shows Codex's approval prompt first; and a
// server's elicitation shows its form, whose answer reaches the server.
func TestCodexTUIMCP(t *testing.T) {
	codex := codexBin(t)
	tmuxBin(t)
	if !inNetns() {
		t.Setenv("CODEXD_TUI_TEST_BIN", buildCodexd(t))
		t.Setenv("CODEXD_TUI_TEST_MCP", buildMCPTestServer(t))
		runInNetns(t, "TestCodexTUIMCP", 4*time.Minute)
		return
	}
	if err := loopbackUp(); err != nil {
		t.Fatalf("bringing up lo: %v", err)
	}
	codexd, mcpServer := os.Getenv("CODEXD_TUI_TEST_BIN"), os.Getenv("CODEXD_TUI_TEST_MCP")
	root := t.TempDir()
	work, tmp, home := mkdir(t, root, "work"), mkdir(t, root, "tmp"), mkdir(t, root, "home")

	model := mockmodel.New(mockmodel.Options{Logf: t.Logf})
	modelURL, err := model.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()

	// required = true: the thread starts with the server's tools ready.
	serverHome := mkdir(t, root, "codexd-home")
	writeFile(t, filepath.Join(serverHome, "config.toml"), fmt.Sprintf(`
model = "mock-model"
model_provider = "mockhttp"
approval_policy = "on-request"
sandbox_mode = "danger-full-access"
[model_providers.mockhttp]
name = "mock"
base_url = %q
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
[mcp_servers.tests]
command = %q
required = true
`, modelURL, mcpServer))
	server := exec.Command(codexd, "app-server", "--listen", "ws://127.0.0.1:0")
	server.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	server.Dir = work
	server.Env = append(os.Environ(), "CODEX_HOME="+serverHome, "TMPDIR="+tmp, "HOME="+home)
	stdout, err := server.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	serverLog := &lockedBuffer{}
	server.Stderr = serverLog
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	serverDone := make(chan error, 1)
	go func() { serverDone <- server.Wait() }()
	defer func() {
		if server.ProcessState == nil {
			_ = server.Process.Kill()
			<-serverDone
		}
		if t.Failed() {
			t.Logf("codexd app-server stderr:\n%s", serverLog.String())
		}
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the app-server's URL: %v", err)
	}
	proxy, err := startWSProxy(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	defer func() {
		if t.Failed() {
			t.Logf("the last messages between the TUI and codexd:\n%s", proxy.transcript(60))
		}
	}()

	tui := startRemoteTUI(t, root, work, tmp, home, codex, proxy.URL, `sandbox_mode = "danger-full-access"`)
	const wait = 60 * time.Second
	command := func(text string) {
		tui.send(true, text)
		tui.waitText(wait, "› "+text)
		tui.send(false, "Enter")
	}

	// 1. /mcp lists the server, connected, with its count of tools;
	// /mcp verbose names them. The TUI shows its composer before its
	// thread has started; a /mcp typed then asks for the servers of no
	// thread, which have no runtime status yet ("unknown"), so the test
	// first waits, as a person would see, for the thread's model in the
	// status line.
	tui.waitText(wait, "mock-model")
	command("/mcp")
	tui.waitText(wait, "MCP Tools", "tests: connected (7 tools)")
	command("/mcp verbose")
	tui.waitText(wait, "Tools: crash, destroy, echo, elicit, open, pid, slow")

	// 2. The model calls the server's echo tool: the TUI shows the call
	// and its result, and the model gets the output.
	before := len(model.Requests())
	command(`MOCK:tool mcp__tests__echo {"text":"hello through MCP"}`)
	tui.waitFor("the MCP call and its result", wait, func(s string) bool {
		return strings.Contains(s, "Called tests.echo") && strings.Contains(s, "└ hello through MCP") && afterLast(s, "Called tests.echo", "The tool printed:")
	})
	reached := false
	for _, ex := range model.Requests()[before:] {
		body := string(ex.Body)
		if strings.Contains(body, `"function_call_output"`) && strings.Contains(body, `hello through MCP`) && strings.Contains(body, `"namespace":"mcp__tests"`) {
			reached = true
		}
	}
	if !reached {
		t.Fatal("the MCP tool's output never reached the model")
	}

	// 3. A destructive tool asks first, as Codex's own app-server has the
	// TUI ask; allowing it runs the call.
	command(`MOCK:tool mcp__tests__destroy {"text":"gone for good"}`)
	tui.waitText(wait, `Allow the tests MCP server to run tool "destroy"?`, "text: gone for good", "1. Allow", "2. Allow for this session", "4. Cancel")
	tui.send(false, "Enter")
	tui.waitFor("the approved MCP call and its result", wait, func(s string) bool {
		return strings.Contains(s, "Called tests.destroy") && strings.Contains(s, "└ gone for good")
	})

	// 4. A server's elicitation: the TUI shows the server's form, and what
	// is typed there reaches the server (which puts it in its result).
	command(`MOCK:tool mcp__tests__elicit {"message":"Who is asking?"}`)
	tui.waitText(wait, `Allow the tests MCP server to run tool "elicit"?`)
	tui.send(false, "Enter")
	tui.waitText(wait, "Who is asking?", "your name")
	tui.send(true, "Ada")
	tui.waitText(wait, "› Ada")
	tui.send(false, "Enter")
	tui.waitFor("the elicitation's answer in the result", wait, func(s string) bool {
		return strings.Contains(s, "Called tests.elicit") && strings.Contains(s, `action=accept content={"name":"Ada"}`)
	})

	command("/quit")
	scr := tui.waitFor("the TUI to exit", wait, func(s string) bool { return strings.Contains(s, "TUI exited with status") })
	if !strings.Contains(scr, "TUI exited with status 0") {
		t.Fatalf("the TUI did not exit with status 0; its last screen:\n%s", scr)
	}
	_ = server.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-serverDone:
		if err != nil {
			t.Fatalf("codexd app-server after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("codexd app-server did not stop within 30s of SIGTERM")
	}
}
