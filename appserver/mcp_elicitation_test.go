package appserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
)

var nameForm = agent.MCPElicitation{Server: "t", Mode: "form", Message: "Name?",
	RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"your name"}},"required":["name"]}`)}

// elicitScript asks e and reports the answer as the agent's message.
func elicitScript(e agent.MCPElicitation) agenttest.TurnFunc {
	return func(t *agenttest.Turn) {
		a, err := t.Elicit(agent.MCPElicitationRequest{ID: "e1", Elicitation: e})
		if err != nil {
			return
		}
		b, _ := json.Marshal(a.Result.Content)
		t.AgentMessage(t.NewID(), fmt.Sprintf("%s %s", a.Result.Action, b))
	}
}

// A server's elicitation goes out as Codex 0.169 sends it (the params text
// is Codex's for mcp/internal/testserver's elicit tool), and each answer
// goes back to the server as Codex reads it.
func TestMCPElicitationRequest(t *testing.T) {
	cases := []struct {
		answer, got string
	}{
		{`{"action":"accept","content":{"name":"Ada"}}`, `accept {"name":"Ada"}`},
		{`{"action":"accept"}`, `accept null`},
		{`{"action":"decline"}`, `decline null`},
		{`{"action":"cancel","content":null}`, `cancel null`},
		{`{"action":"accept","content":"Ada"}`, `decline null`},
		{`{"action":"bogus"}`, `decline null`},
		{`error`, `decline null`},
	}
	for _, tc := range cases {
		t.Run(tc.answer, func(t *testing.T) {
			e := newEnv(t, agenttest.Options{Turn: elicitScript(nameForm)}, Config{})
			c := e.dial("user")
			c.initialize(nil)
			thread := c.startThread(nil)
			turn := c.startTurn(thread, "ask me")
			req := c.serverRequest(elicitationMethod)
			want := `{"threadId":"` + thread + `","turnId":"` + turn + `","serverName":"t","mode":"form","_meta":null,"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string","description":"your name"}},"required":["name"]}}`
			if string(req.Params) != want {
				t.Fatalf("params\n got %s\nwant %s", req.Params, want)
			}
			c.next("waitingOnApproval", func(m *wmsg) bool {
				return m.Method == "thread/status/changed" && strings.Contains(string(m.Params), "waitingOnApproval")
			})
			if tc.answer == "error" {
				c.send(`{"id":` + string(req.ID) + `,"error":{"code":-32000,"message":"no"}}`)
			} else {
				c.send(`{"id":` + string(req.ID) + `,"result":` + tc.answer + `}`)
			}
			c.note("serverRequest/resolved")
			msg := c.next("the answer", func(m *wmsg) bool {
				return m.Method == "item/completed" && strings.Contains(string(m.Params), `"agentMessage"`)
			})
			if got := msg.str(t, "/item/text"); got != tc.got {
				t.Fatalf("the server got %q, want %q", got, tc.got)
			}
			c.note("turn/completed")
		})
	}
}

// A URL elicitation carries its URL and id, and the server's _meta.
func TestMCPElicitationURL(t *testing.T) {
	e := newEnv(t, agenttest.Options{Turn: elicitScript(agent.MCPElicitation{Server: "t", Mode: "url", Message: "Sign in",
		URL: "https://example.com/auth", ElicitationID: "el-1", Meta: json.RawMessage(`{"k":1}`)})}, Config{})
	c := e.dial("user")
	c.initialize(nil)
	thread := c.startThread(nil)
	turn := c.startTurn(thread, "ask me")
	req := c.serverRequest(elicitationMethod)
	want := `{"threadId":"` + thread + `","turnId":"` + turn + `","serverName":"t","mode":"url","_meta":{"k":1},"message":"Sign in","url":"https://example.com/auth","elicitationId":"el-1"}`
	if string(req.Params) != want {
		t.Fatalf("params\n got %s\nwant %s", req.Params, want)
	}
	c.send(`{"id":` + string(req.ID) + `,"result":{"action":"accept"}}`)
	c.note("turn/completed")
}

// The rules of every approval: the first of two answers wins; a turn
// boundary withdraws the request (no answer reaches the core, which tells
// the server "cancel" itself); with no subscriber left the server is
// declined.
func TestMCPElicitationRules(t *testing.T) {
	e := newEnv(t, agenttest.Options{Turn: elicitScript(nameForm)}, Config{})
	a, b := e.dial("a"), e.dial("b")
	a.initialize(nil)
	b.initialize(nil)
	thread := a.startThread(nil)
	a.startTurn(thread, "ask")
	r0 := a.serverRequest(elicitationMethod)
	a.send(`{"id":` + string(r0.ID) + `,"result":{"action":"cancel"}}`)
	a.note("turn/completed")
	b.call(appproto.MethodThreadResume, map[string]any{"threadId": thread})
	a.startTurn(thread, "ask")
	ra, rb := a.serverRequest(elicitationMethod), b.serverRequest(elicitationMethod)
	a.send(`{"id":` + string(ra.ID) + `,"result":{"action":"accept","content":{"name":"A"}}}`)
	b.send(`{"id":` + string(rb.ID) + `,"result":{"action":"decline"}}`)
	a.note("serverRequest/resolved")
	b.note("serverRequest/resolved")
	a.note("turn/completed")
	if ds := e.core.Thread(thread).Decisions(); len(ds) != 2 {
		t.Fatalf("decisions %+v, want exactly one more", ds)
	}

	turn := a.startTurn(thread, "ask again")
	req := a.serverRequest(elicitationMethod)
	b.serverRequest(elicitationMethod)
	a.call(appproto.MethodTurnInterrupt, map[string]any{"threadId": thread, "turnId": turn})
	a.note("turn/completed")
	a.note("serverRequest/resolved")
	b.note("serverRequest/resolved")
	a.send(`{"id":` + string(req.ID) + `,"result":{"action":"accept"}}`) // too late
	a.barrier()
	if ds := e.core.Thread(thread).Decisions(); len(ds) != 2 {
		t.Fatalf("a decision reached the core after the turn ended: %+v", ds)
	}

	watcher := e.dial("watcher")
	watcher.initialize(nil)
	a.startTurn(thread, "ask once more")
	a.serverRequest(elicitationMethod)
	b.serverRequest(elicitationMethod)
	a.conn.Close()
	b.conn.Close()
	watcher.next("idle", func(m *wmsg) bool {
		return m.Method == "thread/status/changed" && strings.Contains(string(m.Params), `"idle"`)
	})
	ds := e.core.Thread(thread).Decisions()
	if len(ds) != 3 || ds[2].(agent.MCPElicitationAnswer).Result.Action != "decline" {
		t.Fatalf("decisions %+v, want a decline", ds)
	}
}
