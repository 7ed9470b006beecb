package appproto

import "github.com/codexd/codexd/jsonrpc"

// ThreadShellCommandParams are the params of thread/shellCommand: a command
// line the thread's shell evaluates, unsandboxed. TimeoutMs defaults to one
// hour; zero times out at once.
type ThreadShellCommandParams struct {
	ThreadID  string `json:"threadId"`
	Command   string `json:"command"`
	TimeoutMs *int64 `json:"timeoutMs,omitzero"`
}

// ThreadShellCommandResponse is thread/shellCommand's (empty) answer; the
// command's item and turn follow as notifications.
type ThreadShellCommandResponse struct{}

// MethodThreadShellCommand is the TUI's `!cmd`.
const MethodThreadShellCommand = "thread/shellCommand"

// ThreadShellCommand is the typed definition of thread/shellCommand.
var ThreadShellCommand = jsonrpc.Method[ThreadShellCommandParams, ThreadShellCommandResponse](MethodThreadShellCommand)
