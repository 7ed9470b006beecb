package appserver

import (
	"fmt"
	"strings"
	"testing"
)

// Over the real core and a real MCP server: the server's elicitation
// reaches the client as mcpServer/elicitation/request and the client's
// answer reaches the server, which puts it in its result.
func TestMCPElicitationEndToEnd(t *testing.T) {
	t.Run("testserver", func(t *testing.T) {
		table := fmt.Sprintf("[mcp_servers.tests]\ncommand = %q\nrequired = true\ndefault_tools_approval_mode = \"approve\"\n", buildMCPTestServer(t))
		elicitTurn(t, table, "MOCK:tool mcp__tests__elicit {\"message\":\"Name?\"}", "tests", "Name?", `action=accept content={"name":"Ada"}`)
	})
	t.Run("everything", func(t *testing.T) {
		table := everythingServer(t) + "default_tools_approval_mode = \"approve\"\n"
		elicitTurn(t, table, "MOCK:tool mcp__everything__trigger_elicitation_request {}", "everything", "", "Ada")
	})
}

func elicitTurn(t *testing.T, table, prompt, server, message, want string) {
	e := newMCPEnv(t, table)
	c := e.dial("A")
	c.initialize(nil)
	// A policy that asks (under never, the env's default, Codex and
	// codexd decline a server's elicitation).
	thread := c.startThread(map[string]any{"approvalPolicy": "on-request"})
	turn := c.startTurn(thread, prompt)
	req := c.serverRequest(elicitationMethod)
	if req.str(t, "/threadId") != thread || req.str(t, "/turnId") != turn || req.str(t, "/serverName") != server ||
		req.str(t, "/mode") != "form" || (message != "" && req.str(t, "/message") != message) ||
		!strings.Contains(string(req.Params), `"requestedSchema":{`) {
		t.Fatalf("request: %s", req)
	}
	c.send(`{"id":` + string(req.ID) + `,"result":{"action":"accept","content":{"name":"Ada"}}}`)
	c.note("serverRequest/resolved")
	done := c.next("the call's item/completed", func(m *wmsg) bool {
		return m.Method == "item/completed" && strings.Contains(string(m.Params), `"type":"mcpToolCall"`)
	})
	if done.str(t, "/item/status") != "completed" || !strings.Contains(string(done.Params), strings.ReplaceAll(want, `"`, `\"`)) {
		t.Fatalf("item/completed: %s", done)
	}
	c.note("turn/completed")
}

// Over the real core and the Go test server: a destructive tool asks under
// on-request, and a declined call never reaches the server.
func TestMCPApprovalEndToEnd(t *testing.T) {
	table := fmt.Sprintf("[mcp_servers.tests]\ncommand = %q\nrequired = true\n", buildMCPTestServer(t))
	e := newMCPEnv(t, table)
	c := e.dial("A")
	c.initialize(nil)
	thread := c.startThread(map[string]any{"approvalPolicy": "on-request"})
	c.startTurn(thread, `MOCK:tool mcp__tests__destroy {"text":"gone"}`)
	req := c.serverRequest(elicitationMethod)
	if !strings.Contains(string(req.Params), `"_meta":{"codex_approval_kind":"mcp_tool_call","persist":["session","always"],"tool_name":"destroy","tool_annotations":{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false},"tool_title":"Destroy"`) ||
		req.str(t, "/message") != `Allow the tests MCP server to run tool "destroy"?` {
		t.Fatalf("request: %s", req)
	}
	c.send(`{"id":` + string(req.ID) + `,"result":{"action":"decline"}}`)
	done := c.next("the call's item/completed", func(m *wmsg) bool {
		return m.Method == "item/completed" && strings.Contains(string(m.Params), `"type":"mcpToolCall"`)
	})
	if done.str(t, "/item/status") != "failed" || done.str(t, "/item/error/message") != "user rejected MCP tool call" {
		t.Fatalf("item/completed: %s", done)
	}
	c.note("turn/completed")
}

// An MCP server that cancels its elicitation/create (notifications/
// cancelled) has its mcpServer/elicitation/request withdrawn at once:
// serverRequest/resolved while the call still runs (the server then asks
// again and waits), not at the turn's end as Codex 0.169 does (README
// [mcp-elicitation-withdrawn]), and the thread no longer waits on it.
func TestMCPElicitationWithdrawnByServer(t *testing.T) {
	// An older protocol, with which the SDK's server may send
	// elicitation/create itself (and so cancel it).
	table := fmt.Sprintf("[mcp_servers.tests]\ncommand = %q\nargs = [\"-protocol\", \"2025-11-25\"]\nrequired = true\n", buildMCPTestServer(t))
	e := newMCPEnv(t, table)
	c := e.dial("A")
	c.initialize(nil)
	// A policy that asks (under never, the env's default, Codex and
	// codexd decline a server's elicitation).
	thread := c.startThread(map[string]any{"approvalPolicy": "on-request"})
	c.startTurn(thread, `MOCK:tool mcp__tests__withdraw {"message":"Name?","ms":200,"again":true}`)
	first := c.serverRequest(elicitationMethod)
	if first.str(t, "/message") != "Name?" {
		t.Fatalf("first request: %s", first)
	}
	// The second question comes whatever happens to the first; the turn
	// cannot end before it is answered, so the first is withdrawn now or
	// never before the turn's end.
	second := c.serverRequest(elicitationMethod)
	if second.str(t, "/message") != "Name? (again)" {
		t.Fatalf("second request: %s", second)
	}
	resolved := c.note("serverRequest/resolved")
	var id any
	if err := resolved.param("/requestId", &id); err != nil || fmt.Sprint(id) != string(first.ID) {
		t.Fatalf("resolved %s, want the first request %s", resolved, first.ID)
	}
	c.send(`{"id":` + string(first.ID) + `,"result":{"action":"accept","content":{"name":"late"}}}`)
	c.send(`{"id":` + string(second.ID) + `,"result":{"action":"accept","content":{"name":"Ada"}}}`)
	done := c.next("the call's item/completed", func(m *wmsg) bool {
		return m.Method == "item/completed" && strings.Contains(string(m.Params), `"type":"mcpToolCall"`)
	})
	if !strings.Contains(string(done.Params), `withdrawn; then action=accept`) {
		t.Fatalf("item/completed: %s", done)
	}
	c.note("turn/completed")
}
