package execproto

import "github.com/codexd/codexd/jsonrpc"

// Method names of the handshake and environment methods.
const (
	MethodInitialize        = "initialize"
	MethodInitialized       = "initialized"
	MethodEnvironmentInfo   = "environment/info"
	MethodEnvironmentStatus = "environment/status"
)

// InitializeParams are the params of initialize. ClientName is required
// (Codex: -32602 "missing field `clientName`").
type InitializeParams struct {
	ClientName string `json:"clientName"`
	// ResumeSessionID reattaches a session that a dropped connection left
	// detached: its processes kept running and buffering output.
	ResumeSessionID *string `json:"resumeSessionId,omitempty"`
}

// InitializeResponse is the result of initialize.
type InitializeResponse struct {
	SessionID       string          `json:"sessionId"`
	EnvironmentInfo EnvironmentInfo `json:"environmentInfo"`
}

// Shell names the login shell of the environment.
type Shell struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// EnvironmentInfo describes the machine the server runs on, as Codex's
// exec-server reports it in initialize and environment/info.
type EnvironmentInfo struct {
	Shell                Shell        `json:"shell"`
	ExecutorVersion      string       `json:"executorVersion"`
	ProviderID           string       `json:"providerId"`
	Cwd                  string       `json:"cwd"`
	UserHomeDir          string       `json:"userHomeDir"`
	PlatformOS           string       `json:"platformOs"`
	PrependPathDirs      []string     `json:"prependPathDirs"`
	TemporaryDirectories []string     `json:"temporaryDirectories"`
	TempDir              string       `json:"tempDir"`
	Capabilities         Capabilities `json:"capabilities"`
}

// Capabilities are the feature flags Codex's client checks before using a
// feature. codexd reports true only for what it implements.
type Capabilities struct {
	NetworkProxyLaunch                          bool `json:"networkProxyLaunch"`
	NetworkProxyReviewDomains                   bool `json:"networkProxyReviewDomains"`
	CredentialMasking                           bool `json:"credentialMasking"`
	CredentialMaskingCustomProviders            bool `json:"credentialMaskingCustomProviders"`
	CapabilityDiscoverySandbox                  bool `json:"capabilityDiscoverySandbox"`
	FsWatchMissing                              bool `json:"fsWatchMissing"`
	CapabilityDiscoveryV2                       bool `json:"capabilityDiscoveryV2"`
	EnvironmentConfigRead                       bool `json:"environmentConfigRead"`
	HTTPHeaderEnvVars                           bool `json:"httpHeaderEnvVars"`
	SandboxedFileStreaming                      bool `json:"sandboxedFileStreaming"`
	FileWriteStreaming                          bool `json:"fileWriteStreaming"`
	ShellSnapshotV2                             bool `json:"shellSnapshotV2"`
	WindowsMxc                                  bool `json:"windowsMxc"`
	LinuxRootWritePreservesDevices              bool `json:"linuxRootWritePreservesDevices"`
	LinuxApprovedRootWritePreservesRestrictions bool `json:"linuxApprovedRootWritePreservesRestrictions"`
}

// EnvironmentStatusResponse is the result of environment/status.
type EnvironmentStatusResponse struct {
	Status string `json:"status"`
}

// Unit is the params type of methods that take none: Codex accepts absent,
// null and {} params and rejects anything else ("invalid type: map,
// expected unit").
type Unit struct{}

// Typed method definitions, shared by the server and the client.
var (
	Initialize        = jsonrpc.Method[InitializeParams, InitializeResponse](MethodInitialize)
	Initialized       = jsonrpc.Notification[Unit](MethodInitialized)
	EnvironmentInfoM  = jsonrpc.Method[Unit, EnvironmentInfo](MethodEnvironmentInfo)
	EnvironmentStatus = jsonrpc.Method[Unit, EnvironmentStatusResponse](MethodEnvironmentStatus)
)
