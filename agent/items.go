package agent

import "time"

// Item is one entry of a turn: a message, a command, a file change... The
// concrete types are the structs in this file; the set is closed.
type Item interface {
	// ItemID is the item's id, unique within its thread.
	ItemID() string
	isItem()
}

// Turn is a turn and its items, as history holds it.
type Turn struct {
	ID          string
	Status      TurnStatus
	Items       []Item
	Error       *TurnError
	StartedAt   time.Time
	CompletedAt time.Time // zero while in progress
	// Duration is the turn's duration as recorded when it ended (Codex
	// records milliseconds while its times are whole seconds); zero when
	// unknown, and CompletedAt-StartedAt stands for it.
	Duration time.Duration
	// ItemTimes says, by item id, when the items of a stored turn started
	// and completed, as recorded; nil when unknown.
	ItemTimes map[string]ItemTime
}

// ItemTime is when an item started and completed.
type ItemTime struct{ Started, Completed time.Time }

// TurnStatus is how a turn stands or ended.
type TurnStatus string

const (
	TurnStatusInProgress  TurnStatus = "inProgress"
	TurnStatusCompleted   TurnStatus = "completed"
	TurnStatusInterrupted TurnStatus = "interrupted"
	TurnStatusFailed      TurnStatus = "failed"
)

// TurnError explains a failed turn, or an error during one.
type TurnError struct {
	Message string
	// Info classifies the error with Codex's names ("internalServerError",
	// "unauthorized", "responseStreamDisconnected", "sandboxError", ...);
	// empty when unknown.
	Info string
	// HTTPStatus is the model provider's status code, when one applies.
	HTTPStatus        int
	AdditionalDetails string
}

// Input is one part of a user message.
type Input struct {
	// Type is "text", "image" (URL), "localImage" (Path), "skill" or
	// "mention" (Name and Path).
	Type         string
	Text         string
	TextElements []TextElement
	URL          string
	Path         string
	Name         string
	Detail       string // image detail, if given
}

// TextElement marks a UI-defined span of a text input.
type TextElement struct {
	Start, End  int // byte range in Text
	Placeholder *string
}

// UserMessage is what the user said, as one or more inputs.
type UserMessage struct {
	ID string
	// ClientID is the client's own id for the message, echoed back.
	ClientID string
	Content  []Input
}

// AgentMessage is text from the model. Its ID is the model's output item id.
type AgentMessage struct {
	ID    string
	Text  string
	Phase string // "commentary", "final_answer" or ""
}

// Reasoning is the model's reasoning: its summary parts and, where the
// provider exposes it, raw content.
type Reasoning struct {
	ID      string
	Summary []string
	Content []string
}

// ItemStatus is the status of a command or a file change.
type ItemStatus string

const (
	ItemStatusInProgress ItemStatus = "inProgress"
	ItemStatusCompleted  ItemStatus = "completed"
	ItemStatusFailed     ItemStatus = "failed"
	ItemStatusDeclined   ItemStatus = "declined"
)

// CommandExecution is a command the model ran. Its ID is the model's call
// id.
type CommandExecution struct {
	ID string
	// Command is the command as shown to the user (e.g. the shell line
	// `/bin/bash -lc '...'`), and Argv what was run.
	Command string
	Argv    []string
	Cwd     string
	// ProcessID names the process while it can be written to
	// (write_stdin); empty when there is none.
	ProcessID string
	// Source is "agent", "userShell", "unifiedExecStartup" or
	// "unifiedExecInteraction".
	Source  string
	Status  ItemStatus
	Actions []CommandAction
	// Output is the aggregated stdout and stderr, when known.
	Output   *string
	ExitCode *int
	Duration time.Duration
	// SandboxDenied reports that the sandbox, not the command, made it
	// fail.
	SandboxDenied bool
}

// CommandAction is a best-effort reading of what a command does.
type CommandAction struct {
	// Type is "read", "listFiles", "search" or "unknown".
	Type    string
	Command string
	Name    string
	Path    string
	Query   string
}

// FileChange is a patch the model applied (or wanted to).
type FileChange struct {
	ID      string
	Changes []FileUpdate
	Status  ItemStatus
}

// FileUpdate is the change to one file.
type FileUpdate struct {
	Path string
	// Kind is "add", "delete" or "update".
	Kind     string
	MovePath string // for an update that renames the file
	// Diff is a unified diff of the change (the content, for an add).
	Diff string
}

// Plan is a proposed plan (plan mode).
type Plan struct {
	ID   string
	Text string
}

// ContextCompaction marks where the history was compacted: the model
// summarised the conversation so far and the summary replaced it.
type ContextCompaction struct {
	ID string
}

// EnteredReviewMode opens a review turn; Review says what is reviewed.
type EnteredReviewMode struct {
	ID     string
	Review string
}

// ExitedReviewMode closes a review turn; Review is the review's text as
// shown to the user (its findings, or the model's text when it gave none
// that could be read).
type ExitedReviewMode struct {
	ID     string
	Review string
}

func (i *UserMessage) ItemID() string      { return i.ID }
func (i *AgentMessage) ItemID() string     { return i.ID }
func (i *Reasoning) ItemID() string        { return i.ID }
func (i *CommandExecution) ItemID() string { return i.ID }
func (i *FileChange) ItemID() string       { return i.ID }
func (i *Plan) ItemID() string             { return i.ID }

func (i *ContextCompaction) ItemID() string { return i.ID }
func (i *EnteredReviewMode) ItemID() string { return i.ID }
func (i *ExitedReviewMode) ItemID() string  { return i.ID }

func (*ContextCompaction) isItem() {}
func (*EnteredReviewMode) isItem() {}
func (*ExitedReviewMode) isItem()  {}

func (*UserMessage) isItem()      {}
func (*AgentMessage) isItem()     {}
func (*Reasoning) isItem()        {}
func (*CommandExecution) isItem() {}
func (*FileChange) isItem()       {}
func (*Plan) isItem()             {}
