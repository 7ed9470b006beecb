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
	for _, raw := range Specs(Options{ApplyPatch: true, RequestUserInput: true}) {
		var v struct {
			Type       string         `json:"type"`
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		}
		if err := json.Unmarshal(raw, &v); err != nil || v.Type != "function" || v.Name == "" || v.Parameters["type"] != "object" {
			t.Fatalf("spec %s: %v", raw, err)
		}
	}
	if n := len(Specs(Options{NoTools: true})); n != 0 {
		t.Fatalf("NoTools gave %d", n)
	}
}
