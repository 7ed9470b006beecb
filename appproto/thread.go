package appproto

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Thread is a conversation as clients see it.
type Thread struct {
	ID string `json:"id"`
	// Environments is set for a loaded thread, null otherwise
	// (experimental).
	Environments       *[]ThreadEnvironment `json:"environments"`
	Extra              jsontext.Value       `json:"extra"`
	SessionID          string               `json:"sessionId"`
	ForkedFromID       *string              `json:"forkedFromId"`
	AttachedToThreadID *string              `json:"attachedToThreadId"`
	ParentThreadID     *string              `json:"parentThreadId"`
	Preview            string               `json:"preview"`
	Ephemeral          bool                 `json:"ephemeral"`
	Section            jsontext.Value       `json:"section"`
	SectionEnteredAt   *int64               `json:"sectionEnteredAt"`
	ProjectID          *string              `json:"projectId"`
	HistoryMode        string               `json:"historyMode"`
	ModelProvider      string               `json:"modelProvider"`
	Model              *string              `json:"model"`
	ReasoningEffort    *string              `json:"reasoningEffort"`
	// CreatedAt, UpdatedAt and RecencyAt are Unix seconds.
	CreatedAt int64        `json:"createdAt"`
	UpdatedAt int64        `json:"updatedAt"`
	RecencyAt *int64       `json:"recencyAt"`
	Status    ThreadStatus `json:"status"`
	// Path is the rollout file; null for an ephemeral thread.
	Path       *string `json:"path"`
	Cwd        string  `json:"cwd"`
	CliVersion string  `json:"cliVersion"`
	Originator *string `json:"originator"`
	// Source is a SessionSource: "cli", "vscode", "exec", "appServer",
	// "unknown", or an object.
	Source               jsontext.Value `json:"source"`
	CanAcceptDirectInput *bool          `json:"canAcceptDirectInput"`
	ThreadSource         *string        `json:"threadSource"`
	AgentNickname        *string        `json:"agentNickname"`
	AgentRole            *string        `json:"agentRole"`
	GitInfo              jsontext.Value `json:"gitInfo"`
	Name                 *string        `json:"name"`
	DaybreakEnabled      *bool          `json:"daybreakEnabled"`
	Turns                []Turn         `json:"turns"`
}

// SessionSourceName returns a SessionSource that is a plain name.
func SessionSourceName(name string) jsontext.Value {
	b, _ := json.Marshal(name)
	return b
}

// ThreadEnvironment is an environment a loaded thread runs in.
type ThreadEnvironment struct {
	EnvironmentID         string   `json:"environmentId"`
	Cwd                   string   `json:"cwd"`
	RuntimeWorkspaceRoots []string `json:"runtimeWorkspaceRoots"`
}

// ThreadStatus is how a thread stands: "notLoaded", "idle", "systemError",
// or "active" with its flags.
type ThreadStatus struct {
	Type string
	// ActiveFlags are "waitingOnApproval" and "waitingOnUserInput"; only
	// for "active".
	ActiveFlags []string
}

// Thread statuses and active flags.
const (
	StatusNotLoaded   = "notLoaded"
	StatusIdle        = "idle"
	StatusSystemError = "systemError"
	StatusActive      = "active"

	FlagWaitingOnApproval  = "waitingOnApproval"
	FlagWaitingOnUserInput = "waitingOnUserInput"
)

// Equal reports whether s and t are the same status.
func (s ThreadStatus) Equal(t ThreadStatus) bool {
	if s.Type != t.Type || len(s.ActiveFlags) != len(t.ActiveFlags) {
		return false
	}
	for i := range s.ActiveFlags {
		if s.ActiveFlags[i] != t.ActiveFlags[i] {
			return false
		}
	}
	return true
}

func (s ThreadStatus) MarshalJSON() ([]byte, error) {
	if s.Type == StatusActive {
		flags := s.ActiveFlags
		if flags == nil {
			flags = []string{}
		}
		return json.Marshal(struct {
			Type        string   `json:"type"`
			ActiveFlags []string `json:"activeFlags"`
		}{s.Type, flags})
	}
	return json.Marshal(struct {
		Type string `json:"type"`
	}{s.Type})
}

func (s *ThreadStatus) UnmarshalJSON(b []byte) error {
	var w struct {
		Type        string   `json:"type"`
		ActiveFlags []string `json:"activeFlags"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = ThreadStatus{Type: w.Type, ActiveFlags: w.ActiveFlags}
	return nil
}

// Turn is a turn of a thread with the items that are loaded.
type Turn struct {
	ID         string       `json:"id"`
	RootTurnID *string      `json:"rootTurnId"`
	Items      []ThreadItem `json:"items"`
	// ItemsView says how much of Items is loaded: "notLoaded", "summary"
	// or "full".
	ItemsView string     `json:"itemsView"`
	Status    string     `json:"status"`
	Error     *TurnError `json:"error"`
	// StartedAt and CompletedAt are Unix seconds.
	StartedAt   *int64 `json:"startedAt"`
	CompletedAt *int64 `json:"completedAt"`
	DurationMs  *int64 `json:"durationMs"`
}

// Turn statuses and item views.
const (
	TurnInProgress  = "inProgress"
	TurnCompleted   = "completed"
	TurnInterrupted = "interrupted"
	TurnFailed      = "failed"

	ItemsNotLoaded = "notLoaded"
	ItemsSummary   = "summary"
	ItemsFull      = "full"
)

// ThreadReadState is a thread's read marker: its first unread position
// (null when read; {"type":"threadStart"} when marked unread;
// {"type":"turn","turnId"} for the earliest result needing attention) and
// an opaque revision that guards edits.
type ThreadReadState struct {
	FirstUnread jsontext.Value `json:"firstUnread"`
	Revision    string         `json:"revision"`
}

// ThreadReadStateUpdateParams are the params of thread/readState/update
// (experimental): mark a thread read or unread, as of the revision the
// client saw.
type ThreadReadStateUpdateParams struct {
	ThreadID         string                   `json:"threadId"`
	Operation        ThreadReadStateOperation `json:"operation"`
	ExpectedRevision string                   `json:"expectedRevision"`
}

// ThreadReadStateOperation is {"type":"read"} or {"type":"unread"}.
type ThreadReadStateOperation struct {
	Type string `json:"type"`
}

// ThreadReadStateUpdateResponse is the result of thread/readState/update.
type ThreadReadStateUpdateResponse struct {
	ReadState ThreadReadState `json:"readState"`
}
