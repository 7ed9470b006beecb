package mockmodel

import (
	"encoding/json"
	"strings"
	"testing"
)

func lastEvent(r reply) sseEvent { return r.events[len(r.events)-1] }

func TestContextWindowFlagAndMarker(t *testing.T) {
	s := New(Options{ContextWindow: 300})
	url, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	small := post(t, url, body("m", nil, user("MOCK:hello")))
	if ev := lastEvent(small); ev.name != "response.completed" {
		t.Fatalf("small request: %v", small.names())
	}
	big := post(t, url, body("m", nil, user("MOCK:hello "+strings.Repeat("x", 2000))))
	ev := lastEvent(big)
	errObj, _ := ev.data["response"].(map[string]any)["error"].(map[string]any)
	if ev.name != "response.failed" || errObj["code"] != "context_length_exceeded" || errObj["message"] != ContextExceededMessage {
		t.Fatalf("big request: %s %v", ev.name, ev.data)
	}
	// A marker sets the window per request.
	_, url2 := start(t, nil)
	r := post(t, url2, body("m", nil, user("MOCK:window=100 "+strings.Repeat("y", 1000))))
	if lastEvent(r).name != "response.failed" {
		t.Fatalf("marker window: %v", r.names())
	}
	if r := post(t, url2, body("m", nil, user("MOCK:window=100000 hi"))); lastEvent(r).name != "response.completed" {
		t.Fatalf("a large marker window: %v", r.names())
	}
}

func TestUsageGrowsWithInput(t *testing.T) {
	_, url := start(t, nil)
	usage := func(n int) float64 {
		r := post(t, url, body("m", nil, user("MOCK:hello "+strings.Repeat("z", n))))
		u := lastEvent(r).data["response"].(map[string]any)["usage"].(map[string]any)
		return u["input_tokens"].(float64)
	}
	if a, b := usage(100), usage(10_000); b <= a+2000 {
		t.Fatalf("input tokens %v then %v", a, b)
	}
}

func TestCompactionRequestGetsSummary(t *testing.T) {
	_, url := start(t, nil)
	for _, prompt := range []string{
		"Context checkpoint: the conversation so far is about to be replaced by your summary.",
		"You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM.",
	} {
		r := post(t, url, body("m", []string{"exec_command"}, user("fix the bug in main.go"), assistant("done"), user(prompt)))
		if got := r.text(); !strings.HasPrefix(got, SummaryPrefix) || !strings.Contains(got, "fix the bug in main.go") {
			t.Fatalf("summary %q", got)
		}
	}
}

func TestReviewRequestGetsFindings(t *testing.T) {
	_, url := start(t, nil)
	dev := map[string]any{"type": "message", "role": "developer", "content": []map[string]any{{"type": "input_text",
		"text": `Answer with JSON: {"findings": [...], "overall_correctness": "..."}`}}}
	first := post(t, url, body("m", []string{"exec_command"}, dev, user("Review the current code changes.")))
	name, args, callID := first.call(t)
	if name != "exec_command" || !strings.Contains(args["cmd"].(string), "git diff") {
		t.Fatalf("first step %s %v", name, args)
	}
	second := post(t, url, body("m", []string{"exec_command"}, dev, user("Review the current code changes."),
		fcall(callID, "exec_command", `{"cmd":"git status"}`), fout(callID, "Output:\n M pkg/a.go\n?? new.txt\n")))
	var out struct {
		Findings []struct {
			Title        string `json:"title"`
			Priority     int    `json:"priority"`
			CodeLocation struct {
				Path string `json:"absolute_file_path"`
			} `json:"code_location"`
		} `json:"findings"`
		Correctness string `json:"overall_correctness"`
	}
	if err := json.Unmarshal([]byte(second.text()), &out); err != nil {
		t.Fatalf("findings %q: %v", second.text(), err)
	}
	if len(out.Findings) != 1 || out.Findings[0].CodeLocation.Path != "pkg/a.go" || out.Correctness == "" {
		t.Fatalf("findings %+v", out)
	}
	// The instructions member counts too (Codex sends them there).
	third := post(t, url, `{"model":"m","instructions":"reply with overall_correctness","input":[{"type":"message","role":"user","content":"review"}]}`)
	if !strings.Contains(third.text(), `"overall_correctness"`) {
		t.Fatalf("instructions member: %q", third.text())
	}
}

func TestRunRefusesNegativeWindow(t *testing.T) {
	var out, errb strings.Builder
	if code := Run(testCtx(t), []string{"--context-window", "-1"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "context-window") {
		t.Fatalf("exit %d, %q", code, errb.String())
	}
}
