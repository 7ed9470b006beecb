package appserver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/go-json-experiment/json"

	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/tomledit"
)

// mcpPersistAlways reports whether a client's answer to an MCP tool
// approval accepts it with _meta.persist = "always".
func mcpPersistAlways(result any) bool {
	resp, ok := typed(result, appproto.McpServerElicitationRequest.DecodeResponse)
	if !ok || resp.Action != appproto.ElicitationAccept || len(resp.Meta) == 0 {
		return false
	}
	var meta struct {
		Persist string `json:"persist"`
	}
	return json.Unmarshal(resp.Meta, &meta) == nil && meta.Persist == "always"
}

// persistMCPToolApproval allows server's tool for good, as Codex 0.169
// does for an "always" answer: [mcp_servers.SERVER.tools.TOOL]
// approval_mode = "approve" goes into the user's config.toml (through
// tomledit, atomically, every other byte kept, under the lock of the
// config writes), and every thread's servers, and those of the threads to
// come, take the mode at once. A server that is not in the user's
// config.toml is an error, as in Codex; the approval then holds for the
// session only.
func (s *Server) persistMCPToolApproval(server, tool string) error {
	path := s.userConfigPath()
	if path == "" {
		return errors.New("no user config.toml")
	}
	w := &s.cfgw
	w.mu.Lock()
	defer w.mu.Unlock()
	src, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	cfg, err := decodeTOML(src)
	if err != nil {
		return err
	}
	servers, _ := cfg["mcp_servers"].(map[string]any)
	if _, ok := servers[server].(map[string]any); !ok {
		return fmt.Errorf("MCP server `%s` is not configured in config.toml", server)
	}
	doc, err := tomledit.Parse(src)
	if err != nil {
		return err
	}
	if err := doc.Set([]string{"mcp_servers", server, "tools", tool, "approval_mode"}, "approve"); err != nil {
		return err
	}
	if _, err := decodeTOML(doc.Bytes()); err != nil {
		return fmt.Errorf("the edited config.toml does not decode: %v", err)
	}
	if err := writeAtomic(path, doc.Bytes()); err != nil {
		return err
	}
	if s.cfg.MCP != nil {
		s.cfg.MCP.SetToolApprovalMode(server, tool, "approve")
	}
	return nil
}
