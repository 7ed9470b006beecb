package appserver

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexd/codexd/appproto"
)

func init() {
	responseSchema[appproto.MethodMcpServerStatusList] = "testdata/schema/mcp/ListMcpServerStatusResponse.json"
	responseSchema[appproto.MethodConfigMcpServerReload] = "testdata/schema/mcp/McpServerRefreshResponse.json"
	responseSchema[appproto.MethodMcpServerToolCall] = "testdata/schema/mcp/McpServerToolCallResponse.json"
	responseSchema[appproto.MethodMcpServerResourceRead] = "testdata/schema/mcp/McpResourceReadResponse.json"
}

// mcpStatusPage decodes an mcpServerStatus/list answer.
type mcpStatusPage struct {
	Data []struct {
		Name          string
		RuntimeStatus *string
		ServerInfo    *struct{ Name, Version string }
		Tools         map[string]struct{ Name string }
		ToolsError    *string
		AuthStatus    string
	}
	NextCursor *string
}

func statusPage(t *testing.T, m *wmsg) mcpStatusPage {
	t.Helper()
	var p mcpStatusPage
	if err := json.Unmarshal(m.Result, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// The app-server's MCP methods over real servers, as Codex 0.169 answers
// them (checked side by side: corpus session mcp-servers).
func TestMCPServerMethods(t *testing.T) {
	bin := buildMCPTestServer(t)
	tables := fmt.Sprintf(`[mcp_servers.tests]
command = %q
[mcp_servers.broken]
command = "/nonexistent/mcp-server"
[mcp_servers.off]
command = %q
enabled = false
`, bin, bin)
	e := newMCPEnv(t, tables)
	c := e.dial("A")
	c.initialize(nil)

	// Without a thread: the servers are started for the answer.
	all := statusPage(t, c.call("mcpServerStatus/list", map[string]any{}))
	if len(all.Data) != 3 || all.Data[0].Name != "broken" || all.Data[1].Name != "off" || all.Data[2].Name != "tests" || all.NextCursor != nil {
		t.Fatalf("list: %+v", all)
	}
	if b := all.Data[0]; b.ToolsError == nil || b.RuntimeStatus != nil || len(b.Tools) != 0 || b.AuthStatus != "unsupported" {
		t.Errorf("broken: %+v", b)
	}
	if o := all.Data[1]; o.ToolsError != nil || len(o.Tools) != 0 || o.ServerInfo != nil {
		t.Errorf("off: %+v", o)
	}
	if ts := all.Data[2]; ts.ServerInfo == nil || ts.ServerInfo.Name != "testserver" || ts.Tools["echo"].Name != "echo" || ts.ToolsError != nil {
		t.Errorf("tests: %+v", ts)
	}
	page := statusPage(t, c.call("mcpServerStatus/list", map[string]any{"limit": 0, "cursor": "1", "detail": "toolsAndAuthOnly"}))
	if len(page.Data) != 1 || page.Data[0].Name != "off" || page.NextCursor == nil || *page.NextCursor != "2" {
		t.Errorf("page: %+v", page)
	}
	if p := statusPage(t, c.call("mcpServerStatus/list", map[string]any{"cursor": "3"})); len(p.Data) != 0 || p.NextCursor != nil {
		t.Errorf("past the end: %+v", p)
	}
	for params, want := range map[string]string{
		`{"cursor":"abc"}`:  "invalid cursor: abc",
		`{"cursor":"4"}`:    "cursor 4 exceeds total MCP servers 3",
		`{"detail":"most"}`: "Invalid request: unknown variant `most`, expected `full` or `toolsAndAuthOnly`",
		`{"threadId":"00000000-0000-7000-8000-000000000000"}`: "thread not found: 00000000-0000-7000-8000-000000000000",
	} {
		if err := c.callErr("mcpServerStatus/list", json.RawMessage(params)); err.Code != -32600 || err.Message != want {
			t.Errorf("%s: %d %s", params, err.Code, err.Message)
		}
	}

	// A thread's servers announce their startup after thread/started.
	thread := c.startThread(nil)
	status := func(server, state string) *wmsg {
		return c.next(server+" "+state, func(m *wmsg) bool {
			return m.Method == "mcpServer/startupStatus/updated" && strings.Contains(string(m.Params), `"name":"`+server+`"`) &&
				strings.Contains(string(m.Params), `"status":"`+state+`"`) && strings.Contains(string(m.Params), thread)
		})
	}
	status("tests", "starting")
	status("tests", "ready")
	status("broken", "starting")
	if f := status("broken", "failed"); !strings.Contains(string(f.Params), "nonexistent") {
		t.Errorf("failed without its reason: %s", f.raw)
	}
	byThread := statusPage(t, c.call("mcpServerStatus/list", map[string]any{"threadId": thread}))
	got := map[string]string{}
	for _, d := range byThread.Data {
		got[d.Name] = *d.RuntimeStatus
	}
	if got["tests"] != "connected" || got["broken"] != "failed" || got["off"] != "disabled" {
		t.Errorf("runtime statuses: %v", got)
	}

	// Direct calls, and Codex's errors.
	res := c.call("mcpServer/tool/call", map[string]any{"threadId": thread, "server": "tests", "tool": "echo", "arguments": map[string]any{"text": "direct"}})
	if string(res.Result) != `{"content":[{"type":"text","text":"direct"}]}` {
		t.Errorf("tool/call: %s", res.Result)
	}
	for _, tc := range []struct {
		params string
		code   int64
		msg    string
	}{
		{`{"threadId":"` + thread + `","server":"nope","tool":"echo"}`, -32603, "unknown MCP server 'nope'"},
		{`{"threadId":"` + thread + `","server":"off","tool":"echo"}`, -32603, "unknown MCP server 'off'"},
		{`{"threadId":"` + thread + `","server":"tests","tool":"nope"}`, -32602, `unknown tool "nope"`},
		{`{"threadId":"` + thread + `","server":"tests","tool":"echo","arguments":[1]}`, -32603, "tool call failed for `tests/echo`: MCP tool arguments must be a JSON object, got [1]"},
		{`{"server":"tests"}`, -32600, "Invalid request: missing field `threadId`"},
	} {
		if err := c.callErr("mcpServer/tool/call", json.RawMessage(tc.params)); err.Code != tc.code || err.Message != tc.msg {
			t.Errorf("tool/call %s: %d %s", tc.params, err.Code, err.Message)
		}
	}
	if err := c.callErr("mcpServer/resource/read", map[string]any{"threadId": thread, "server": "tests", "uri": "x://y"}); err.Code != -32602 {
		t.Errorf("resource/read of a missing resource: %d %s", err.Code, err.Message)
	}
	if err := c.callErr("mcpServer/resource/read", map[string]any{"server": "nope", "uri": "x://y"}); err.Code != -32603 || err.Message != "unknown MCP server 'nope'" {
		t.Errorf("resource/read of an unknown server: %d %s", err.Code, err.Message)
	}

	// Reload: broken goes, added comes, tests is unchanged and ready again.
	cfgPath := filepath.Join(e.home, "config.toml")
	old, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(string(old), "[mcp_servers.")
	if err := os.WriteFile(cfgPath, []byte(head+fmt.Sprintf("[mcp_servers.tests]\ncommand = %q\n[mcp_servers.added]\ncommand = %q\n", bin, bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := c.call("config/mcpServer/reload", nil); string(r.Result) != `{}` {
		t.Errorf("reload: %s", r.Result)
	}
	status("added", "starting")
	status("added", "ready")
	status("tests", "ready")
	after := statusPage(t, c.call("mcpServerStatus/list", map[string]any{"threadId": thread, "detail": "toolsAndAuthOnly"}))
	if len(after.Data) != 2 || after.Data[0].Name != "added" || *after.Data[0].RuntimeStatus != "connected" || after.Data[1].Name != "tests" {
		t.Errorf("after reload: %+v", after)
	}
	if err := c.callErr("config/mcpServer/reload", map[string]any{"x": 1}); err.Code != -32600 || err.Message != "Invalid request: invalid type: map, expected unit" {
		t.Errorf("reload with params: %d %s", err.Code, err.Message)
	}

	// A server that exits mid-call: Codex's words.
	if err := c.callErr("mcpServer/tool/call", map[string]any{"threadId": thread, "server": "tests", "tool": "crash"}); err.Code != -32603 || err.Message != "tool call failed for `tests/crash`: Transport closed" {
		t.Errorf("tool/call of a crashing tool: %d %s", err.Code, err.Message)
	}
}

// A forked thread has MCP servers of its own, and its subscriber hears
// their startup after the fork's thread/started, as for thread/start.
func TestMCPStartupStatusOfAFork(t *testing.T) {
	e := newMCPEnv(t, fmt.Sprintf("[mcp_servers.tests]\ncommand = %q\n", buildMCPTestServer(t)))
	c := e.dial("A")
	c.initialize(nil)
	thread := c.startThread(nil)
	c.startTurn(thread, "MOCK:hello")
	c.next("turn/completed", func(m *wmsg) bool { return m.Method == "turn/completed" })
	fork := c.call("thread/fork", map[string]any{"threadId": thread}).str(t, "/thread/id")
	if fork == thread {
		t.Fatal("the fork has the thread's id")
	}
	for _, state := range []string{"starting", "ready"} {
		c.next("the fork's "+state, func(m *wmsg) bool {
			return m.Method == "mcpServer/startupStatus/updated" && strings.Contains(string(m.Params), fork) &&
				strings.Contains(string(m.Params), `"status":"`+state+`"`)
		})
	}
}
