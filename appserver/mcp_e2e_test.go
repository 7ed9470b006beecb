package appserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codexd/codexd/config"
	"github.com/codexd/codexd/core/boot"
	"github.com/codexd/codexd/mockmodel"
)

// These tests run the app-server over the real core (core/boot, as
// `codexd app-server` does), the mock model and a real MCP server: the Go
// test server of package mcp, or @modelcontextprotocol/server-everything
// when MCP_SERVER_EVERYTHING names its directory.

// buildMCPTestServer builds mcp/internal/testserver into a temporary
// directory of t.
func buildMCPTestServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "testserver")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "../mcp/internal/testserver").CombinedOutput(); err != nil {
		t.Fatalf("building the MCP test server: %v\n%s", err, out)
	}
	return bin
}

// mcpEnv is an app-server over a real core whose config.toml holds
// mcpServers (TOML of [mcp_servers.NAME] tables), with the mock model.
type mcpEnv struct {
	*env
	model *mockmodel.Server
	home  string
	rt    *boot.Runtime
}

func newMCPEnv(t *testing.T, mcpServers string) *mcpEnv {
	t.Helper()
	model := mockmodel.New(mockmodel.Options{})
	url, err := model.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { model.Close() })
	home, work := t.TempDir(), t.TempDir()
	cfg := fmt.Sprintf(`model = "mock-model"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "read-only"
[model_providers.mock]
name = "mock"
base_url = %q
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`, url) + mcpServers
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	rt, err := boot.Open(context.Background(), boot.Options{Config: config.LoadOptions{CodexHome: home}, Cwd: work,
		Originator: "codexd_app_server", CliVersion: "0.169.0", Logger: slogDiscard, NoStore: true})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Core: rt.Core, MCP: rt.MCP, Logger: slogDiscard})
	if err != nil {
		_ = rt.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Close()
		if err := rt.Close(); err != nil {
			t.Errorf("closing the runtime: %v", err)
		}
	})
	return &mcpEnv{env: &env{t: t, srv: srv}, model: model, home: home, rt: rt}
}

// everythingServer is the [mcp_servers.everything] table of
// server-everything over stdio, or a skip saying why there is none.
func everythingServer(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("MCP_SERVER_EVERYTHING")
	if dir == "" {
		t.Skip("MCP_SERVER_EVERYTHING is not set (the directory of @modelcontextprotocol/server-everything; .ci/run installs it)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: server-everything cannot run")
	}
	return fmt.Sprintf("[mcp_servers.everything]\ncommand = \"node\"\nargs = [%q, \"stdio\"]\nrequired = true\nstartup_timeout_sec = 60\n",
		filepath.Join(dir, "dist", "index.js"))
}

// A turn whose model calls an MCP tool: the request offers the tool in the
// server's namespace, the call is an mcpToolCall item started and
// completed with the server's result, and the model gets the output (and
// the call, in its namespace, back in its history).
func TestMCPToolCallInTurn(t *testing.T) {
	t.Run("testserver", func(t *testing.T) {
		table := fmt.Sprintf("[mcp_servers.tests]\ncommand = %q\nrequired = true\n", buildMCPTestServer(t))
		mcpTurn(t, table, "tests", "echo", `{"text":"hi from the turn"}`, "hi from the turn")
	})
	t.Run("everything", func(t *testing.T) {
		mcpTurn(t, everythingServer(t), "everything", "echo", `{"message":"hi from the turn"}`, "hi from the turn")
	})
}

func mcpTurn(t *testing.T, table, server, tool, args, want string) {
	e := newMCPEnv(t, table)
	c := e.dial("A")
	c.initialize(nil)
	// required = true: thread/start waits for the server, so its tools are
	// in the first request.
	thread := c.startThread(nil)
	turn := c.startTurn(thread, fmt.Sprintf("MOCK:tool mcp__%s__%s %s", server, tool, args))

	started := c.next("the mcpToolCall's item/started", func(m *wmsg) bool {
		return m.Method == "item/started" && strings.Contains(string(m.Params), `"type":"mcpToolCall"`)
	})
	var item struct {
		Item struct {
			ID, Server, Tool, Status string
			Arguments                json.RawMessage
		}
		TurnID string
	}
	if err := json.Unmarshal(started.Params, &item); err != nil {
		t.Fatal(err)
	}
	if item.Item.Server != server || item.Item.Tool != tool || item.Item.Status != "inProgress" || item.TurnID != turn {
		t.Fatalf("item/started: %s", started.raw)
	}
	completed := c.next("the mcpToolCall's item/completed", func(m *wmsg) bool {
		return m.Method == "item/completed" && strings.Contains(string(m.Params), `"type":"mcpToolCall"`)
	})
	var done struct {
		Item struct {
			ID, Status string
			Result     *struct{ Content []map[string]any }
			Error      any
		}
	}
	if err := json.Unmarshal(completed.Params, &done); err != nil {
		t.Fatal(err)
	}
	if done.Item.ID != item.Item.ID || done.Item.Status != "completed" || done.Item.Result == nil || done.Item.Error != nil ||
		len(done.Item.Result.Content) == 0 || !strings.Contains(fmt.Sprint(done.Item.Result.Content[0]["text"]), want) {
		t.Fatalf("item/completed: %s", completed.raw)
	}
	c.next("turn/completed", func(m *wmsg) bool { return m.Method == "turn/completed" })

	reqs := e.model.Requests()
	if len(reqs) < 2 {
		t.Fatalf("the model got %d requests, want the call and the answer to its output", len(reqs))
	}
	// The first request offered the tool in namespace mcp__SERVER.
	var first struct {
		Tools []struct {
			Type, Name string
			Tools      []struct{ Name string }
		}
	}
	if err := json.Unmarshal(reqs[0].Body, &first); err != nil {
		t.Fatal(err)
	}
	offered := false
	for _, ts := range first.Tools {
		for _, f := range ts.Tools {
			offered = offered || ts.Type == "namespace" && ts.Name == "mcp__"+server && f.Name == tool
		}
	}
	if !offered {
		t.Fatalf("the first request did not offer mcp__%s/%s: %s", server, tool, reqs[0].Body)
	}
	// The answer's request carried the tool's output for the call.
	var second struct {
		Input []map[string]any `json:"input"`
	}
	if err := json.Unmarshal(reqs[len(reqs)-1].Body, &second); err != nil {
		t.Fatal(err)
	}
	got, call := false, false
	for _, in := range second.Input {
		if in["type"] == "function_call_output" && in["call_id"] == item.Item.ID && strings.Contains(fmt.Sprint(in["output"]), want) {
			got = true
		}
		if in["type"] == "function_call" && in["call_id"] == item.Item.ID && in["namespace"] == "mcp__"+server && in["name"] == tool {
			call = true
		}
	}
	if !call {
		t.Errorf("the call went back to the model without its namespace: %s", reqs[len(reqs)-1].Body)
	}
	if !got {
		t.Fatalf("the model did not get the tool's output: %s", reqs[len(reqs)-1].Body)
	}
	if reqs[len(reqs)-1].Answer != "MOCK:tool" {
		t.Errorf("the last request was answered by %s", reqs[len(reqs)-1].Answer)
	}
}
