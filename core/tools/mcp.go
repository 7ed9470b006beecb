package tools

import (
	"encoding/json"
	"fmt"

	"github.com/codexd/codexd/agent"
)

// The tools Codex offers whenever MCP servers are configured.
const (
	ListMCPResources         = "list_mcp_resources"
	ListMCPResourceTemplates = "list_mcp_resource_templates"
	ReadMCPResource          = "read_mcp_resource"
)

// MCPResourceSpecs are the three resource tools, in Codex's order and
// with its parameters (descriptions in our words).
func MCPResourceSpecs() []json.RawMessage { return mcpResourceSpecs }

var mcpResourceSpecs = []json.RawMessage{
	function(ListMCPResources, "Lists the resources MCP servers share: files, schemas and other context data. Prefer them to a web search where they apply.",
		object(schema{
			"cursor": str("Cursor from a previous list_mcp_resources answer; leave it out for the first page."),
			"server": str("Name of the MCP server. Leave it out to list the resources of every server."),
		})),
	function(ListMCPResourceTemplates, "Lists the resource templates MCP servers share: parameterised resources. Prefer them to a web search where they apply.",
		object(schema{
			"cursor": str("Cursor from a previous list_mcp_resource_templates answer; leave it out for the first page."),
			"server": str("Name of the MCP server. Leave it out to list the templates of every server."),
		})),
	function(ReadMCPResource, "Reads one resource of an MCP server, by the server's name and the resource's URI.",
		object(schema{
			"server": str("Name of the MCP server, as list_mcp_resources gives it."),
			"uri":    str("URI of the resource, as list_mcp_resources gives it."),
		}, "server", "uri")),
}

// MCPNamespaces are the MCP tools as Codex 0.169 offers them: a namespace
// per server ("Tools in the NAMESPACE namespace.") holding the server's
// tools as functions with their input schemas as they came. tools must be
// in order (by server, then name).
func MCPNamespaces(ts []agent.MCPTool) []json.RawMessage {
	var out []json.RawMessage
	for i := 0; i < len(ts); {
		j := i
		var fns []json.RawMessage
		for ; j < len(ts) && ts[j].Namespace == ts[i].Namespace; j++ {
			var params any = json.RawMessage(ts[j].InputSchema)
			if len(ts[j].InputSchema) == 0 {
				params = object(schema{})
			} else if m := map[string]any{}; json.Unmarshal(ts[j].InputSchema, &m) == nil && m["properties"] == nil {
				// An object schema without properties gets an empty
				// "properties", as Codex 0.169 sends it.
				m["properties"] = map[string]any{}
				params = m
			}
			fns = append(fns, marshal(schema{
				"type": "function", "name": ts[j].Callable, "description": ts[j].Description,
				"strict": false, "parameters": params,
			}))
		}
		ns := ts[i].Namespace
		out = append(out, marshal(schema{"type": "namespace", "name": ns, "description": "Tools in the " + ns + " namespace.", "tools": fns}))
		i = j
	}
	return out
}

// MCPResourceArgs are the resource tools' arguments.
type MCPResourceArgs struct {
	Server string `json:"server"`
	Cursor string `json:"cursor"`
	URI    string `json:"uri"`
}

// ParseMCPResourceArgs reads them; empty arguments are none.
func ParseMCPResourceArgs(raw string) (MCPResourceArgs, error) {
	var a MCPResourceArgs
	if raw == "" {
		return a, nil
	}
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		return a, fmt.Errorf("failed to parse function arguments: %v", err)
	}
	return a, nil
}
