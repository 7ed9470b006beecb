package core

import (
	"bytes"
	"strings"
	"testing"

	"github.com/codexd/codexd/core/prompt"
)

func TestPendingOutputKeepsHeadAndTail(t *testing.T) {
	p := &execProc{}
	head := bytes.Repeat([]byte("h"), maxAggregated/2)
	middle := bytes.Repeat([]byte("m"), 2*maxAggregated)
	tail := bytes.Repeat([]byte("t"), maxAggregated/2)
	for _, b := range [][]byte{head, middle[:maxAggregated], middle[maxAggregated:], tail} {
		p.appendPending(b)
	}
	out := string(p.takePending())
	if !strings.HasPrefix(out, string(head)) || !strings.HasSuffix(out, string(tail)) {
		t.Fatal("head or tail lost")
	}
	if !strings.Contains(out, "\n…2097152 bytes dropped…\n") || len(out) > maxAggregated+64 {
		t.Fatalf("len %d, marker %v", len(out), strings.Contains(out, "dropped"))
	}
	if len(p.takePending()) != 0 {
		t.Fatal("pending not reset")
	}
}

func TestNormalizeHistory(t *testing.T) {
	call := prompt.Item{Type: prompt.TypeFunctionCall, CallID: "a", Name: "exec_command"}
	orphan := prompt.FunctionOutput("zzz", "x")
	got := normalizeHistory([]prompt.Item{prompt.Message("user", "hi"), call, orphan, prompt.Message("user", "again")})
	if len(got) != 4 || got[2].Type != prompt.TypeFunctionCallOutput || got[2].CallID != "a" || *got[2].Output != "aborted" {
		t.Fatalf("got %+v", got)
	}
}
