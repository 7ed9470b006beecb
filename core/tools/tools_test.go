package tools

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestExecOutputText(t *testing.T) {
	code := 0
	got := ExecOutput{ChunkID: "abc123", WallTime: 12345 * time.Microsecond, ExitCode: &code, Output: []byte("hi\n")}.Text()
	want := "Chunk ID: abc123\nWall time: 0.0123 seconds\nProcess exited with code 0\nOriginal token count: 1\nOutput:\nhi\n"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	id := 4242
	got = ExecOutput{ChunkID: "abc123", SessionID: &id, Output: []byte("12345")}.Text()
	if !strings.Contains(got, "\nProcess running with session ID 4242\nOriginal token count: 2\nOutput:\n12345") || strings.Contains(got, "exited") {
		t.Fatalf("running: %q", got)
	}
}

func TestTruncateTokens(t *testing.T) {
	if got := TruncateTokens("short", 10); got != "short" {
		t.Fatalf("short: %q", got)
	}
	text := strings.Repeat("a", 50) + strings.Repeat("b", 50)
	got := TruncateTokens(text, 10) // 40 bytes: 20 head, 20 tail
	want := "Total output lines: 1\n\n" + strings.Repeat("a", 20) + "…15 tokens truncated…" + strings.Repeat("b", 20)
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	// Cuts never split a UTF-8 sequence.
	got = TruncateTokens(strings.Repeat("é", 100), 5)
	if !strings.HasPrefix(got, "Total output lines: 1\n\n") || strings.ContainsRune(got, '\uFFFD') {
		t.Fatalf("utf-8: %q", got)
	}
}

func TestArgs(t *testing.T) {
	a, err := ParseExecArgs(`{"cmd":"ls"}`)
	if err != nil || a.Yield() != 10*time.Second || a.MaxTokens() != 10000 || a.Escalated() {
		t.Fatalf("defaults %+v %v", a, err)
	}
	a, _ = ParseExecArgs(`{"cmd":"ls","yield_time_ms":999999,"sandbox_permissions":"require_escalated"}`)
	if a.Yield() != 30*time.Second || !a.Escalated() {
		t.Fatalf("clamped %+v", a)
	}
	if _, err := ParseExecArgs(`{"cmd":"ls","sandbox_permissions":"bogus"}`); err == nil || !strings.HasPrefix(err.Error(), "failed to parse exec_command arguments") {
		t.Fatalf("bad enum: %v", err)
	}
	w, _ := ParseWriteStdinArgs(`{"session_id":1234}`)
	if w.Yield() != 5*time.Second {
		t.Fatalf("empty poll yield %v", w.Yield())
	}
	w, _ = ParseWriteStdinArgs(`{"session_id":1234,"chars":"x"}`)
	if w.Yield() != 250*time.Millisecond {
		t.Fatalf("write yield %v", w.Yield())
	}
	if _, err := ParseWriteStdinArgs(`{}`); err == nil {
		t.Fatal("missing session_id accepted")
	}
}

func TestSpecsAreValidJSON(t *testing.T) {
	for _, raw := range Specs(Options{ApplyPatch: "function", WebSearch: "text"}) {
		var v struct {
			Type       string         `json:"type"`
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("spec %s: %v", raw, err)
		}
		if v.Type == "web_search" {
			continue
		}
		if v.Type != "function" || v.Name == "" || v.Parameters["type"] != "object" {
			t.Fatalf("spec %s", raw)
		}
	}
	if n := len(Specs(Options{NoTools: true})); n != 0 {
		t.Fatalf("NoTools gave %d", n)
	}
}

// The tool sets follow the model's metadata as Codex 0.169's do.
func TestSpecsPerModel(t *testing.T) {
	names := func(raws []json.RawMessage) []string {
		var out []string
		for _, raw := range raws {
			var v struct{ Type, Name string }
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatal(err)
			}
			out = append(out, v.Type+":"+v.Name)
		}
		return strings.Fields(strings.Join(out, " "))
	}
	general := names(Specs(Options{ApplyPatch: "freeform", WebSearch: "text_and_image"}))
	if want := "function:exec_command function:write_stdin function:request_user_input custom:apply_patch web_search:"; strings.Join(general, " ") != want {
		t.Fatalf("general: %v", general)
	}
	fallback := names(Specs(Options{WebSearch: "text"}))
	if want := "function:exec_command function:write_stdin function:request_user_input web_search:"; strings.Join(fallback, " ") != want {
		t.Fatalf("fallback: %v", fallback)
	}
	code := Options{ApplyPatch: "freeform", WebSearch: "text_and_image", CodeMode: true}
	if n := len(Specs(code)); n != 0 {
		t.Fatalf("code mode has %d top-level tools", n)
	}
	extra := AdditionalTools(code)
	var ns struct {
		Type, Name string
		Tools      []json.RawMessage
	}
	if len(extra) != 1 || json.Unmarshal(extra[0], &ns) != nil || ns.Type != "namespace" || ns.Name != "functions" {
		t.Fatalf("additional tools %s", extra)
	}
	if got := strings.Join(names(ns.Tools), " "); got != "function:exec_command function:write_stdin function:request_user_input custom:apply_patch" {
		t.Fatalf("namespace tools %s", got)
	}
	var patch struct {
		Format struct{ Type, Syntax, Definition string }
	}
	if err := json.Unmarshal(Specs(Options{ApplyPatch: "freeform"})[3], &patch); err != nil || patch.Format.Type != "grammar" ||
		patch.Format.Syntax != "lark" || !strings.Contains(patch.Format.Definition, `"*** Begin Patch"`) {
		t.Fatalf("freeform apply_patch %+v %v", patch, err)
	}
	var ws map[string]any
	_ = json.Unmarshal(Specs(Options{WebSearch: "text", WebSearchLive: true})[3], &ws)
	if ws["external_web_access"] != true || ws["search_content_types"] != nil {
		t.Fatalf("live text web_search %v", ws)
	}
}

func TestTruncateForHistory(t *testing.T) {
	text := strings.Repeat("a", 30) + "\n" + strings.Repeat("é", 20)
	if got := TruncateForHistory(text, "bytes", 1000); got != text {
		t.Fatalf("fits: %q", got)
	}
	got := TruncateForHistory(text, "bytes", 20)
	if !strings.HasPrefix(got, "Total output lines: 2\n\n"+strings.Repeat("a", 10)+"…") || !strings.HasSuffix(got, "chars truncated…"+strings.Repeat("é", 5)) {
		t.Fatalf("bytes: %q", got)
	}
	if got := TruncateForHistory(strings.Repeat("x", 100), "tokens", 10); !strings.Contains(got, "…15 tokens truncated…") {
		t.Fatalf("tokens: %q", got)
	}
}
