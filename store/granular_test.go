package store

import (
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/codexd/codexd/agent"
)

// TestGranularTurnContextIsCodexs: a granular policy goes into Codex's
// turn context as Codex's AskForApproval object, which Codex 0.169 reads
// (the bare name "granular" is no variant of its enum), and its flags
// come back in codexd's own settings.
func TestGranularTurnContextIsCodexs(t *testing.T) {
	g := &agent.GranularApproval{SandboxApproval: true, MCPElicitations: true}
	s := agent.Settings{Model: "m", Cwd: "/w", Approval: agent.ApprovalGranular, Granular: g}
	tc := encodeTurnContext(s, "turn-1")
	want := `{"granular":{"sandbox_approval":true,"rules":false,"skill_approval":false,"request_permissions":false,"mcp_elicitations":true}}`
	if got := string(tc.ApprovalPolicy); got != want {
		t.Fatalf("approval_policy %s, want %s", got, want)
	}
	back := decodeSettings(encodeSettings(s))
	if back.Granular == nil || *back.Granular != *g {
		t.Fatalf("granular flags after a round trip: %+v", back.Granular)
	}
	b, err := jsonv2.Marshal(encodeSettings(agent.Settings{Approval: agent.ApprovalNever}))
	if err != nil || strings.Contains(string(b), "granular") {
		t.Fatalf("a named policy writes no granular member: %s %v", b, err)
	}
}
