package core

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
)

// fakeMCP is a connector with fixed tools that records its calls.
type fakeMCP struct {
	tools  []agent.MCPTool
	mu     sync.Mutex
	calls  []string
	elicit agent.MCPElicitFunc // the thread's, for a tool named "elicit"
	// giveUp, closed by a test, makes the tool "withdraw" give up on its
	// elicitation (as a server's notifications/cancelled does).
	giveUp chan struct{}
}

func (f *fakeMCP) Tools() []agent.MCPTool { return f.tools }
func (f *fakeMCP) Call(ctx context.Context, server, tool string, args json.RawMessage, progress func(string)) (*agent.MCPResult, error) {
	f.mu.Lock()
	f.calls = append(f.calls, tool)
	elicit := f.elicit
	f.mu.Unlock()
	if tool == "withdraw" {
		ctx, cancel := context.WithCancel(ctx)
		go func() { <-f.giveUp; cancel() }()
		r := elicit(ctx, agent.MCPElicitation{Server: server, Mode: "form", Message: "Name?"})
		b, _ := json.Marshal(r)
		return &agent.MCPResult{Content: []json.RawMessage{b}}, nil
	}
	if tool == "elicit_form" {
		r := elicit(ctx, agent.MCPElicitation{Server: server, Mode: "form", Message: "Name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		b, _ := json.Marshal(r)
		return &agent.MCPResult{Content: []json.RawMessage{b}}, nil
	}
	if tool == "elicit" {
		r := elicit(ctx, agent.MCPElicitation{Server: server, Mode: "form", Message: "Name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{}}`)})
		b, _ := json.Marshal(r)
		return &agent.MCPResult{Content: []json.RawMessage{b}}, nil
	}
	return &agent.MCPResult{Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"ran ` + tool + `"}`)}}, nil
}
func (f *fakeMCP) ListResources(context.Context, string, string) (string, error) { return "", nil }
func (f *fakeMCP) ListResourceTemplates(context.Context, string, string) (string, error) {
	return "", nil
}
func (f *fakeMCP) ReadResource(context.Context, string, string) (string, error) { return "", nil }
func (f *fakeMCP) HasServers() bool                                             { return true }
func (f *fakeMCP) AwaitRequired(context.Context) error                          { return nil }
func (f *fakeMCP) Close()                                                       {}
func (f *fakeMCP) called() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

// mcpTool is a tool of server "t" with hints ro, destructive, open (nil:
// none given; with all three nil the tool has no annotations).
func mcpTool(name, mode string, ro, destructive, open *bool) agent.MCPTool {
	t := agent.MCPTool{Server: "t", Name: name, Namespace: "mcp__t", Callable: name, Description: "Tool " + name + ".",
		InputSchema: json.RawMessage(`{"type":"object"}`), ApprovalMode: mode,
		DestructiveHint: destructive, OpenWorldHint: open}
	if ro != nil || destructive != nil || open != nil {
		if ro == nil {
			ro = no()
		}
		t.ReadOnlyHint, t.IdempotentHint = ro, no()
	}
	return t
}

func mcpCallResponse(callID, tool, args string) fakeResponse {
	it := prompt.Item{Type: prompt.TypeFunctionCall, Name: tool, Namespace: "mcp__t", Arguments: args, CallID: callID, ID: "fc_" + callID}
	return fakeResponse{events: []prompt.Event{
		{Kind: prompt.Created}, {Kind: prompt.ItemAdded, Item: &it},
		{Kind: prompt.ItemDone, Item: &it}, completed(20, 3),
	}}
}

func mcpHarness(t *testing.T, f *fakeMCP, rs ...fakeResponse) (*harness, *fakeModel) {
	m := newFakeModel(rs...)
	h := newHarness(t, m, func(c *Config) {
		c.MCP = func(_ string, elicit agent.MCPElicitFunc) agent.MCPConnector {
			f.mu.Lock()
			f.elicit = elicit
			f.mu.Unlock()
			return f
		}
	})
	return h, m
}

func isMCPApproval(ev agent.Event) bool { _, ok := ev.Msg.(agent.MCPToolApprovalRequest); return ok }

// TestMCPApprovalDecision: whether a call asks is decided as Codex 0.169
// decides it, from the approval policy, the sandbox, the tool's approval
// mode and its hints (each row checked side by side with Codex's
// app-server against mcp/internal/testserver).
func TestMCPApprovalDecision(t *testing.T) {
	cases := []struct {
		name     string
		tool     agent.MCPTool
		approval agent.ApprovalPolicy
		sandbox  agent.SandboxMode
		asks     bool
		refusal  string // with asks false: the call fails with it
		remember bool
		granular *agent.GranularApproval // with approval granular
	}{
		{"destructive", mcpTool("destroy", "", nil, yes(), nil), agent.ApprovalOnRequest, agent.SandboxWorkspaceWrite, true, "", true, nil},
		{"destructive untrusted", mcpTool("destroy", "", nil, yes(), nil), agent.ApprovalUntrusted, agent.SandboxWorkspaceWrite, true, "", true, nil},
		{"destructive full access on-request", mcpTool("destroy", "", nil, yes(), nil), agent.ApprovalOnRequest, agent.SandboxDangerFullAccess, true, "", true, nil},
		{"no annotations", mcpTool("plain", "", nil, nil, nil), agent.ApprovalOnRequest, agent.SandboxWorkspaceWrite, true, "", true, nil},
		{"read-only", mcpTool("echo", "", yes(), nil, nil), agent.ApprovalOnRequest, agent.SandboxWorkspaceWrite, false, "", false, nil},
		{"closed-world, not destructive", mcpTool("open", "", nil, no(), no()), agent.ApprovalOnRequest, agent.SandboxWorkspaceWrite, false, "", false, nil},
		{"open-world unknown", mcpTool("open", "", nil, no(), nil), agent.ApprovalOnRequest, agent.SandboxWorkspaceWrite, true, "", true, nil},
		{"never", mcpTool("destroy", "", nil, yes(), nil), agent.ApprovalNever, agent.SandboxWorkspaceWrite, false, mcpNeverApproves, false, nil},
		{"never full access", mcpTool("destroy", "prompt", nil, yes(), nil), agent.ApprovalNever, agent.SandboxDangerFullAccess, false, "", false, nil},
		{"never read-only", mcpTool("echo", "", yes(), nil, nil), agent.ApprovalNever, agent.SandboxWorkspaceWrite, false, "", false, nil},
		{"never prompt", mcpTool("echo", "prompt", yes(), nil, nil), agent.ApprovalNever, agent.SandboxWorkspaceWrite, false, mcpNeverApproves, false, nil},
		{"approve", mcpTool("destroy", "approve", nil, yes(), nil), agent.ApprovalOnRequest, agent.SandboxWorkspaceWrite, false, "", false, nil},
		{"prompt", mcpTool("echo", "prompt", yes(), nil, nil), agent.ApprovalOnRequest, agent.SandboxWorkspaceWrite, true, "", false, nil},
		{"writes read-only", mcpTool("echo", "writes", yes(), nil, nil), agent.ApprovalOnRequest, agent.SandboxWorkspaceWrite, false, "", false, nil},
		{"writes closed-world", mcpTool("open", "writes", nil, no(), no()), agent.ApprovalOnRequest, agent.SandboxWorkspaceWrite, true, "", false, nil},
		{"writes no annotations", mcpTool("plain", "writes", nil, nil, nil), agent.ApprovalOnRequest, agent.SandboxWorkspaceWrite, true, "", false, nil},
		// Granular asks as on-request whatever its flags (none is about
		// tool calls; mcp_elicitations is about the servers' own
		// elicitations), even with full access, as Codex 0.169 does.
		{"granular none", mcpTool("destroy", "", nil, yes(), nil), agent.ApprovalGranular, agent.SandboxWorkspaceWrite, true, "", true, &agent.GranularApproval{}},
		{"granular sandbox_approval", mcpTool("destroy", "", nil, yes(), nil), agent.ApprovalGranular, agent.SandboxWorkspaceWrite, true, "", true, &agent.GranularApproval{SandboxApproval: true}},
		{"granular rules", mcpTool("destroy", "", nil, yes(), nil), agent.ApprovalGranular, agent.SandboxWorkspaceWrite, true, "", true, &agent.GranularApproval{Rules: true}},
		{"granular skill_approval", mcpTool("destroy", "", nil, yes(), nil), agent.ApprovalGranular, agent.SandboxWorkspaceWrite, true, "", true, &agent.GranularApproval{SkillApproval: true}},
		{"granular request_permissions", mcpTool("destroy", "", nil, yes(), nil), agent.ApprovalGranular, agent.SandboxWorkspaceWrite, true, "", true, &agent.GranularApproval{RequestPermissions: true}},
		{"granular mcp_elicitations", mcpTool("destroy", "", nil, yes(), nil), agent.ApprovalGranular, agent.SandboxWorkspaceWrite, true, "", true, &agent.GranularApproval{MCPElicitations: true}},
		{"granular full access", mcpTool("destroy", "", nil, yes(), nil), agent.ApprovalGranular, agent.SandboxDangerFullAccess, true, "", true, &agent.GranularApproval{}},
		{"granular read-only", mcpTool("echo", "", yes(), nil, nil), agent.ApprovalGranular, agent.SandboxWorkspaceWrite, false, "", false, &agent.GranularApproval{}},
		{"granular approve", mcpTool("destroy", "approve", nil, yes(), nil), agent.ApprovalGranular, agent.SandboxWorkspaceWrite, false, "", false, &agent.GranularApproval{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeMCP{tools: []agent.MCPTool{c.tool}}
			h, m := mcpHarness(t, f, mcpCallResponse("call_1", c.tool.Name, `{"text":"hi"}`), textResponse("msg_2", "done"))
			th := h.start(agent.Overrides{Approval: policy(c.approval), Granular: c.granular, Sandbox: sandboxMode(c.sandbox)})
			h.submit(th, agent.UserInput{Input: text("call it")})
			evs := until(t, th, func(ev agent.Event) bool { return isMCPApproval(ev) || isTurnCompleted(ev) })
			req, asked := evs[len(evs)-1].Msg.(agent.MCPToolApprovalRequest)
			if asked != c.asks {
				t.Fatalf("asked %v, want %v: %s", asked, c.asks, describe(evs))
			}
			if asked {
				if req.CallID != "call_1" || req.Server != "t" || req.Tool != c.tool.Name || req.Remember != c.remember ||
					req.Message != `Allow the t MCP server to run tool "`+c.tool.Name+`"?` || string(req.Arguments) != `{"text":"hi"}` ||
					req.Description != c.tool.Description || (req.ReadOnlyHint == nil) != (c.tool.ReadOnlyHint == nil) {
					t.Fatalf("request: %+v", req)
				}
				if got := f.called(); len(got) != 0 {
					t.Fatalf("called before the answer: %v", got)
				}
				h.submit(th, agent.MCPToolApprovalDecision{CallID: "call_1", Decision: agent.Accept})
				evs = until(t, th, isTurnCompleted)
			}
			items := itemsCompleted[*agent.MCPToolCall](evs)
			if len(items) != 1 {
				t.Fatalf("items: %s", describe(evs))
			}
			m.request(t) // the first, which the call answers
			out := lastOutput(t, m.request(t), "call_1")
			if c.refusal != "" {
				if items[0].Status != agent.ItemStatusFailed || items[0].Error != c.refusal || out != c.refusal || len(f.called()) != 0 {
					t.Fatalf("refused call: %+v, output %q, calls %v", items[0], out, f.called())
				}
				return
			}
			if items[0].Status != agent.ItemStatusCompleted || len(f.called()) != 1 {
				t.Fatalf("call: %+v, calls %v", items[0], f.called())
			}
		})
	}
}

// TestMCPApprovalOutcomes: decline and cancel refuse the call with Codex's
// words and the turn goes on; acceptForSession allows the tool for the
// rest of the thread (auto mode only).
func TestMCPApprovalOutcomes(t *testing.T) {
	for _, c := range []struct {
		decision agent.Decision
		refusal  string
	}{{agent.Decline, mcpRejected}, {agent.Cancel, mcpCancelled}, {agent.RequestFailed, mcpRejected}} {
		t.Run(string(c.decision), func(t *testing.T) {
			f := &fakeMCP{tools: []agent.MCPTool{mcpTool("destroy", "", nil, yes(), nil)}}
			h, m := mcpHarness(t, f, mcpCallResponse("call_1", "destroy", `{}`), textResponse("msg_2", "done"))
			th := h.start(agent.Overrides{Approval: policy(agent.ApprovalOnRequest), Sandbox: sandboxMode(agent.SandboxWorkspaceWrite)})
			h.submit(th, agent.UserInput{Input: text("call it")})
			until(t, th, isMCPApproval)
			h.submit(th, agent.MCPToolApprovalDecision{CallID: "call_1", Decision: c.decision})
			evs := until(t, th, isTurnCompleted)
			items := itemsCompleted[*agent.MCPToolCall](evs)
			tc := msgs[agent.TurnCompleted](evs)
			if len(items) != 1 || items[0].Status != agent.ItemStatusFailed || items[0].Error != c.refusal ||
				tc[0].Status != agent.TurnStatusCompleted || len(f.called()) != 0 {
				t.Fatalf("%s", describe(evs))
			}
			m.request(t)
			if out := lastOutput(t, m.request(t), "call_1"); out != c.refusal {
				t.Fatalf("model got %q", out)
			}
		})
	}

	t.Run("acceptForSession", func(t *testing.T) {
		f := &fakeMCP{tools: []agent.MCPTool{mcpTool("destroy", "", nil, yes(), nil), mcpTool("plain", "", nil, nil, nil)}}
		h, _ := mcpHarness(t, f,
			mcpCallResponse("call_1", "destroy", `{}`), mcpCallResponse("call_2", "destroy", `{}`),
			mcpCallResponse("call_3", "plain", `{}`), textResponse("msg_2", "done"))
		th := h.start(agent.Overrides{Approval: policy(agent.ApprovalOnRequest), Sandbox: sandboxMode(agent.SandboxWorkspaceWrite)})
		h.submit(th, agent.UserInput{Input: text("call it")})
		until(t, th, isMCPApproval)
		h.submit(th, agent.MCPToolApprovalDecision{CallID: "call_1", Decision: agent.AcceptForSession})
		// call_2 of the same tool runs without asking; call_3 of another asks.
		evs := until(t, th, isMCPApproval)
		if req := evs[len(evs)-1].Msg.(agent.MCPToolApprovalRequest); req.CallID != "call_3" {
			t.Fatalf("asked again for %s: %s", req.CallID, describe(evs))
		}
		h.submit(th, agent.MCPToolApprovalDecision{CallID: "call_3", Decision: agent.Accept})
		until(t, th, isTurnCompleted)
		if got := f.called(); len(got) != 3 {
			t.Fatalf("calls: %v", got)
		}
	})

	t.Run("interrupt", func(t *testing.T) {
		f := &fakeMCP{tools: []agent.MCPTool{mcpTool("destroy", "", nil, yes(), nil)}}
		h, _ := mcpHarness(t, f, mcpCallResponse("call_1", "destroy", `{}`), textResponse("msg_2", "done"))
		th := h.start(agent.Overrides{Approval: policy(agent.ApprovalOnRequest), Sandbox: sandboxMode(agent.SandboxWorkspaceWrite)})
		h.submit(th, agent.UserInput{Input: text("call it")})
		until(t, th, isMCPApproval)
		h.submit(th, agent.Interrupt{})
		evs := until(t, th, isTurnCompleted)
		if tc := msgs[agent.TurnCompleted](evs); tc[0].Status != agent.TurnStatusInterrupted || len(f.called()) != 0 {
			t.Fatalf("%s", describe(evs))
		}
		if _, err := th.Submit(context.Background(), agent.MCPToolApprovalDecision{CallID: "call_1", Decision: agent.Accept}); err == nil {
			t.Fatal("a late decision was taken")
		}
	})
}

// An image block reaches the model as Codex sends it, at detail "high";
// a model without image input gets Codex's note instead.
func TestMCPOutputImage(t *testing.T) {
	res := &agent.MCPResult{Content: []json.RawMessage{json.RawMessage(`{"type":"image","data":"iVBO","mimeType":"image/png"}`)}}
	_, parts := mcpOutput(0, res, "")
	if len(parts) != 2 || parts[1] != (prompt.Content{Type: "input_image", ImageURL: "data:image/png;base64,iVBO", Detail: "high"}) {
		t.Fatalf("parts: %+v", parts)
	}
	if p := withoutImages(parts); p[1] != (prompt.Content{Type: "input_text", Text: noImageInput}) || p[0].Type != "input_text" {
		t.Fatalf("without image input: %+v", p)
	}
}
