package config

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// MCPServer is one [mcp_servers.NAME] table, as Codex 0.169 reads it. A
// server is stdio (Command set) or streamable HTTP (URL set), never both.
type MCPServer struct {
	// Name is the table's key.
	Name string

	// stdio.
	Command string
	Args    []string
	// Env is set in the server's environment on top of what it inherits.
	Env map[string]string
	// EnvVars name variables of codexd's environment passed to the server.
	EnvVars []string
	Cwd     string

	// streamable HTTP.
	URL               string
	BearerTokenEnvVar string
	HTTPHeaders       map[string]string
	// EnvHTTPHeaders maps a header to the variable holding its value.
	EnvHTTPHeaders map[string]string

	// StartupTimeout is startup_timeout_sec (or startup_timeout_ms); 0
	// when unset.
	StartupTimeout time.Duration
	// ToolTimeout is tool_timeout_sec; 0 when unset.
	ToolTimeout time.Duration
	// Enabled is true unless enabled = false.
	Enabled bool
	// Required servers must start for a thread to start.
	Required bool
	// EnabledTools, when non-nil, is the allow-list of tool names.
	EnabledTools []string
	// DisabledTools are removed after EnabledTools is applied.
	DisabledTools []string
	// DefaultToolsApprovalMode is "auto", "prompt" or "approve" (empty:
	// unset); ToolApprovalModes holds [mcp_servers.NAME.tools.TOOL]
	// approval_mode overrides.
	DefaultToolsApprovalMode string
	ToolApprovalModes        map[string]string
}

// Stdio reports whether the server is a command codexd starts (an empty
// command is one, which fails to start, as in Codex).
func (s MCPServer) Stdio() bool { return s.URL == "" }

// ToolAllowed applies enabled_tools, then disabled_tools, as Codex does.
func (s MCPServer) ToolAllowed(tool string) bool {
	if s.EnabledTools != nil && !slices.Contains(s.EnabledTools, tool) {
		return false
	}
	return !slices.Contains(s.DisabledTools, tool)
}

// Warning is a config key codexd read and does not act on, for a
// configWarning notification.
type Warning struct {
	Summary string
	Details string
}

// approvalModes are AppToolApproval's values.
var approvalModes = []string{"auto", "prompt", "approve"}

// mcpUnimplemented are keys Codex 0.169 knows that codexd accepts and
// ignores, with what they would have done.
var mcpUnimplemented = map[string]string{
	"supports_parallel_tool_calls": "the server's tools are called one at a time",
	"scopes":                       "MCP OAuth login is not implemented",
	"oauth":                        "MCP OAuth login is not implemented",
	"oauth_resource":               "MCP OAuth login is not implemented",
}

// parseMCPServers reads the mcp_servers table of the (overridden) TOML
// tree. A malformed entry is an *Error naming its key, as Codex refuses a
// config with one.
func parseMCPServers(raw map[string]any, file string) (map[string]MCPServer, []Warning, error) {
	v, ok := raw["mcp_servers"]
	if !ok {
		return nil, nil, nil
	}
	tbl, ok := v.(map[string]any)
	if !ok {
		return nil, nil, errorf(file, "mcp_servers", "expected a table, found %s", aType(v))
	}
	servers := make(map[string]MCPServer, len(tbl))
	var warns []Warning
	for _, name := range slices.Sorted(mapKeys(tbl)) {
		st, ok := tbl[name].(map[string]any)
		key := "mcp_servers." + name
		if !ok {
			return nil, nil, errorf(file, key, "expected a table, found %s", aType(tbl[name]))
		}
		s, w, err := parseMCPServer(name, st, file, key)
		if err != nil {
			return nil, nil, err
		}
		servers[name] = s
		warns = append(warns, w...)
	}
	return servers, warns, nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// mcpDecoder reads typed values out of one server's table.
type mcpDecoder struct {
	t    map[string]any
	file string
	key  string
	err  error
}

func (d *mcpDecoder) fail(k, format string, args ...any) {
	if d.err == nil {
		d.err = errorf(d.file, d.key+"."+k, format, args...)
	}
}

func (d *mcpDecoder) has(k string) bool { _, ok := d.t[k]; return ok }

func (d *mcpDecoder) str(k string) string {
	v, ok := d.t[k]
	if !ok {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		d.fail(k, "expected a string, found %s", aType(v))
	}
	return s
}

func (d *mcpDecoder) boolean(k string) (bool, bool) {
	v, ok := d.t[k]
	if !ok {
		return false, false
	}
	b, ok := v.(bool)
	if !ok {
		d.fail(k, "expected a boolean, found %s", aType(v))
	}
	return b, true
}

func (d *mcpDecoder) strings(k string) []string {
	v, ok := d.t[k]
	if !ok {
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		d.fail(k, "expected an array of strings, found %s", aType(v))
		return nil
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		s, ok := e.(string)
		if !ok {
			d.fail(k, "expected an array of strings, found an element of type %s", tomlType(e))
			return nil
		}
		out = append(out, s)
	}
	return out
}

func (d *mcpDecoder) strMap(k string) map[string]string {
	v, ok := d.t[k]
	if !ok {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		d.fail(k, "expected a table of strings, found %s", aType(v))
		return nil
	}
	out := make(map[string]string, len(m))
	for mk, e := range m {
		s, ok := e.(string)
		if !ok {
			d.fail(k+"."+mk, "expected a string, found %s", aType(e))
			return nil
		}
		out[mk] = s
	}
	return out
}

// seconds reads a non-negative number of seconds (integer or float).
func (d *mcpDecoder) seconds(k string) time.Duration {
	v, ok := d.t[k]
	if !ok {
		return 0
	}
	var f float64
	switch n := v.(type) {
	case int64:
		f = float64(n)
	case float64:
		f = n
	default:
		d.fail(k, "expected a number of seconds, found %s", aType(v))
		return 0
	}
	if f < 0 || math.IsNaN(f) || math.IsInf(f, 0) || f > float64(math.MaxInt64)/1e9 {
		d.fail(k, "%v is not a valid number of seconds", f)
		return 0
	}
	return time.Duration(f * float64(time.Second))
}

func (d *mcpDecoder) enum(k string, values []string) string {
	s := d.str(k)
	if s != "" && !slices.Contains(values, s) {
		d.fail(k, "%s", unknownVariant(s, values).Error())
	}
	return s
}

func parseMCPServer(name string, t map[string]any, file, key string) (MCPServer, []Warning, error) {
	d := &mcpDecoder{t: t, file: file, key: key}
	s := MCPServer{
		Name:              name,
		Command:           d.str("command"),
		Args:              d.strings("args"),
		Env:               d.strMap("env"),
		Cwd:               d.str("cwd"),
		URL:               d.str("url"),
		BearerTokenEnvVar: d.str("bearer_token_env_var"),
		HTTPHeaders:       d.strMap("http_headers"),
		EnvHTTPHeaders:    d.strMap("env_http_headers"),
		ToolTimeout:       d.seconds("tool_timeout_sec"),
		Enabled:           true,
		EnabledTools:      d.strings("enabled_tools"),
		DisabledTools:     d.strings("disabled_tools"),
	}
	if d.has("enabled_tools") && s.EnabledTools == nil {
		s.EnabledTools = []string{}
	}
	var warns []Warning
	warn := func(k, why string) {
		warns = append(warns, Warning{
			Summary: fmt.Sprintf("%s.%s is not supported by codexd and is ignored", key, k),
			Details: why,
		})
	}
	if b, ok := d.boolean("enabled"); ok {
		s.Enabled = b
	}
	s.Required, _ = d.boolean("required")
	switch {
	case d.has("startup_timeout_sec"):
		s.StartupTimeout = d.seconds("startup_timeout_sec")
	case d.has("startup_timeout_ms"):
		ms := d.seconds("startup_timeout_ms")
		s.StartupTimeout = ms / 1000
	}
	s.EnvVars = d.envVars(warn)
	s.DefaultToolsApprovalMode = d.enum("default_tools_approval_mode", approvalModes)
	if tv, ok := t["tools"]; ok {
		tt, ok := tv.(map[string]any)
		if !ok {
			d.fail("tools", "expected a table, found %s", aType(tv))
		}
		for tool, cv := range tt {
			ct, ok := cv.(map[string]any)
			if !ok {
				d.fail("tools."+tool, "expected a table, found %s", aType(cv))
				break
			}
			td := &mcpDecoder{t: ct, file: file, key: key + ".tools." + tool}
			if m := td.enum("approval_mode", approvalModes); m != "" {
				if s.ToolApprovalModes == nil {
					s.ToolApprovalModes = map[string]string{}
				}
				s.ToolApprovalModes[tool] = m
			}
			if td.err != nil && d.err == nil {
				d.err = td.err
			}
		}
	}
	if env := d.str("environment_id"); env != "" && env != "local" {
		warn("environment_id", fmt.Sprintf("servers run on this machine, not in environment %q", env))
	}
	for _, k := range slices.Sorted(mapKeys(mcpUnimplemented)) {
		if d.has(k) {
			warn(k, mcpUnimplemented[k])
		}
	}
	if d.err != nil {
		return MCPServer{}, nil, d.err
	}

	if msg := mcpTransport(d.t); msg != "" {
		return MCPServer{}, nil, errorf(file, key, "%s", msg)
	}
	return s, warns, nil
}

// mcpTransport is Codex's complaint about the transport of the server
// table t, or "": a command makes it stdio, else a url streamable HTTP,
// and each refuses the other's keys.
func mcpTransport(t map[string]any) string {
	refused := func(transport string, keys ...string) string {
		for _, k := range keys {
			if _, ok := t[k]; ok {
				return k + " is not supported for " + transport
			}
		}
		return ""
	}
	if _, ok := t["command"]; ok {
		return refused("stdio", "url", "bearer_token_env_var", "bearer_token", "http_headers", "env_http_headers", "oauth", "oauth_resource")
	}
	if _, ok := t["url"]; ok {
		return refused("streamable_http", "args", "env", "env_vars", "cwd", "bearer_token")
	}
	return "invalid transport"
}

// envVars reads env_vars: names, or {name, source} tables whose source is
// "local" or "remote".
func (d *mcpDecoder) envVars(warn func(k, why string)) []string {
	v, ok := d.t["env_vars"]
	if !ok {
		return nil
	}
	var elems []any
	switch a := v.(type) {
	case []any:
		elems = a
	case []map[string]any:
		for _, m := range a {
			elems = append(elems, m)
		}
	default:
		d.fail("env_vars", "expected an array, found %s", aType(v))
		return nil
	}
	var out []string
	for _, e := range elems {
		switch x := e.(type) {
		case string:
			out = append(out, x)
		case map[string]any:
			ed := &mcpDecoder{t: x, file: d.file, key: d.key + ".env_vars"}
			n := ed.str("name")
			src := ed.str("source")
			if ed.err != nil {
				d.err = ed.err
				return nil
			}
			if !ed.has("name") {
				d.fail("env_vars", "missing field `name`")
				return nil
			}
			switch src {
			case "", "local":
			case "remote":
				warn("env_vars", fmt.Sprintf("%s has source \"remote\"; it is read from codexd's environment", n))
			default:
				d.fail("env_vars", "unsupported env_vars source `%s`; expected `local` or `remote`", src)
				return nil
			}
			out = append(out, n)
		default:
			d.fail("env_vars", "expected a string or a table, found %s", aType(e))
			return nil
		}
	}
	return out
}

// SortedMCPServers returns the servers in name order.
func (c Config) SortedMCPServers() []MCPServer {
	out := make([]MCPServer, 0, len(c.MCPServers))
	for _, s := range c.MCPServers {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// aType is tomlType with its article, for "expected X, found a string".
func aType(v any) string {
	t := tomlType(v)
	if strings.IndexByte("aeiou", t[0]) >= 0 {
		return "an " + t
	}
	return "a " + t
}
