package mcp

import (
	"crypto/sha1"
	"encoding/hex"
	"sort"
)

// namespacePrefix starts every MCP namespace the model sees.
const namespacePrefix = "mcp__"

// sanitize keeps ASCII letters, digits and '_', replacing anything else
// with '_', as the Responses API's tool names require (Codex's rule).
func sanitize(s string) string {
	b := []byte(s)
	out := make([]byte, 0, len(b))
	for _, r := range s {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			out = append(out, byte(r))
		} else {
			out = append(out, '_')
		}
	}
	if len(out) == 0 {
		return "_"
	}
	return string(out)
}

// hashSuffix is "_" and the first 12 hex digits of identity's SHA-1.
func hashSuffix(identity string) string {
	h := sha1.Sum([]byte(identity))
	return "_" + hex.EncodeToString(h[:])[:12]
}

// rawTool is a tool by its raw names, before qualification.
type rawTool struct{ server, tool string }

// qualified is the model-visible namespace and name of a raw tool.
type qualified struct{ namespace, name string }

// qualify names tools as Codex 0.169 does: namespace "mcp__" +
// sanitize(server), name sanitize(tool); when sanitising makes two
// servers' namespaces (or two tools' names in a namespace) equal, each
// gets a hash of its raw identity appended. Observed in Codex 0.169:
// names are not truncated.
func qualify(tools []rawTool) map[rawTool]qualified {
	nsIdentity := func(server string) string { return server + "\x00" + server + "\x00" }
	servers := map[string]map[string]bool{} // sanitized -> raw servers
	for _, t := range tools {
		s := sanitize(t.server)
		if servers[s] == nil {
			servers[s] = map[string]bool{}
		}
		servers[s][t.server] = true
	}
	ns := func(server string) string {
		s := sanitize(server)
		if len(servers[s]) > 1 {
			s += hashSuffix(nsIdentity(server))
		}
		return namespacePrefix + s
	}
	names := map[[2]string]map[string]bool{} // (namespace, sanitized tool) -> raw tools
	for _, t := range tools {
		k := [2]string{ns(t.server), sanitize(t.tool)}
		if names[k] == nil {
			names[k] = map[string]bool{}
		}
		names[k][t.tool] = true
	}
	out := make(map[rawTool]qualified, len(tools))
	for _, t := range tools {
		n := ns(t.server)
		name := sanitize(t.tool)
		if len(names[[2]string{n, name}]) > 1 {
			name += hashSuffix(nsIdentity(t.server) + "\x00" + t.tool + "\x00" + t.tool)
		}
		out[t] = qualified{n, name}
	}
	return out
}

// sortTools orders tools by server, then name (Codex's order).
func sortTools(ts []Tool) {
	sort.Slice(ts, func(i, j int) bool {
		if ts[i].Server != ts[j].Server {
			return ts[i].Server < ts[j].Server
		}
		return ts[i].Name < ts[j].Name
	})
}
