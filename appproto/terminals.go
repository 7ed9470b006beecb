package appproto

import "github.com/codexd/codexd/jsonrpc"

// ThreadBackgroundTerminalsListParams are the params of
// thread/backgroundTerminals/list (experimental).
type ThreadBackgroundTerminalsListParams struct {
	ThreadID string  `json:"threadId"`
	Cursor   *string `json:"cursor,omitzero"`
	Limit    *uint32 `json:"limit,omitzero"`
}

// ThreadBackgroundTerminal is one running exec_command session.
type ThreadBackgroundTerminal struct {
	ItemID     string   `json:"itemId"`
	ProcessID  string   `json:"processId"`
	Command    string   `json:"command"`
	Cwd        string   `json:"cwd"`
	OsPid      *uint32  `json:"osPid"`
	CPUPercent *float64 `json:"cpuPercent"`
	RssKb      *uint64  `json:"rssKb"`
}

// ThreadBackgroundTerminalsListResponse is its answer.
type ThreadBackgroundTerminalsListResponse struct {
	Data       []ThreadBackgroundTerminal `json:"data"`
	NextCursor *string                    `json:"nextCursor"`
}

// ThreadBackgroundTerminalsTerminateParams name one terminal.
type ThreadBackgroundTerminalsTerminateParams struct {
	ThreadID  string `json:"threadId"`
	ProcessID string `json:"processId"`
}

// ThreadBackgroundTerminalsTerminateResponse says whether it ran.
type ThreadBackgroundTerminalsTerminateResponse struct {
	Terminated bool `json:"terminated"`
}

// Method names and typed definitions of the background terminals (the
// TUI's /ps and /stop).
const (
	MethodThreadBackgroundTerminalsList      = "thread/backgroundTerminals/list"
	MethodThreadBackgroundTerminalsClean     = "thread/backgroundTerminals/clean"
	MethodThreadBackgroundTerminalsTerminate = "thread/backgroundTerminals/terminate"
)

var (
	ThreadBackgroundTerminalsList      = jsonrpc.Method[ThreadBackgroundTerminalsListParams, ThreadBackgroundTerminalsListResponse](MethodThreadBackgroundTerminalsList)
	ThreadBackgroundTerminalsClean     = jsonrpc.Method[ThreadIDParams, EmptyResponse](MethodThreadBackgroundTerminalsClean)
	ThreadBackgroundTerminalsTerminate = jsonrpc.Method[ThreadBackgroundTerminalsTerminateParams, ThreadBackgroundTerminalsTerminateResponse](MethodThreadBackgroundTerminalsTerminate)
)
