package compaction

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexd/codexd/core/prompt"
)

func TestThreshold(t *testing.T) {
	cases := []struct{ window, limit, want int64 }{
		{258_400, 0, 232_560},       // 90 %
		{32_000, 0, 24_000},         // a quarter kept free
		{258_400, 100_000, 100_000}, // the configured limit
		{258_400, 300_000, 246_400}, // but never past the headroom
		{0, 0, 232_560},             // Codex's default window
	}
	for _, c := range cases {
		if got := Threshold(c.window, c.limit); got != c.want {
			t.Errorf("Threshold(%d, %d) = %d, want %d", c.window, c.limit, got, c.want)
		}
	}
}

func TestRebuildKeepsRecentUserMessagesWithinBudget(t *testing.T) {
	msgs := []string{strings.Repeat("a", 400), strings.Repeat("b", 400), strings.Repeat("c", 400)}
	got := Rebuild(msgs, "the summary", 150)
	// c (100 tokens) fits whole, b is cut to the remaining 50, a is left out.
	if len(got) != 3 || got[1].Text() != msgs[2] || !strings.Contains(got[0].Text(), "cut to fit") ||
		got[0].Text()[0] != 'b' || got[2].Text() != SummaryPrefix+"\nthe summary" {
		t.Fatalf("rebuilt %+v", got)
	}
	if got := Rebuild(nil, "  ", 10); len(got) != 1 || !strings.HasSuffix(got[0].Text(), FallbackSummary) {
		t.Fatalf("empty summary %+v", got)
	}
}

func TestUserMessagesSkipsSummariesAndContext(t *testing.T) {
	hist := []prompt.Item{
		prompt.Message("user", "<environment_context>\n  <cwd>/x</cwd>\n</environment_context>"),
		prompt.Message("user", "real one"),
		prompt.Message("assistant", "answer"),
		prompt.Message("user", SummaryPrefix+"\nold summary"),
		prompt.FunctionOutput("c1", "output"),
		prompt.Message("user", "real two"),
	}
	if got := UserMessages(hist); strings.Join(got, "|") != "real one|real two" {
		t.Fatalf("user messages %q", got)
	}
}

func TestSummaryInputKeepsCallsWithOutputs(t *testing.T) {
	out := strings.Repeat("o", 4000)
	hist := []prompt.Item{
		prompt.Message("user", "first"),
		{Type: prompt.TypeFunctionCall, CallID: "c1", Name: "exec_command", Arguments: "{}"},
		prompt.FunctionOutput("c1", out),
		prompt.Message("user", "last"),
	}
	// Room for the last message and the prompt only: the call goes, and
	// its output with it.
	in, dropped := SummaryInput(hist, "p", ItemTokens(hist[3])+ItemTokens(prompt.Message("user", "p"))+5)
	if dropped != 3 || len(in) != 2 || in[0].Text() != "last" {
		t.Fatalf("dropped %d, input %+v", dropped, in)
	}
}

func TestReplay(t *testing.T) {
	raw := func(it prompt.Item) json.RawMessage { b, _ := json.Marshal(it); return b }
	marker, err := MarkerRecord("S", []prompt.Item{prompt.Message("user", "kept"), prompt.Message("user", SummaryPrefix+"\nS")})
	if err != nil {
		t.Fatal(err)
	}
	in := []json.RawMessage{raw(prompt.Message("user", "old")), raw(prompt.Message("assistant", "old answer")), marker, raw(prompt.Message("user", "new"))}
	var texts []string
	for _, r := range Replay(in) {
		var it prompt.Item
		if err := json.Unmarshal(r, &it); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, it.Text())
	}
	if strings.Join(texts, "|") != "kept|"+SummaryPrefix+"\nS|new" {
		t.Fatalf("replayed %q", texts)
	}
	// No marker: unchanged.
	if got := Replay(in[:2]); len(got) != 2 {
		t.Fatalf("%d items", len(got))
	}
	// A marker that cannot be read is dropped, not applied.
	if got := Replay([]json.RawMessage{in[0], json.RawMessage(`{"type":"compacted","replacement_history":7}`)}); len(got) != 1 {
		t.Fatalf("bad marker: %d items", len(got))
	}
}

func TestFromConfig(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "p.md"), []byte("FILE PROMPT"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := FromConfig(Raw(map[string]any{"model_context_window": int64(32000), "model_auto_compact_token_limit": int64(20000),
		"compact_prompt": "INLINE", "experimental_compact_prompt_file": "p.md"}), home)
	if err != nil || o.ContextWindow != 32000 || o.AutoCompactTokenLimit != 20000 || o.PromptOr() != "FILE PROMPT" {
		t.Fatalf("%+v %v", o, err)
	}
	if o, _ := FromConfig(Raw(map[string]any{"compact_prompt": "INLINE"}), home); o.PromptOr() != "INLINE" {
		t.Fatalf("%+v", o)
	}
	if o, _ := FromConfig(Raw(nil), home); o.PromptOr() != DefaultPrompt {
		t.Fatalf("%+v", o)
	}
	for _, bad := range []map[string]any{
		{"model_context_window": "big"}, {"model_auto_compact_token_limit": int64(-1)},
		{"compact_prompt": int64(3)}, {"experimental_compact_prompt_file": "missing.md"},
	} {
		if _, err := FromConfig(Raw(bad), home); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// FuzzReplay feeds rollout history records as a file on disk may hold them:
// Replay never panics and returns only records that are not markers.
func FuzzReplay(f *testing.F) {
	f.Add([]byte(`{"type":"message","role":"user","content":[{"type":"input_text","text":"a"}]}`), []byte(`{"type":"compacted","message":"s","replacement_history":[{"type":"message","role":"user"}]}`))
	f.Add([]byte(`{"type":"compacted"}`), []byte(`not json`))
	f.Add([]byte(`{"type":"compacted","replacement_history":[{"type":"compacted"}]}`), []byte(`{}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		out := Replay([]json.RawMessage{a, b, a})
		for _, r := range out {
			if isMarker(r) {
				t.Fatalf("a marker left in %s", r)
			}
		}
	})
}

// FuzzSummaryInput: the summarisation input fits its budget whatever the
// history holds.
func FuzzSummaryInput(f *testing.F) {
	f.Add("hello", 3, int64(100))
	f.Add(strings.Repeat("é", 3000), 50, int64(200))
	f.Fuzz(func(t *testing.T, text string, n int, budget int64) {
		if n < 0 || n > 200 || budget < 0 || budget > 1<<20 {
			t.Skip()
		}
		var hist []prompt.Item
		for i := range n {
			if i%3 == 1 {
				hist = append(hist, prompt.Item{Type: prompt.TypeFunctionCall, CallID: "c", Arguments: text})
				hist = append(hist, prompt.FunctionOutput("c", text))
				continue
			}
			hist = append(hist, prompt.Message("user", text))
		}
		in, dropped := SummaryInput(hist, "p", budget)
		if dropped < 0 || dropped > len(hist) || in[len(in)-1].Text() != "p" {
			t.Fatalf("dropped %d of %d", dropped, len(hist))
		}
		if len(in) > 1 && isOutput(in[0]) {
			t.Fatal("input starts with an orphan output")
		}
	})
}
