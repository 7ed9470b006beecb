package core

import (
	"context"
	"testing"

	"github.com/codexd/codexd/agent"
)

func isElicitation(ev agent.Event) bool { _, ok := ev.Msg.(agent.MCPElicitationRequest); return ok }

// An MCP server's elicitation during a call goes to the turn's user as an
// MCPElicitationRequest, and the answer goes back to the server; a turn
// that ends first answers the server "cancel"; with no turn running there
// is no one to ask, and the server is declined.
func TestMCPElicitation(t *testing.T) {
	// A policy that asks (never declines: TestMCPElicitationPolicy).
	onRequest := agent.Overrides{Approval: policy(agent.ApprovalOnRequest), Sandbox: sandboxMode(agent.SandboxWorkspaceWrite)}
	elicitTool := mcpTool("elicit", "approve", nil, nil, nil)
	t.Run("answered", func(t *testing.T) {
		f := &fakeMCP{tools: []agent.MCPTool{elicitTool}}
		h, m := mcpHarness(t, f, mcpCallResponse("call_1", "elicit", `{}`), textResponse("msg_2", "done"))
		th := h.start(onRequest)
		turn := h.submit(th, agent.UserInput{Input: text("ask me")})
		evs := until(t, th, isElicitation)
		ev := evs[len(evs)-1]
		req := ev.Msg.(agent.MCPElicitationRequest)
		if ev.TurnID != turn || req.ID == "" || req.Elicitation.Server != "t" || req.Elicitation.Message != "Name?" || req.Elicitation.Mode != "form" {
			t.Fatalf("request: %+v in turn %s", ev, ev.TurnID)
		}
		h.submit(th, agent.MCPElicitationAnswer{ID: req.ID, Result: agent.MCPElicitationResult{Action: "accept", Content: map[string]any{"name": "Ada"}}})
		until(t, th, isTurnCompleted)
		m.request(t)
		if out := lastOutput(t, m.request(t), "call_1"); out != `{"Action":"accept","Content":{"name":"Ada"}}` { // the fake's block, as the model gets a block of no known type
			t.Fatalf("the server got %s", out)
		}
		if _, err := th.Submit(context.Background(), agent.MCPElicitationAnswer{ID: req.ID}); err == nil {
			t.Fatal("a second answer was taken")
		}
	})
	t.Run("turn ends first", func(t *testing.T) {
		f := &fakeMCP{tools: []agent.MCPTool{elicitTool}}
		h, _ := mcpHarness(t, f, mcpCallResponse("call_1", "elicit", `{}`), textResponse("msg_2", "done"))
		th := h.start(onRequest)
		h.submit(th, agent.UserInput{Input: text("ask me")})
		until(t, th, isElicitation)
		h.submit(th, agent.Interrupt{})
		evs := until(t, th, isTurnCompleted)
		items := itemsCompleted[*agent.MCPToolCall](evs)
		if len(items) != 1 || items[0].Result == nil || string(items[0].Result.Content[0]) != `{"Action":"cancel","Content":null}` {
			t.Fatalf("%s", describe(evs))
		}
	})
	t.Run("server gives up", func(t *testing.T) {
		// The server cancels its request: the request is withdrawn at
		// once (MCPElicitationWithdrawn), not left pending to the turn's
		// end, and a late answer finds nothing to answer.
		f := &fakeMCP{tools: []agent.MCPTool{mcpTool("withdraw", "approve", nil, nil, nil)}, giveUp: make(chan struct{})}
		h, _ := mcpHarness(t, f, mcpCallResponse("call_1", "withdraw", `{}`), textResponse("msg_2", "done"))
		th := h.start(onRequest)
		h.submit(th, agent.UserInput{Input: text("ask me")})
		evs := until(t, th, isElicitation)
		req := evs[len(evs)-1].Msg.(agent.MCPElicitationRequest)
		close(f.giveUp)
		evs = until(t, th, func(ev agent.Event) bool {
			_, done := ev.Msg.(agent.ItemCompleted)
			w, ok := ev.Msg.(agent.MCPElicitationWithdrawn)
			return done || ok && w.ID == req.ID
		})
		if _, ok := evs[len(evs)-1].Msg.(agent.MCPElicitationWithdrawn); !ok {
			t.Fatalf("not withdrawn before the call completed: %s", describe(evs))
		}
		evs = until(t, th, isTurnCompleted)
		items := itemsCompleted[*agent.MCPToolCall](evs)
		if len(items) != 1 || items[0].Result == nil || string(items[0].Result.Content[0]) != `{"Action":"cancel","Content":null}` {
			t.Fatalf("%s", describe(evs))
		}
		if _, err := th.Submit(context.Background(), agent.MCPElicitationAnswer{ID: req.ID}); err == nil {
			t.Fatal("an answer to a withdrawn request was taken")
		}
	})
	t.Run("no turn", func(t *testing.T) {
		f := &fakeMCP{tools: []agent.MCPTool{elicitTool}}
		h, _ := mcpHarness(t, f)
		h.start(agent.Overrides{})
		f.mu.Lock()
		elicit := f.elicit
		f.mu.Unlock()
		if r := elicit(context.Background(), agent.MCPElicitation{Server: "t", Mode: "form"}); r.Action != "decline" {
			t.Fatalf("outside a turn: %+v", r)
		}
	})
}

// TestMCPElicitationPolicy: a server's elicitation is put to the user,
// declined or accepted by the approval policy as Codex 0.169 decides
// (elicitation_is_rejected_by_policy, can_auto_accept_elicitation): never
// declines, except that with full access a form asking for nothing is
// accepted; granular declines without mcp_elicitations (its other flags
// change nothing); the other policies ask.
func TestMCPElicitationPolicy(t *testing.T) {
	all := agent.GranularApproval{SandboxApproval: true, Rules: true, SkillApproval: true, RequestPermissions: true}
	withElicit := all
	withElicit.MCPElicitations = true
	for _, c := range []struct {
		name     string
		approval agent.ApprovalPolicy
		granular *agent.GranularApproval
		sandbox  agent.SandboxMode
		tool     string // elicit: a form asking for nothing; elicit_form: a name
		want     string // "ask", or what the server gets without asking
	}{
		{"on-request", agent.ApprovalOnRequest, nil, agent.SandboxWorkspaceWrite, "elicit_form", "ask"},
		{"untrusted", agent.ApprovalUntrusted, nil, agent.SandboxWorkspaceWrite, "elicit_form", "ask"},
		{"on-request full access, empty form", agent.ApprovalOnRequest, nil, agent.SandboxDangerFullAccess, "elicit", "ask"},
		{"never", agent.ApprovalNever, nil, agent.SandboxWorkspaceWrite, "elicit_form", `{"Action":"decline","Content":null}`},
		{"never, empty form", agent.ApprovalNever, nil, agent.SandboxWorkspaceWrite, "elicit", `{"Action":"decline","Content":null}`},
		{"never full access, empty form", agent.ApprovalNever, nil, agent.SandboxDangerFullAccess, "elicit", `{"Action":"accept","Content":{}}`},
		{"never external sandbox, empty form", agent.ApprovalNever, nil, agent.SandboxExternal, "elicit", `{"Action":"accept","Content":{}}`},
		{"never full access, a form", agent.ApprovalNever, nil, agent.SandboxDangerFullAccess, "elicit_form", `{"Action":"decline","Content":null}`},
		{"granular mcp_elicitations", agent.ApprovalGranular, &agent.GranularApproval{MCPElicitations: true}, agent.SandboxWorkspaceWrite, "elicit_form", "ask"},
		{"granular every flag", agent.ApprovalGranular, &withElicit, agent.SandboxWorkspaceWrite, "elicit_form", "ask"},
		{"granular without mcp_elicitations", agent.ApprovalGranular, &all, agent.SandboxWorkspaceWrite, "elicit_form", `{"Action":"decline","Content":null}`},
		{"granular no flags", agent.ApprovalGranular, &agent.GranularApproval{}, agent.SandboxWorkspaceWrite, "elicit_form", `{"Action":"decline","Content":null}`},
		{"granular full access, empty form", agent.ApprovalGranular, &agent.GranularApproval{}, agent.SandboxDangerFullAccess, "elicit", `{"Action":"decline","Content":null}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeMCP{tools: []agent.MCPTool{mcpTool(c.tool, "approve", nil, nil, nil)}}
			h, _ := mcpHarness(t, f, mcpCallResponse("call_1", c.tool, `{}`), textResponse("msg_2", "done"))
			th := h.start(agent.Overrides{Approval: policy(c.approval), Granular: c.granular, Sandbox: sandboxMode(c.sandbox)})
			h.submit(th, agent.UserInput{Input: text("ask me")})
			evs := until(t, th, func(ev agent.Event) bool { return isElicitation(ev) || isTurnCompleted(ev) })
			if req, asked := evs[len(evs)-1].Msg.(agent.MCPElicitationRequest); asked != (c.want == "ask") {
				t.Fatalf("asked %v, want %s: %s", asked, c.want, describe(evs))
			} else if asked {
				h.submit(th, agent.MCPElicitationAnswer{ID: req.ID, Result: agent.MCPElicitationResult{Action: "cancel"}})
				until(t, th, isTurnCompleted)
				return
			}
			items := itemsCompleted[*agent.MCPToolCall](evs)
			if len(items) != 1 || items[0].Result == nil || string(items[0].Result.Content[0]) != c.want {
				t.Fatalf("the server got: %s", describe(evs))
			}
		})
	}
}
