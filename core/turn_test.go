package core

import (
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
)

func TestTurnTextAnswer(t *testing.T) {
	m := newFakeModel(textResponse("msg_1", "Hello fro", "m the mock", " model."))
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	turnID := h.submit(th, agent.UserInput{Input: text("Say hello"), ClientID: "c1"})
	evs := until(t, th, isTurnCompleted)

	// Order: TurnStarted, the user message, the agent message with its
	// deltas, token count, TurnCompleted.
	if _, ok := evs[0].Msg.(agent.TurnStarted); !ok {
		t.Fatalf("first event %s", describeEvent(evs[0]))
	}
	for i, ev := range evs {
		if ev.TurnID != turnID {
			t.Errorf("event %d turn id %q, want %q", i, ev.TurnID, turnID)
		}
		if ev.Seq != uint64(i+1) {
			t.Errorf("event %d seq %d", i, ev.Seq)
		}
	}
	users := itemsCompleted[*agent.UserMessage](evs)
	if len(users) != 1 || users[0].ClientID != "c1" || users[0].Content[0].Text != "Say hello" {
		t.Fatalf("user messages %+v", users)
	}
	deltas := msgs[agent.AgentMessageDelta](evs)
	if len(deltas) != 3 || deltas[0].ItemID != "msg_1" || deltas[0].Delta != "Hello fro" {
		t.Fatalf("deltas %+v", deltas)
	}
	answers := itemsCompleted[*agent.AgentMessage](evs)
	if len(answers) != 1 || answers[0].ID != "msg_1" || answers[0].Text != "Hello from the mock model." {
		t.Fatalf("answers %+v", answers)
	}
	tc := msgs[agent.TokenCount](evs)
	if len(tc) != 1 || tc[0].Info.Total.Total != 15 || tc[0].Info.ModelContextWindow != defaultContextWindow {
		t.Fatalf("token counts %+v", tc)
	}
	done := evs[len(evs)-1].Msg.(agent.TurnCompleted)
	if done.Status != agent.TurnStatusCompleted || done.LastAgentMessage != "Hello from the mock model." || done.LastAgentMessageID != "msg_1" {
		t.Fatalf("turn completed %+v", done)
	}

	req := m.request(t)
	if req.Model != "mock-model" || !req.Stream || req.Store || req.ToolChoice != "auto" || req.PromptCacheKey != th.ID() {
		t.Fatalf("request %+v", req)
	}
	if req.Input[0].Role != "developer" || !strings.Contains(req.Input[0].Text(), "exec_command") {
		t.Fatalf("first input %+v", req.Input[0])
	}
	last := req.Input[len(req.Input)-1]
	if last.Role != "user" || last.Text() != "Say hello" {
		t.Fatalf("last input %+v", last)
	}
	names := toolNames(req)
	// mock-model has no metadata: Codex's fallback tools (no apply_patch).
	for _, want := range []string{"exec_command", "write_stdin", "request_user_input"} {
		if !strings.Contains(names, want) {
			t.Errorf("tools %s lack %s", names, want)
		}
	}
}

func toolNames(req *prompt.Request) string {
	var b strings.Builder
	for _, raw := range req.Tools {
		s := string(raw)
		i := strings.Index(s, `"name":"`)
		if i >= 0 {
			rest := s[i+8:]
			b.WriteString(rest[:strings.IndexByte(rest, '"')] + " ")
		}
	}
	return b.String()
}

func TestSecondTurnSendsHistory(t *testing.T) {
	m := newFakeModel(textResponse("msg_1", "first"), textResponse("msg_2", "second"))
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("one")})
	until(t, th, isTurnCompleted)
	h.submit(th, agent.UserInput{Input: text("two")})
	until(t, th, isTurnCompleted)
	m.request(t)
	req := m.request(t)
	var got []string
	for _, it := range req.Input {
		if it.Type == prompt.TypeMessage && it.Role != "developer" && !strings.HasPrefix(it.Text(), "<environment_context>") {
			got = append(got, it.Role+":"+it.Text())
		}
	}
	want := "user:one assistant:first user:two"
	if strings.Join(got, " ") != want {
		t.Fatalf("history %q, want %q", strings.Join(got, " "), want)
	}
}

func TestMissingProviderKeyFailsTurn(t *testing.T) {
	m := newFakeModel()
	h := newHarness(t, m, func(c *Config) {
		c.Providers["mock"] = &Provider{Name: "mock", Err: &prompt.Error{Message: "Missing environment variable: `MOCK_API_KEY`.", Info: "unauthorized"}}
	})
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("hi")})
	evs := until(t, th, isTurnCompleted)
	errs := msgs[agent.Error](evs)
	if len(errs) != 1 || errs[0].WillRetry || !strings.Contains(errs[0].Err.Message, "MOCK_API_KEY") {
		t.Fatalf("errors %+v", errs)
	}
	done := evs[len(evs)-1].Msg.(agent.TurnCompleted)
	if done.Status != agent.TurnStatusFailed || done.Error == nil || done.Error.Info != "unauthorized" {
		t.Fatalf("turn %+v", done)
	}
}
