package agent

import "strings"

// Op is an operation submitted to a Thread. The concrete types are the
// structs in this file; the set is closed.
type Op interface{ isOp() }

// UserInput starts a turn with a user message or, while a turn is active,
// adds the message to that turn (the model sees it at its next request).
// Submit returns the turn's id.
type UserInput struct {
	Input []Input
	// ClientID is the client's id for the message, echoed on its item.
	ClientID string
	// Overrides apply to this turn and persist for later ones.
	Overrides Overrides
	// OutputSchema, when set, is the JSON text of a JSON Schema that the
	// model's final message must follow; it applies to this turn only.
	OutputSchema []byte
}

// Steer adds input to the active turn, atomically checking that the active
// turn is ExpectedTurnID and that it can be steered. It fails with
// ErrEmptyInput, ErrNoActiveTurn, *TurnMismatchError or
// *NotSteerableError, queueing nothing. Submit returns the turn's id.
type Steer struct {
	ExpectedTurnID string
	Input          []Input
	ClientID       string
}

// Interrupt aborts the active turn: the model stream is cancelled, running
// commands are stopped, pending approvals are dropped, and the turn ends
// with TurnCompleted{Status: TurnStatusInterrupted}. With TurnID set it fails
// with *TurnMismatchError when another turn is active. It fails with
// ErrNoActiveTurn when no turn is active.
type Interrupt struct {
	TurnID string
}

// UpdateSettings changes the thread's settings from the next turn on.
// SettingsUpdated follows once they are applied, if they changed anything.
type UpdateSettings struct {
	Overrides Overrides
}

// Decision answers an approval request.
type Decision string

const (
	// Accept approves this once.
	Accept Decision = "accept"
	// AcceptForSession approves this and the same again in this thread.
	AcceptForSession Decision = "acceptForSession"
	// Decline denies; the turn goes on and the model is told.
	Decline Decision = "decline"
	// Cancel denies and interrupts the turn.
	Cancel Decision = "cancel"
	// RequestFailed means the approval could not be obtained (the client
	// answered with an error): denied, and the item fails.
	RequestFailed Decision = "failed"
)

// ExecDecision answers an ExecApprovalRequest, matched by CallID (and
// ApprovalID, when the request had one).
type ExecDecision struct {
	CallID     string
	ApprovalID string
	Decision   Decision
	// Amendment, with Accept, is a command prefix to allow from now on.
	Amendment []string
}

// PatchDecision answers a PatchApprovalRequest, matched by CallID.
type PatchDecision struct {
	CallID   string
	Decision Decision
}

// UserInputAnswer answers a UserInputRequest, matched by CallID: answers
// keyed by question id. Empty answers mean the user gave none.
type UserInputAnswer struct {
	CallID  string
	Answers map[string][]string
}

// Shutdown stops the thread: an active turn is interrupted, the rollout is
// flushed, ShutdownComplete is the last event and Events() is closed.
type Shutdown struct{}

// Compact starts a compaction turn: the model summarises the thread and the
// summary replaces its history. A running turn is interrupted first. Submit
// returns the compaction turn's id.
type Compact struct{}

// Review starts a review turn (kind "review"), which cannot be steered and
// which new input does not join. Model, when set, runs the review instead
// of the thread's model. Submit returns the review turn's id.
type Review struct {
	Target ReviewTarget
	Model  string
}

// ReviewTarget is what a review looks at. Type is "uncommittedChanges",
// "baseBranch" (Branch), "commit" (SHA, and Title for display) or "custom"
// (Instructions).
type ReviewTarget struct {
	Type         string
	Branch       string
	SHA          string
	Title        string
	Instructions string
}

// Hint names the review for the user, with Codex's wording (its clients
// show it): "current changes", "changes against 'main'", "commit abc1234:
// title" (the first seven characters of the sha), or the instructions.
func (t ReviewTarget) Hint() string {
	switch t.Type {
	case "uncommittedChanges":
		return "current changes"
	case "baseBranch":
		return "changes against '" + t.Branch + "'"
	case "commit":
		short := t.SHA
		if r := []rune(short); len(r) > 7 {
			short = string(r[:7])
		}
		if t.Title != "" {
			return "commit " + short + ": " + t.Title
		}
		return "commit " + short
	case "custom":
		return strings.TrimSpace(t.Instructions)
	}
	return ""
}

func (Compact) isOp() {}
func (Review) isOp()  {}

func (UserInput) isOp()       {}
func (Steer) isOp()           {}
func (Interrupt) isOp()       {}
func (UpdateSettings) isOp()  {}
func (ExecDecision) isOp()    {}
func (PatchDecision) isOp()   {}
func (UserInputAnswer) isOp() {}
func (Shutdown) isOp()        {}
