package appproto

import "github.com/codexd/codexd/jsonrpc"

// MethodThreadRevert is thread/revert: the history before a turn replaces
// the thread's stored history (the TUI's Esc Esc); files are not touched.
const MethodThreadRevert = "thread/revert"

// ThreadRevert is its typed definition; thread/reverted follows.
var (
	ThreadRevert   = jsonrpc.Method[ThreadRevertParams, ThreadRevertResponse](MethodThreadRevert)
	ThreadReverted = jsonrpc.Notification[ThreadIDNotification]("thread/reverted")
)

// ThreadRevertParams name the thread and the first turn to drop.
type ThreadRevertParams struct {
	ThreadID     string `json:"threadId"`
	BeforeTurnID string `json:"beforeTurnId"`
}

// ThreadRevertResponse is the reverted thread (turns empty: clients page
// them with thread/turns/list) and the cursors to page backwards from.
type ThreadRevertResponse struct {
	Thread               Thread  `json:"thread"`
	TurnsBackwardsCursor *string `json:"turnsBackwardsCursor"`
	ItemsBackwardsCursor *string `json:"itemsBackwardsCursor"`
}
