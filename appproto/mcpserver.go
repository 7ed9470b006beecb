package appproto

import (
	"encoding/json"

	"github.com/codexd/codexd/jsonrpc"
)

// The app-server's MCP methods: the servers' status and inventory, a
// reload of the configuration's table, and direct tool calls and resource
// reads from a client.

const (
	MethodMcpServerStatusList    = "mcpServerStatus/list"
	MethodConfigMcpServerReload  = "config/mcpServer/reload"
	MethodMcpServerToolCall      = "mcpServer/tool/call"
	MethodMcpServerResourceRead  = "mcpServer/resource/read"
	MethodMcpServerStartupStatus = "mcpServer/startupStatus/updated"
)

// ListMcpServerStatusParams are mcpServerStatus/list's params. Detail is
// "full" (the default) or "toolsAndAuthOnly" (no resources).
type ListMcpServerStatusParams struct {
	Cursor     *string `json:"cursor,omitzero"`
	Limit      *uint32 `json:"limit,omitzero"`
	Detail     *string `json:"detail,omitzero"`
	ServerName *string `json:"serverName,omitzero"`
	ThreadID   *string `json:"threadId,omitzero"`
}

// ListMcpServerStatusResponse is a page of servers, by name; NextCursor
// is the index of the next one, as Codex writes it.
type ListMcpServerStatusResponse struct {
	Data       []McpServerStatus `json:"data"`
	NextCursor *string           `json:"nextCursor"`
}

// McpServerStatus is one server's inventory. Tools, resources and
// templates are the server's own JSON, as it sent them. RuntimeStatus is
// the thread's connection state, null without a thread.
type McpServerStatus struct {
	Name               string                     `json:"name"`
	RuntimeStatus      *string                    `json:"runtimeStatus"`
	PluginID           *string                    `json:"pluginId"`
	HTTPOrigin         *string                    `json:"httpOrigin"`
	ServerInfo         *McpServerInfo             `json:"serverInfo"`
	ServerCapabilities json.RawMessage            `json:"serverCapabilities"`
	ToolListMeta       json.RawMessage            `json:"toolListMeta"`
	Tools              map[string]json.RawMessage `json:"tools"`
	ToolsError         *string                    `json:"toolsError"`
	Resources          []json.RawMessage          `json:"resources"`
	ResourceTemplates  []json.RawMessage          `json:"resourceTemplates"`
	AuthStatus         string                     `json:"authStatus"`
}

// McpServerInfo is what a server's initialize answer says of it.
type McpServerInfo struct {
	Name        string          `json:"name"`
	Title       *string         `json:"title"`
	Version     string          `json:"version"`
	Description *string         `json:"description"`
	Icons       json.RawMessage `json:"icons"`
	WebsiteURL  *string         `json:"websiteUrl"`
}

// McpServerRefreshResponse is config/mcpServer/reload's (empty) answer.
type McpServerRefreshResponse struct{}

// McpServerToolCallParams call one tool of a thread's server. The field
// order is Codex's: a missing field is reported in it.
type McpServerToolCallParams struct {
	ThreadID  string          `json:"threadId"`
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitzero"`
	Meta      json.RawMessage `json:"_meta,omitzero"`
}

// McpServerToolCallResponse is the server's result.
type McpServerToolCallResponse struct {
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent,omitzero"`
	IsError           *bool             `json:"isError,omitzero"`
	Meta              json.RawMessage   `json:"_meta,omitzero"`
}

// McpResourceReadParams read a resource of a server (of the thread's
// servers when ThreadID is set, else of a connection made for the read).
type McpResourceReadParams struct {
	ThreadID     *string         `json:"threadId,omitzero"`
	Server       string          `json:"server"`
	URI          string          `json:"uri"`
	ConnectorID  *string         `json:"connectorId,omitzero"`
	OriginCallID *string         `json:"originCallId,omitzero"`
	Target       json.RawMessage `json:"target,omitzero"`
	Meta         json.RawMessage `json:"_meta,omitzero"`
}

// McpResourceReadResponse holds the contents, as the server sent them.
type McpResourceReadResponse struct {
	Contents []json.RawMessage `json:"contents"`
}

// McpServerStatusUpdatedNotification is mcpServer/startupStatus/updated:
// Status is starting, ready, failed or cancelled; Error says why a start
// failed.
type McpServerStatusUpdatedNotification struct {
	ThreadID      *string `json:"threadId"`
	Name          string  `json:"name"`
	Status        string  `json:"status"`
	Error         *string `json:"error"`
	FailureReason *string `json:"failureReason"`
}

var (
	McpServerStatusList   = jsonrpc.Method[ListMcpServerStatusParams, ListMcpServerStatusResponse](MethodMcpServerStatusList)
	ConfigMcpServerReload = jsonrpc.Method[NoParams, McpServerRefreshResponse](MethodConfigMcpServerReload)
	McpServerToolCall     = jsonrpc.Method[McpServerToolCallParams, McpServerToolCallResponse](MethodMcpServerToolCall)
	McpServerResourceRead = jsonrpc.Method[McpResourceReadParams, McpResourceReadResponse](MethodMcpServerResourceRead)
)
