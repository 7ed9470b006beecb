//go:build linux

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	writeFile(t, filepath.Join(serverHome, "config.toml"), tuiServerConfig(modelURL, "on-request", "danger-full-access",
		fmt.Sprintf("[mcp_servers.tests]\ncommand = %q\nrequired = true\n", mcpServer)))
	server := startTUIServer(t, codexd, work, serverHome, tmp, home)

	tui := startRemoteTUI(t, root, work, tmp, home, codex, server.URL, `sandbox_mode = "danger-full-access"`)
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
	// first waits for the thread's start: the header's "loading" gives way
	// to the work dir, and thread/started has crossed the wire. The status
	// line's model shows before that, so it is no sign (the test failed
	// under load waiting on it).
	tui.waitFor("the thread to start", wait, func(s string) bool {
		return strings.Contains(s, ">_ OpenAI Codex") && !strings.Contains(s, "loading") &&
			strings.Contains(s, "To get started") && strings.Contains(server.proxy.transcript(100000), `"method":"thread/started"`)
	})
	command("/mcp")
	tui.waitText(wait, "MCP Tools", "tests: connected (8 tools)")
	command("/mcp verbose")
	tui.waitText(wait, "Tools: crash, destroy, echo, elicit, open, pid, slow, withdraw")

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

	quitTUI(t, tui, wait)
	server.stop()
}
