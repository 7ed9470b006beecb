package agent

import "time"

// Event is one thing that happened on a thread.
type Event struct {
	// Seq numbers the thread's events from 1, with no gaps, across the
	// thread's life in this process.
	Seq uint64
	// TurnID is the turn the event belongs to; empty for thread-level
	// events (SettingsUpdated, ShutdownComplete, some warnings).
	TurnID string
	// Time is when the core emitted the event.
	Time time.Time
	Msg  EventMsg
}

// EventMsg is the payload of an Event. The concrete types are the structs
// in this file; the set is closed.
type EventMsg interface{ isEventMsg() }

// TurnStarted opens a turn. Every other event of the turn follows it.
type TurnStarted struct {
	StartedAt time.Time
	// Kind is "regular", "review" or "compact".
	Kind               string
	ModelContextWindow int64
}

// ItemStarted: an item began. Its content may still grow through deltas.
type ItemStarted struct{ Item Item }

// ItemCompleted: an item reached its final content and status. StartedAt,
// when set, is when its ItemStarted was (a recorder keeps it with the
// item, so that a stored turn knows its items' times).
type ItemCompleted struct {
	Item      Item
	StartedAt time.Time
}

// AgentMessageDelta appends text to an AgentMessage item.
type AgentMessageDelta struct {
	ItemID string
	Delta  string
}

// PlanDelta appends text to a Plan item (a plan-mode turn's proposed plan).
type PlanDelta struct {
	ItemID string
	Delta  string
}

// ReasoningSummaryDelta appends text to part SummaryIndex of a Reasoning
// item's summary.
type ReasoningSummaryDelta struct {
	ItemID       string
	SummaryIndex int
	Delta        string
}

// ReasoningSummaryPartAdded starts part SummaryIndex of a Reasoning item's
// summary.
type ReasoningSummaryPartAdded struct {
	ItemID       string
	SummaryIndex int
}

// ReasoningTextDelta appends raw reasoning text to part ContentIndex.
type ReasoningTextDelta struct {
	ItemID       string
	ContentIndex int
	Delta        string
}

// CommandOutputDelta carries output of a CommandExecution item.
type CommandOutputDelta struct {
	ItemID string
	// Stream is "stdout", "stderr" or "pty".
	Stream string
	Data   []byte
}

// PlanUpdated: the model's plan (update_plan) changed.
type PlanUpdated struct {
	Explanation string
	Steps       []PlanStep
}

// PlanStep is one step of a plan.
type PlanStep struct {
	Step string
	// Status is "pending", "inProgress" or "completed".
	Status string
}

// TurnDiff is the unified diff of every file the turn changed so far.
type TurnDiff struct{ Diff string }

// TokenCount reports token usage after a model response.
type TokenCount struct{ Info TokenUsageInfo }

// TokenUsageInfo is usage for the thread (Total) and the last response.
type TokenUsageInfo struct {
	Total, Last        TokenUsage
	ModelContextWindow int64
}

// TokenUsage counts tokens.
type TokenUsage struct {
	Input, CachedInput, CacheWriteInput, Output, ReasoningOutput, Total int64
}

// Error reports an error during a turn. With WillRetry the core is
// retrying (a stream or request error); without, the turn fails and
// TurnCompleted{Status: TurnStatusFailed} follows.
type Error struct {
	Err       TurnError
	WillRetry bool
}

// Warning is something the user should know that stops nothing.
type Warning struct{ Message string }

// ExecApprovalRequest asks to run a command. The core waits for an
// ExecDecision with the same CallID (and ApprovalID).
type ExecApprovalRequest struct {
	CallID string
	// ApprovalID is set when several approvals belong to one item.
	ApprovalID string
	Command    string
	Argv       []string
	Cwd        string
	// Reason is the model's justification, or why the core asks.
	Reason  string
	Actions []CommandAction
	// ProposedAmendment is a command prefix the user may allow for good.
	ProposedAmendment []string
	// Decisions lists what the user may answer, in display order.
	Decisions []Decision
	// SandboxRetry: the sandbox denied this command and the core asks to
	// run it again without the sandbox (on-failure).
	SandboxRetry bool
}

// PatchApprovalRequest asks to apply a FileChange. The core waits for a
// PatchDecision with the same CallID.
type PatchApprovalRequest struct {
	CallID  string
	Changes []FileUpdate
	Reason  string
	// GrantRoot, when set, asks for write access under this directory for
	// the rest of the session.
	GrantRoot string
}

// UserInputRequest asks the user questions. The core waits for a
// UserInputAnswer with the same CallID.
type UserInputRequest struct {
	CallID    string
	Questions []Question
}

// Question is one question of a UserInputRequest.
type Question struct {
	ID, Header, Question string
	Options              []QuestionOption
	IsOther, IsSecret    bool
}

// QuestionOption is one choice of a Question.
type QuestionOption struct{ Label, Description string }

// SettingsUpdated: the thread's settings changed, by an UpdateSettings or
// by a UserInput's overrides (then before that turn's TurnStarted).
type SettingsUpdated struct{ Settings Settings }

// TurnCompleted ends a turn; it is always the turn's last event.
type TurnCompleted struct {
	Status TurnStatus
	// Error is set for TurnStatusFailed.
	Error *TurnError
	// LastAgentMessage is the final answer's text, if any.
	LastAgentMessage string
	// LastAgentMessageID is the id of that AgentMessage item.
	LastAgentMessageID string
	CompletedAt        time.Time
	Duration           time.Duration
}

// ThreadNameUpdated: the thread was named.
type ThreadNameUpdated struct{ Name string }

// ShutdownComplete is the thread's last event.
type ShutdownComplete struct{}

func (TurnStarted) isEventMsg()               {}
func (ItemStarted) isEventMsg()               {}
func (ItemCompleted) isEventMsg()             {}
func (AgentMessageDelta) isEventMsg()         {}
func (PlanDelta) isEventMsg()                 {}
func (ReasoningSummaryDelta) isEventMsg()     {}
func (ReasoningSummaryPartAdded) isEventMsg() {}
func (ReasoningTextDelta) isEventMsg()        {}
func (CommandOutputDelta) isEventMsg()        {}
func (PlanUpdated) isEventMsg()               {}
func (TurnDiff) isEventMsg()                  {}
func (TokenCount) isEventMsg()                {}
func (Error) isEventMsg()                     {}
func (Warning) isEventMsg()                   {}
func (ExecApprovalRequest) isEventMsg()       {}
func (PatchApprovalRequest) isEventMsg()      {}
func (UserInputRequest) isEventMsg()          {}
func (SettingsUpdated) isEventMsg()           {}
func (TurnCompleted) isEventMsg()             {}
func (ThreadNameUpdated) isEventMsg()         {}
func (ShutdownComplete) isEventMsg()          {}
