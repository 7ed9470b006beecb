package appserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
)

const elicitationMethod = "mcpServer/elicitation/request"

func hint(b bool) *bool { return &b }

// mcpApprovalScript asks for req, then completes the call's item as the
// decision says.
func mcpApprovalScript(req agent.MCPToolApprovalRequest) agenttest.TurnFunc {
	return func(t *agenttest.Turn) {
		item := &agent.MCPToolCall{ID: req.CallID, Server: req.Server, Tool: req.Tool, Arguments: req.Arguments, Status: agent.ItemStatusInProgress}
		if !t.Emit(agent.ItemStarted{Item: item}) {
			return
		}
		d, err := t.MCPApproval(req)
		if err != nil {
			return
		}
		done := *item
		switch d.Decision {
		case agent.Accept, agent.AcceptForSession:
			done.Status = agent.ItemStatusCompleted
			done.Result = &agent.MCPResult{Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"hi"}`)}}
		case agent.Cancel:
			done.Status, done.Error = agent.ItemStatusFailed, "user cancelled MCP tool call"
		default:
			done.Status, done.Error = agent.ItemStatusFailed, "user rejected MCP tool call"
		}
		t.Emit(agent.ItemCompleted{Item: &done})
		t.AgentMessage(t.NewID(), "done")
	}
}

var destroyApproval = agent.MCPToolApprovalRequest{
	CallID: "call_1", Server: "t", Tool: "destroy", Title: "Destroy", Description: "Echoes its text, destructively.",
	Message: `Allow the t MCP server to run tool "destroy"?`, Arguments: json.RawMessage(`{"text":"hi"}`),
	ReadOnlyHint: hint(false), DestructiveHint: hint(true), IdempotentHint: hint(false), Remember: true,
}

// An MCP tool approval goes out as Codex 0.169 sends it: an
// mcpServer/elicitation/request in form mode with an empty schema and the
// call in _meta (this params text is Codex's, byte for byte, from its
// app-server against mcp/internal/testserver's destroy tool); each answer
// maps onto the core's decision as Codex reads it.
func TestMCPApprovalRequest(t *testing.T) {
	cases := []struct {
		answer   string
		decision agent.Decision
		status   string
	}{
		{`{"action":"accept","content":{}}`, agent.Accept, "completed"},
		{`{"action":"accept","content":null,"_meta":{"persist":"session"}}`, agent.AcceptForSession, "completed"},
		{`{"action":"accept","_meta":{"persist":"always"}}`, agent.AcceptForSession, "completed"},
		{`{"action":"decline"}`, agent.Decline, "failed"},
		{`{"action":"cancel"}`, agent.Cancel, "failed"},
		{`{"action":"bogus"}`, agent.Decline, "failed"},
		{`error`, agent.Decline, "failed"},
	}
	for _, tc := range cases {
		t.Run(tc.answer, func(t *testing.T) {
			e := newEnv(t, agenttest.Options{Turn: mcpApprovalScript(destroyApproval)}, Config{})
			c := e.dial("approver")
			c.initialize(nil)
			thread := c.startThread(map[string]any{"approvalPolicy": "on-request"})
			turn := c.startTurn(thread, "call it")
			req := c.serverRequest(elicitationMethod)
			want := `{"threadId":"` + thread + `","turnId":"` + turn + `","serverName":"t","mode":"form","_meta":{"codex_approval_kind":"mcp_tool_call","persist":["session","always"],"tool_name":"destroy","tool_annotations":{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false},"tool_title":"Destroy","tool_description":"Echoes its text, destructively.","tool_params":{"text":"hi"},"tool_params_display":[{"name":"text","value":"hi","display_name":"text"}]},"message":"Allow the t MCP server to run tool \"destroy\"?","requestedSchema":{"type":"object","properties":{}}}`
			if string(req.Params) != want {
				t.Fatalf("params\n got %s\nwant %s", req.Params, want)
			}
			c.next("waitingOnApproval", func(m *wmsg) bool {
				return m.Method == "thread/status/changed" && strings.Contains(string(m.Params), "waitingOnApproval")
			})
			if tc.answer == "error" {
				c.send(`{"id":` + string(req.ID) + `,"error":{"code":-32000,"message":"client refuses"}}`)
			} else {
				c.send(`{"id":` + string(req.ID) + `,"result":` + tc.answer + `}`)
			}
			c.note("serverRequest/resolved")
			item := c.next("the call's item/completed", func(m *wmsg) bool {
				return m.Method == "item/completed" && strings.Contains(string(m.Params), `"type":"mcpToolCall"`)
			})
			if got := item.str(t, "/item/status"); got != tc.status {
				t.Fatalf("item status %s, want %s", got, tc.status)
			}
			c.note("turn/completed")
			ds := e.core.Thread(thread).Decisions()
			if len(ds) != 1 || ds[0].(agent.MCPToolApprovalDecision).Decision != tc.decision {
				t.Fatalf("decisions %+v, want one %s", ds, tc.decision)
			}
		})
	}
}

// The _meta carries what the call has: no persist options when the tool's
// mode forbids remembering, no annotations when the server gave none, an
// empty display for empty arguments and no params at all without them.
func TestMCPApprovalMetaVariants(t *testing.T) {
	cases := []struct {
		req  agent.MCPToolApprovalRequest
		meta string
	}{
		{agent.MCPToolApprovalRequest{CallID: "c", Server: "t", Tool: "echo", Description: "Echoes its text.", Arguments: json.RawMessage(`{"text":"hi"}`),
			ReadOnlyHint: hint(true), IdempotentHint: hint(false)},
			`{"codex_approval_kind":"mcp_tool_call","tool_name":"echo","tool_annotations":{"readOnlyHint":true,"idempotentHint":false},"tool_description":"Echoes its text.","tool_params":{"text":"hi"},"tool_params_display":[{"name":"text","value":"hi","display_name":"text"}]}`},
		{agent.MCPToolApprovalRequest{CallID: "c", Server: "t", Tool: "elicit", Description: "Asks the user for a name.", Arguments: json.RawMessage(`{}`), Remember: true},
			`{"codex_approval_kind":"mcp_tool_call","persist":["session","always"],"tool_name":"elicit","tool_description":"Asks the user for a name.","tool_params":{},"tool_params_display":[]}`},
		{agent.MCPToolApprovalRequest{CallID: "c", Server: "t", Tool: "x", Arguments: json.RawMessage(`{"b":2,"a":[1]}`)},
			`{"codex_approval_kind":"mcp_tool_call","tool_name":"x","tool_params":{"b":2,"a":[1]},"tool_params_display":[{"name":"a","value":[1],"display_name":"a"},{"name":"b","value":2,"display_name":"b"}]}`},
		{agent.MCPToolApprovalRequest{CallID: "c", Server: "t", Tool: "x"},
			`{"codex_approval_kind":"mcp_tool_call","tool_name":"x"}`},
	}
	for _, tc := range cases {
		e := newEnv(t, agenttest.Options{Turn: mcpApprovalScript(tc.req)}, Config{})
		c := e.dial("approver")
		c.initialize(nil)
		thread := c.startThread(nil)
		c.startTurn(thread, "call it")
		req := c.serverRequest(elicitationMethod)
		if !strings.Contains(string(req.Params), `"_meta":`+tc.meta+`,"message"`) {
			t.Fatalf("params %s\nwant meta %s", req.Params, tc.meta)
		}
		c.send(`{"id":` + string(req.ID) + `,"result":{"action":"accept"}}`)
		c.note("turn/completed")
	}
}

// The rules of every approval hold: a turn boundary withdraws the request
// and no decision reaches the core; with no subscriber left the call is
// cancelled.
func TestMCPApprovalWithdrawnAndOrphaned(t *testing.T) {
	e := newEnv(t, agenttest.Options{Turn: mcpApprovalScript(destroyApproval)}, Config{})
	c := e.dial("boundary")
	c.initialize(nil)
	thread := c.startThread(nil)
	turn := c.startTurn(thread, "call it")
	req := c.serverRequest(elicitationMethod)
	c.call(appproto.MethodTurnInterrupt, map[string]any{"threadId": thread, "turnId": turn})
	c.note("turn/completed")
	c.note("serverRequest/resolved")
	c.send(`{"id":` + string(req.ID) + `,"result":{"action":"accept"}}`) // too late
	c.barrier()
	if ds := e.core.Thread(thread).Decisions(); len(ds) != 0 {
		t.Fatalf("a decision reached the core after the turn ended: %+v", ds)
	}

	watcher := e.dial("watcher")
	watcher.initialize(nil)
	c.startTurn(thread, "again")
	c.serverRequest(elicitationMethod)
	c.conn.Close()
	watcher.next("idle", func(m *wmsg) bool {
		return m.Method == "thread/status/changed" && strings.Contains(string(m.Params), `"idle"`)
	})
	ds := e.core.Thread(thread).Decisions()
	if len(ds) != 1 || ds[0].(agent.MCPToolApprovalDecision).Decision != agent.Cancel {
		t.Fatalf("decisions %+v, want one cancel", ds)
	}
}
