package appserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An MCP tool approval answered with _meta.persist = "always" allows the
// tool for good, as Codex 0.169 does: [mcp_servers.NAME.tools.TOOL]
// approval_mode = "approve" is written into the user's config.toml (the
// rest of the file, comments included, as it was), and neither this
// thread nor a new one asks again.
func TestMCPApprovalPersistAlways(t *testing.T) {
	table := fmt.Sprintf("# my servers\n[mcp_servers.tests]\ncommand = %q # the Go test server\nrequired = true\n", buildMCPTestServer(t))
	e := newMCPEnv(t, table)
	cfgPath := filepath.Join(e.home, "config.toml")
	before, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	c := e.dial("A")
	c.initialize(nil)
	onRequest := map[string]any{"approvalPolicy": "on-request"}
	thread := c.startThread(onRequest)
	c.startTurn(thread, `MOCK:tool mcp__tests__destroy {"text":"gone"}`)
	req := c.serverRequest(elicitationMethod)
	c.send(`{"id":` + string(req.ID) + `,"result":{"action":"accept","content":{},"_meta":{"persist":"always"}}}`)
	done := c.next("the call's item/completed", func(m *wmsg) bool {
		return m.Method == "item/completed" && strings.Contains(string(m.Params), `"type":"mcpToolCall"`)
	})
	if done.str(t, "/item/status") != "completed" {
		t.Fatalf("item/completed: %s", done)
	}
	c.note("turn/completed")
	after, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if want := string(before) + "\n[mcp_servers.tests.tools.destroy]\napproval_mode = \"approve\"\n"; string(after) != want {
		t.Fatalf("config.toml:\n%s\nwant:\n%s", after, want)
	}

	// Neither this thread nor a new one asks again.
	for _, th := range []string{thread, c.startThread(onRequest)} {
		c.startTurn(th, `MOCK:tool mcp__tests__destroy {"text":"again"}`)
		done := c.next("the call's item/completed", func(m *wmsg) bool {
			return (m.Method == "item/completed" && strings.Contains(string(m.Params), `"type":"mcpToolCall"`)) || (m.Method == elicitationMethod && m.ID != nil)
		})
		if done.Method != "item/completed" || done.str(t, "/item/status") != "completed" {
			t.Fatalf("thread %s asked again: %s", th, done)
		}
		c.note("turn/completed")
	}
}
