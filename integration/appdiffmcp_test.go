//go:build linux

package integration

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// buildMCPTestServer builds mcp/internal/testserver, the Go MCP server the
// corpus's mcpServers tables name as $MCPTEST (both sides run the same
// binary).
func buildMCPTestServer(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "mcptestserver")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if b, err := exec.CommandContext(ctx, goTool(), "build", "-o", out, "../mcp/internal/testserver").CombinedOutput(); err != nil {
		t.Fatalf("go build the MCP test server: %v\n%s", err, b)
	}
	return out
}

// The rules of the MCP sessions (README ids [mcp-status-now],
// [mcp-error-text], [mcp-startup-order], [mcp-persist-reannounce] and
// [mcp-elicitation-withdrawn]),
// appended to appRules.
func init() {
	appRules = append(appRules,
		// Why a server failed to start is said in codexd's words.
		// mcpServerStatus/list with a threadId answers at once, with the
		// servers as they are; the corpus lists them once they are ready,
		// where the two agree.
		appRule{id: "mcp-status-now"},
		appRule{id: "mcp-error-text", fix: func(_ *appSession, it *appItem) {
			for _, v := range []any{it.codex, it.codexd} {
				walkMaps(v, func(m map[string]any) {
					if _, ok := m["toolsError"].(string); ok {
						m["toolsError"] = "<mcp start error>"
					}
					if _, ok := m["error"].(string); ok && m["status"] == "failed" && m["name"] != nil {
						m["error"] = "<mcp start error>"
					}
				})
			}
		}},
		// Codex's first startup status races its thread/started; codexd's
		// always follows it.
		appRule{id: "mcp-startup-order", fix: func(_ *appSession, it *appItem) {
			if !isNotes(it) {
				return
			}
			front := func(v any) any {
				l, ok := v.([]any)
				if !ok {
					return v
				}
				for i, n := range l {
					if m, _ := n.(map[string]any); m["method"] == "thread/started" {
						out := append([]any{n}, l[:i]...)
						return append(out, l[i+1:]...)
					}
				}
				return v
			}
			it.codex, it.codexd = front(it.codex), front(it.codexd)
		}},
		// An elicitation its MCP server cancelled is withdrawn at once
		// (serverRequest/resolved, and the thread's waiting flag with it);
		// Codex leaves it pending to the turn's end. When each goes out
		// depends on when the cancellation arrives, so a session that
		// declares this compares neither.
		// Codex reloads its config after writing an "always" approval
		// into config.toml and announces its server ready again (without
		// a restart: no "starting" before it); codexd changes the tool's
		// mode in place and says nothing.
		appRule{id: "mcp-persist-reannounce", declared: true, fix: func(_ *appSession, it *appItem) {
			if !isNotes(it) {
				return
			}
			l, _ := it.codex.([]any)
			last := map[string]any{}
			var keep []any
			for _, n := range l {
				m, _ := n.(map[string]any)
				if m["method"] == "mcpServer/startupStatus/updated" {
					p, _ := m["params"].(map[string]any)
					key := fmt.Sprint(p["threadId"], "\x00", p["name"])
					if p["status"] == "ready" && last[key] == "ready" {
						continue
					}
					last[key] = p["status"]
				}
				keep = append(keep, n)
			}
			if l != nil {
				it.codex = keep
			}
		}},
		appRule{id: "mcp-elicitation-withdrawn", declared: true, fix: func(_ *appSession, it *appItem) {
			dropNotesBoth(it, "serverRequest/resolved")
			dropNotesBoth(it, "thread/status/changed")
		}},
	)
}
