package appproto

import "github.com/go-json-experiment/json/jsontext"

// InitializeParams are the params of initialize.
type InitializeParams struct {
	ClientInfo   ClientInfo              `json:"clientInfo"`
	Capabilities *InitializeCapabilities `json:"capabilities"`
}

// ClientInfo names the client.
type ClientInfo struct {
	Name    string  `json:"name"`
	Title   *string `json:"title"`
	Version string  `json:"version"`
}

// InitializeCapabilities are what the client can do.
type InitializeCapabilities struct {
	ExperimentalAPI bool `json:"experimentalApi,omitzero"`
	// OptOutNotificationMethods lists notification methods, by exact name,
	// that this connection must never receive.
	OptOutNotificationMethods      []string       `json:"optOutNotificationMethods,omitzero"`
	RequestAttestation             bool           `json:"requestAttestation,omitzero"`
	RequiredHumanApproval          *bool          `json:"requiredHumanApproval,omitzero"`
	ExplicitGatewayOauth           *bool          `json:"explicitGatewayOauth,omitzero"`
	McpServerOpenaiFormElicitation *bool          `json:"mcpServerOpenaiFormElicitation,omitzero"`
	Extensions                     jsontext.Value `json:"extensions,omitzero"`
}

// InitializeResponse is the result of initialize.
type InitializeResponse struct {
	UserAgent      string `json:"userAgent"`
	CodexHome      string `json:"codexHome"`
	PlatformFamily string `json:"platformFamily"`
	PlatformOs     string `json:"platformOs"`
}
