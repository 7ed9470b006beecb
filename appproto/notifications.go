package appproto

import (
	"github.com/codexd/codexd/jsonrpc"
)

// ThreadStartedNotification: a thread was created (or forked).
type ThreadStartedNotification struct {
	Thread Thread `json:"thread"`
}

// ThreadStatusChangedNotification: a loaded thread's status changed.
type ThreadStatusChangedNotification struct {
	ThreadID string       `json:"threadId"`
	Status   ThreadStatus `json:"status"`
}

// ThreadIDNotification carries only a thread id: thread/archived,
// thread/unarchived and thread/closed.
type ThreadIDNotification struct {
	ThreadID string `json:"threadId"`
}

// ThreadNameUpdatedNotification: a thread was named.
type ThreadNameUpdatedNotification struct {
	ThreadID   string  `json:"threadId"`
	ThreadName *string `json:"threadName"`
}

// ThreadSettingsUpdatedNotification: thread/settings/update took effect.
type ThreadSettingsUpdatedNotification struct {
	ThreadID       string         `json:"threadId"`
	ThreadSettings ThreadSettings `json:"threadSettings"`
}

// ThreadTokenUsageUpdatedNotification reports token usage.
type ThreadTokenUsageUpdatedNotification struct {
	ThreadID   string           `json:"threadId"`
	TurnID     string           `json:"turnId"`
	TokenUsage ThreadTokenUsage `json:"tokenUsage"`
}

// ThreadTokenUsage is usage for the thread and the last response.
type ThreadTokenUsage struct {
	Total              TokenUsageBreakdown `json:"total"`
	Last               TokenUsageBreakdown `json:"last"`
	ModelContextWindow *int64              `json:"modelContextWindow"`
}

// TokenUsageBreakdown counts tokens.
type TokenUsageBreakdown struct {
	TotalTokens           int64 `json:"totalTokens"`
	InputTokens           int64 `json:"inputTokens"`
	CachedInputTokens     int64 `json:"cachedInputTokens"`
	CacheWriteInputTokens int64 `json:"cacheWriteInputTokens"`
	OutputTokens          int64 `json:"outputTokens"`
	ReasoningOutputTokens int64 `json:"reasoningOutputTokens"`
}

// TurnNotification is the params of turn/started and turn/completed.
type TurnNotification struct {
	ThreadID string `json:"threadId"`
	Turn     Turn   `json:"turn"`
}

// ItemStartedNotification: an item began.
type ItemStartedNotification struct {
	Item        ThreadItem `json:"item"`
	ThreadID    string     `json:"threadId"`
	TurnID      string     `json:"turnId"`
	StartedAtMs int64      `json:"startedAtMs"`
}

// ItemCompletedNotification: an item reached its final state.
type ItemCompletedNotification struct {
	Item              ThreadItem `json:"item"`
	ThreadID          string     `json:"threadId"`
	TurnID            string     `json:"turnId"`
	ContentTokenCount *uint64    `json:"contentTokenCount"`
	CompletedAtMs     int64      `json:"completedAtMs"`
}

// DeltaNotification is the params of item/agentMessage/delta and
// item/commandExecution/outputDelta.
type DeltaNotification struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
	ItemID   string `json:"itemId"`
	Delta    string `json:"delta"`
}

// ReasoningSummaryTextDeltaNotification appends to a reasoning summary.
type ReasoningSummaryTextDeltaNotification struct {
	ThreadID     string `json:"threadId"`
	TurnID       string `json:"turnId"`
	ItemID       string `json:"itemId"`
	Delta        string `json:"delta"`
	SummaryIndex int64  `json:"summaryIndex"`
}

// ReasoningSummaryPartAddedNotification starts a reasoning summary part.
type ReasoningSummaryPartAddedNotification struct {
	ThreadID     string `json:"threadId"`
	TurnID       string `json:"turnId"`
	ItemID       string `json:"itemId"`
	SummaryIndex int64  `json:"summaryIndex"`
}

// ReasoningTextDeltaNotification appends raw reasoning text.
type ReasoningTextDeltaNotification struct {
	ThreadID     string `json:"threadId"`
	TurnID       string `json:"turnId"`
	ItemID       string `json:"itemId"`
	Delta        string `json:"delta"`
	ContentIndex int64  `json:"contentIndex"`
}

// TurnPlanUpdatedNotification reports the model's plan.
type TurnPlanUpdatedNotification struct {
	ThreadID    string         `json:"threadId"`
	TurnID      string         `json:"turnId"`
	Explanation *string        `json:"explanation"`
	Plan        []TurnPlanStep `json:"plan"`
}

// TurnPlanStep is one step of a plan; status is "pending", "inProgress"
// or "completed".
type TurnPlanStep struct {
	Step   string `json:"step"`
	Status string `json:"status"`
}

// TurnDiffUpdatedNotification reports the turn's aggregated diff.
type TurnDiffUpdatedNotification struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
	Diff     string `json:"diff"`
}

// ErrorNotification reports an error during a turn.
type ErrorNotification struct {
	Error     TurnError `json:"error"`
	WillRetry bool      `json:"willRetry"`
	ThreadID  string    `json:"threadId"`
	TurnID    string    `json:"turnId"`
}

// WarningNotification is something the user should know.
type WarningNotification struct {
	ThreadID *string `json:"threadId"`
	Message  string  `json:"message"`
}

// ServerRequestResolvedNotification: a server request was answered or
// withdrawn; RequestID is the id the recipient's connection knew it by.
type ServerRequestResolvedNotification struct {
	ThreadID  string     `json:"threadId"`
	RequestID jsonrpc.ID `json:"requestId"`
}

// Notification definitions, one per notification the server sends.
var (
	ThreadStarted              = jsonrpc.Notification[ThreadStartedNotification]("thread/started")
	ThreadStatusChanged        = jsonrpc.Notification[ThreadStatusChangedNotification]("thread/status/changed")
	ThreadArchived             = jsonrpc.Notification[ThreadIDNotification]("thread/archived")
	ThreadUnarchived           = jsonrpc.Notification[ThreadIDNotification]("thread/unarchived")
	ThreadClosed               = jsonrpc.Notification[ThreadIDNotification]("thread/closed")
	ThreadNameUpdated          = jsonrpc.Notification[ThreadNameUpdatedNotification]("thread/name/updated")
	ThreadSettingsUpdated      = jsonrpc.Notification[ThreadSettingsUpdatedNotification]("thread/settings/updated")
	ThreadTokenUsageUpdated    = jsonrpc.Notification[ThreadTokenUsageUpdatedNotification]("thread/tokenUsage/updated")
	TurnStarted                = jsonrpc.Notification[TurnNotification]("turn/started")
	TurnCompletedN             = jsonrpc.Notification[TurnNotification]("turn/completed")
	ItemStarted                = jsonrpc.Notification[ItemStartedNotification]("item/started")
	ItemCompleted              = jsonrpc.Notification[ItemCompletedNotification]("item/completed")
	AgentMessageDelta          = jsonrpc.Notification[DeltaNotification]("item/agentMessage/delta")
	PlanDelta                  = jsonrpc.Notification[DeltaNotification]("item/plan/delta")
	CommandOutputDelta         = jsonrpc.Notification[DeltaNotification]("item/commandExecution/outputDelta")
	ReasoningSummaryTextDelta  = jsonrpc.Notification[ReasoningSummaryTextDeltaNotification]("item/reasoning/summaryTextDelta")
	ReasoningSummaryPartAdded  = jsonrpc.Notification[ReasoningSummaryPartAddedNotification]("item/reasoning/summaryPartAdded")
	ReasoningTextDelta         = jsonrpc.Notification[ReasoningTextDeltaNotification]("item/reasoning/textDelta")
	TurnPlanUpdated            = jsonrpc.Notification[TurnPlanUpdatedNotification]("turn/plan/updated")
	TurnDiffUpdated            = jsonrpc.Notification[TurnDiffUpdatedNotification]("turn/diff/updated")
	Error                      = jsonrpc.Notification[ErrorNotification]("error")
	Warning                    = jsonrpc.Notification[WarningNotification]("warning")
	ServerRequestResolved      = jsonrpc.Notification[ServerRequestResolvedNotification]("serverRequest/resolved")
	CommandExecOutputDelta     = jsonrpc.Notification[CommandExecOutputDeltaNotification]("command/exec/outputDelta")
	RemoteControlStatusChanged = jsonrpc.Notification[RemoteControlStatusChangedNotification]("remoteControl/status/changed")
	ThreadReadStateChanged     = jsonrpc.Notification[ThreadReadStateChangedNotification]("thread/readState/changed")
	ConfigWarning              = jsonrpc.Notification[ConfigWarningNotification]("configWarning")
)

// ConfigWarningNotification names a problem of the configuration (a key
// codexd does not act on), sent after initialize.
type ConfigWarningNotification struct {
	Summary string  `json:"summary"`
	Details *string `json:"details"`
	Path    *string `json:"path,omitzero"`
}

// RemoteControlStatusChangedNotification reports the remote-control
// connection's status and the server's remote identity. codexd has no
// remote control: it reports "disabled" after initialize, as Codex does
// when remote control is off.
type RemoteControlStatusChangedNotification struct {
	Status         string  `json:"status"` // "disabled", "connecting", "connected", "errored"
	ServerName     string  `json:"serverName"`
	InstallationID string  `json:"installationId"`
	EnvironmentID  *string `json:"environmentId"`
}

// ThreadReadStateChangedNotification reports a thread's new read state to
// its subscribers.
type ThreadReadStateChangedNotification struct {
	ThreadID  string          `json:"threadId"`
	ReadState ThreadReadState `json:"readState"`
}
