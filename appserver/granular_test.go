package appserver

import (
	"strings"
	"testing"

	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
)

// A granular approval policy reaches the thread with its flags and is
// reported as Codex 0.169 reports it ({"granular": {...}}, flags by name,
// the two optional ones false when missing); one without a required flag
// is refused. Codex's MCP decisions under it: core's TestMCPApprovalDecision
// and TestMCPElicitationPolicy, and differential session mcp-granular.
func TestGranularApprovalPolicy(t *testing.T) {
	e := newEnv(t, agenttest.Options{}, Config{})
	c := e.dial("A")
	c.initialize(map[string]any{"experimentalApi": true})
	m := c.call(appproto.MethodThreadStart, map[string]any{"approvalPolicy": map[string]any{"granular": map[string]any{
		"sandbox_approval": false, "rules": true, "mcp_elicitations": true}}})
	want := `"approvalPolicy":{"granular":{"mcp_elicitations":true,"request_permissions":false,"rules":true,"sandbox_approval":false,"skill_approval":false}}`
	if !strings.Contains(string(m.raw), want) {
		t.Fatalf("thread/start: %s", m)
	}
	err := c.callErr(appproto.MethodThreadStart, map[string]any{"approvalPolicy": map[string]any{"granular": map[string]any{
		"sandbox_approval": true, "mcp_elicitations": true}}})
	if err == nil || !strings.Contains(err.Message, "missing field `rules`") {
		t.Fatalf("without rules: %+v", err)
	}
}
