package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestMCPServersAsCodexReadsThem(t *testing.T) {
	data := `
[mcp_servers.docs]
command = "docs-server"
args = ["--stdio"]
env = { A = "1" }
env_vars = ["HOME_TOKEN", { name = "OTHER", source = "local" }]
cwd = "/srv"
startup_timeout_sec = 2.5
tool_timeout_sec = 30
enabled_tools = ["search", "read"]
disabled_tools = ["read"]
default_tools_approval_mode = "approve"
[mcp_servers.docs.tools.search]
approval_mode = "prompt"

[mcp_servers.web]
url = "https://example.com/mcp"
bearer_token_env_var = "WEB_TOKEN"
http_headers = { X-A = "b" }
env_http_headers = { X-Key = "WEB_KEY" }
startup_timeout_ms = 1500
required = true
enabled = false
supports_parallel_tool_calls = true
`
	cfg, err := Parse([]byte(data), "c.toml", LoadOptions{Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	d := cfg.MCPServers["docs"]
	if !d.Stdio() || d.Command != "docs-server" || d.Args[0] != "--stdio" || d.Env["A"] != "1" ||
		strings.Join(d.EnvVars, ",") != "HOME_TOKEN,OTHER" || d.Cwd != "/srv" ||
		d.StartupTimeout != 2500*time.Millisecond || d.ToolTimeout != 30*time.Second || !d.Enabled || d.Required {
		t.Fatalf("docs: %+v", d)
	}
	if !d.ToolAllowed("search") || d.ToolAllowed("read") || d.ToolAllowed("other") {
		t.Fatalf("enabled/disabled tools: %+v", d)
	}
	if d.DefaultToolsApprovalMode != "approve" || d.ToolApprovalModes["search"] != "prompt" {
		t.Fatalf("approval modes: %+v", d)
	}
	w := cfg.MCPServers["web"]
	if w.Stdio() || w.URL != "https://example.com/mcp" || w.BearerTokenEnvVar != "WEB_TOKEN" || w.HTTPHeaders["X-A"] != "b" ||
		w.EnvHTTPHeaders["X-Key"] != "WEB_KEY" || w.StartupTimeout != 1500*time.Millisecond || !w.Required || w.Enabled {
		t.Fatalf("web: %+v", w)
	}
	if !w.ToolAllowed("anything") {
		t.Fatal("no lists: every tool is allowed")
	}
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0].Summary, "mcp_servers.web.supports_parallel_tool_calls") {
		t.Fatalf("warnings: %+v", cfg.Warnings)
	}
}

func TestMCPServersOverride(t *testing.T) {
	cfg, err := Parse(nil, "", LoadOptions{Getenv: env(nil), Overrides: []string{`mcp_servers.x.command="srv"`, `mcp_servers.x.enabled_tools=[]`}})
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.MCPServers["x"]; s.Command != "srv" || s.EnabledTools == nil || s.ToolAllowed("a") {
		t.Fatalf("%+v", s)
	}
}

func TestMCPServersErrors(t *testing.T) {
	for _, c := range []struct{ toml, want string }{
		{"[mcp_servers.a]\nargs=[\"x\"]\n", "mcp_servers.a: invalid transport"},
		{"[mcp_servers.a]\ncommand=\"x\"\nurl=\"http://h\"\n", "mcp_servers.a: url is not supported for stdio"},
		{"[mcp_servers.a]\nurl=\"http://h\"\ncwd=\"/\"\n", "mcp_servers.a: cwd is not supported for streamable_http"},
		{"[mcp_servers.a]\nurl=\"http://h\"\nbearer_token=\"t\"\n", "bearer_token is not supported for streamable_http"},
		{"[mcp_servers.a]\ncommand=1\n", "mcp_servers.a.command: expected a string, found an integer"},
		{"[mcp_servers.a]\ncommand=\"x\"\ntool_timeout_sec=-1\n", "mcp_servers.a.tool_timeout_sec"},
		{"[mcp_servers.a]\ncommand=\"x\"\nenv_vars=[{name=\"A\",source=\"cloud\"}]\n", "unsupported env_vars source `cloud`"},
		{"[mcp_servers.a]\ncommand=\"x\"\ndefault_tools_approval_mode=\"ask\"\n", "default_tools_approval_mode"},
		{"mcp_servers = 3\n", "mcp_servers: expected a table"},
	} {
		_, err := Parse([]byte(c.toml), "c.toml", LoadOptions{Getenv: env(nil)})
		var ce *Error
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an *Error containing %q", c.toml, err, c.want)
		}
	}
}

// FuzzMCPServers feeds arbitrary [mcp_servers] tables to Parse: no panic,
// every failure an *Error, and every server accepted has one transport.
func FuzzMCPServers(f *testing.F) {
	f.Add([]byte("[mcp_servers.a]\ncommand = \"x\"\nargs = [\"y\"]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, "fuzz.toml", LoadOptions{Getenv: env(nil)})
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is a %T, not *Error", err, err)
			}
			return
		}
		for name, s := range cfg.MCPServers {
			if s.Name != name || s.Command != "" && s.URL != "" {
				t.Fatalf("server %q: %+v", name, s)
			}
			if s.StartupTimeout < 0 || s.ToolTimeout < 0 {
				t.Fatalf("negative timeout: %+v", s)
			}
		}
	})
}
