package appproto

// CommandExecParams are the params of command/exec.
type CommandExecParams struct {
	Command            []string           `json:"command"`
	ProcessID          *string            `json:"processId,omitzero"`
	Tty                bool               `json:"tty,omitzero"`
	StreamStdin        bool               `json:"streamStdin,omitzero"`
	StreamStdoutStderr bool               `json:"streamStdoutStderr,omitzero"`
	OutputBytesCap     *uint64            `json:"outputBytesCap,omitzero"`
	DisableOutputCap   bool               `json:"disableOutputCap,omitzero"`
	DisableTimeout     bool               `json:"disableTimeout,omitzero"`
	TimeoutMs          *int64             `json:"timeoutMs,omitzero"`
	Cwd                *string            `json:"cwd,omitzero"`
	Env                map[string]*string `json:"env,omitzero"` // a null value unsets
	Size               *TerminalSize      `json:"size,omitzero"`
	SandboxPolicy      *SandboxPolicy     `json:"sandboxPolicy,omitzero"`
	PermissionProfile  *string            `json:"permissionProfile,omitzero"` // experimental
}

// TerminalSize is a PTY size.
type TerminalSize struct {
	Rows uint16 `json:"rows"`
	Cols uint16 `json:"cols"`
}

// CommandExecResponse is the result of command/exec. Streamed output is
// not repeated here.
type CommandExecResponse struct {
	ExitCode int    `json:"exitCode"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
}

// CommandExecWriteParams write to (or close) a command's stdin.
type CommandExecWriteParams struct {
	ProcessID   string  `json:"processId"`
	DeltaBase64 *string `json:"deltaBase64,omitzero"`
	CloseStdin  bool    `json:"closeStdin,omitzero"`
}

// CommandExecTerminateParams terminate a command.
type CommandExecTerminateParams struct {
	ProcessID string `json:"processId"`
}

// CommandExecResizeParams resize a command's PTY.
type CommandExecResizeParams struct {
	ProcessID string       `json:"processId"`
	Size      TerminalSize `json:"size"`
}

// CommandExecOutputDeltaNotification carries streamed output of a
// command; Stream is "stdout" or "stderr" (a PTY's output is "stdout").
type CommandExecOutputDeltaNotification struct {
	ProcessID   string `json:"processId"`
	Stream      string `json:"stream"`
	DeltaBase64 string `json:"deltaBase64"`
	CapReached  bool   `json:"capReached"`
}
