package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codexd/codexd/agent"
)

var _ agent.MCPConnector = (*Manager)(nil)

// listPayload is what list_mcp_resources and list_mcp_resource_templates
// answer, in Codex's shape: each entry carries its server's name.
type listPayload struct {
	Server            string           `json:"server,omitempty"`
	Resources         []map[string]any `json:"resources,omitempty"`
	ResourceTemplates []map[string]any `json:"resourceTemplates,omitempty"`
	NextCursor        string           `json:"nextCursor,omitempty"`
}

func withServer(v any, server string) map[string]any {
	b, _ := json.Marshal(v)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if m == nil {
		m = map[string]any{}
	}
	m["server"] = server
	return m
}

// readyServers are the names of the servers with a live session.
func (m *Manager) readyServers() []string {
	var out []string
	for _, st := range m.Statuses() {
		if st.State == StateReady {
			out = append(out, st.Name)
		}
	}
	slices.Sort(out)
	return out
}

// ListResources lists one server's resources (one page, from cursor), or
// the first pages of every ready server's when server is "".
func (m *Manager) ListResources(ctx context.Context, server, cursor string) (string, error) {
	return m.list(ctx, server, cursor, false)
}

// ListResourceTemplates is ListResources for resource templates.
func (m *Manager) ListResourceTemplates(ctx context.Context, server, cursor string) (string, error) {
	return m.list(ctx, server, cursor, true)
}

func (m *Manager) list(ctx context.Context, server, cursor string, templates bool) (string, error) {
	if server == "" && cursor != "" {
		return "", fmt.Errorf("cursor can only be used with a server")
	}
	names := []string{server}
	if server == "" {
		names = m.readyServers()
	}
	out := listPayload{Server: server, Resources: []map[string]any{}}
	if templates {
		out.Resources, out.ResourceTemplates = nil, []map[string]any{}
	}
	for _, name := range names {
		_, cs, err := m.session(ctx, name)
		if err != nil {
			if server == "" {
				continue
			}
			return "", err
		}
		if ir := cs.InitializeResult(); ir != nil && ir.Capabilities != nil && ir.Capabilities.Resources == nil {
			continue // a server without resources has none to list
		}
		if templates {
			res, err := cs.ListResourceTemplates(ctx, &sdk.ListResourceTemplatesParams{Cursor: cursor})
			if err != nil {
				return "", fmt.Errorf("resources/templates/list failed for %s: %v", name, err)
			}
			for _, r := range res.ResourceTemplates {
				out.ResourceTemplates = append(out.ResourceTemplates, withServer(r, name))
			}
			if server != "" {
				out.NextCursor = res.NextCursor
			}
			continue
		}
		res, err := cs.ListResources(ctx, &sdk.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return "", fmt.Errorf("resources/list failed for %s: %v", name, err)
		}
		for _, r := range res.Resources {
			out.Resources = append(out.Resources, withServer(r, name))
		}
		if server != "" {
			out.NextCursor = res.NextCursor
		}
	}
	b, err := json.Marshal(out)
	return string(b), err
}

// ReadResource reads uri from server; the answer is {server, uri,
// contents}.
func (m *Manager) ReadResource(ctx context.Context, server, uri string) (string, error) {
	res, err := m.Read(ctx, server, uri)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(map[string]any{"server": server, "uri": uri, "contents": res.Contents})
	return string(b), err
}

// Read reads uri from server.
func (m *Manager) Read(ctx context.Context, server, uri string) (*sdk.ReadResourceResult, error) {
	_, cs, err := m.session(ctx, server)
	if err != nil {
		return nil, err
	}
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, fmt.Errorf("resources/read failed: %v", err)
	}
	return res, nil
}

// Resources lists every resource and resource template of server (all
// pages), for a status report.
func (m *Manager) Resources(ctx context.Context, server string) ([]*sdk.Resource, []*sdk.ResourceTemplate, error) {
	_, cs, err := m.session(ctx, server)
	if err != nil {
		return nil, nil, err
	}
	if ir := cs.InitializeResult(); ir != nil && ir.Capabilities != nil && ir.Capabilities.Resources == nil {
		return nil, nil, nil
	}
	var rs []*sdk.Resource
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			return nil, nil, err
		}
		rs = append(rs, r)
	}
	var ts []*sdk.ResourceTemplate
	for t, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			return nil, nil, err
		}
		ts = append(ts, t)
	}
	return rs, ts, nil
}
