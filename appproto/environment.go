package appproto

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/jsonrpc"
)

// EnvironmentAddParams are the params of environment/add (experimental):
// a remote exec-server registered under an id, or the one of that id
// replaced.
type EnvironmentAddParams struct {
	EnvironmentID string `json:"environmentId"`
	ExecServerURL string `json:"execServerUrl"`
	// AuthBearerToken is sent on every (re)connection; only over a secure
	// transport or to a loopback destination.
	AuthBearerToken *string `json:"authBearerToken,omitzero"`
	// ConnectTimeoutMs bounds one connection; omitted, the default.
	ConnectTimeoutMs *uint64 `json:"connectTimeoutMs,omitzero"`
	// WebsocketRequestID and Skills are accepted and not acted on.
	WebsocketRequestID *string        `json:"websocketRequestId,omitzero"`
	Skills             jsontext.Value `json:"skills,omitzero"`
}

// EnvironmentInfoParams and EnvironmentStatusParams name one environment
// (two types, as Codex's type names show in its decode errors).
type EnvironmentInfoParams struct {
	EnvironmentID string `json:"environmentId"`
}

type EnvironmentStatusParams struct {
	EnvironmentID string `json:"environmentId"`
}

// EnvironmentStatusResponse is environment/status's answer: "ready",
// "pending", "disconnected" or "unknown", and why for the last two.
type EnvironmentStatusResponse struct {
	Status string  `json:"status"`
	Error  *string `json:"error,omitzero"`
}

// EnvironmentShellInfo names an environment's shell.
type EnvironmentShellInfo struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// EnvironmentInfoResponse is environment/info's answer: the exec-server's
// default working directory (a file URI) and shell.
type EnvironmentInfoResponse struct {
	Shell EnvironmentShellInfo `json:"shell"`
	Cwd   *string              `json:"cwd"`
}

// Method names and typed definitions of the environment methods.
const (
	MethodEnvironmentAdd    = "environment/add"
	MethodEnvironmentInfo   = "environment/info"
	MethodEnvironmentStatus = "environment/status"
)

var (
	EnvironmentAdd    = jsonrpc.Method[EnvironmentAddParams, EmptyResponse](MethodEnvironmentAdd)
	EnvironmentInfo   = jsonrpc.Method[EnvironmentInfoParams, EnvironmentInfoResponse](MethodEnvironmentInfo)
	EnvironmentStatus = jsonrpc.Method[EnvironmentStatusParams, EnvironmentStatusResponse](MethodEnvironmentStatus)
)

// TurnEnvironmentParams are one entry of the environments of thread/start
// and turn/start: an environment id, the cwd in it and its runtime
// workspace roots (omitted: the cwd).
type TurnEnvironmentParams struct {
	EnvironmentID         string    `json:"environmentId"`
	Cwd                   string    `json:"cwd"`
	RuntimeWorkspaceRoots *[]string `json:"runtimeWorkspaceRoots,omitzero"`
}

// EnvironmentConnectionNotification is the params of
// thread/environment/connected and thread/environment/disconnected: the
// thread's current environment came back or dropped.
type EnvironmentConnectionNotification struct {
	EnvironmentID string `json:"environmentId"`
	ThreadID      string `json:"threadId"`
}

// Notification names of an environment's connection.
const (
	MethodThreadEnvironmentConnected    = "thread/environment/connected"
	MethodThreadEnvironmentDisconnected = "thread/environment/disconnected"
)
