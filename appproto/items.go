package appproto

import (
	"bytes"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// ThreadItem is one item of a turn. Exactly one of the variant pointers is
// set; an item of a type this package does not model is kept in Other as it
// arrived (decoding only: the server never sends one).
type ThreadItem struct {
	UserMessage      *UserMessageItem
	AgentMessage     *AgentMessageItem
	Reasoning        *ReasoningItem
	CommandExecution *CommandExecutionItem
	FileChange       *FileChangeItem
	Plan             *PlanItem
	// ContextCompaction, EnteredReviewMode and ExitedReviewMode are the
	// items of compaction and review turns.
	ContextCompaction *ContextCompactionItem
	EnteredReviewMode *ReviewModeItem
	ExitedReviewMode  *ReviewModeItem
	Other             jsontext.Value
}

// ID returns the item's id.
func (t ThreadItem) ID() string {
	switch {
	case t.UserMessage != nil:
		return t.UserMessage.ID
	case t.AgentMessage != nil:
		return t.AgentMessage.ID
	case t.Reasoning != nil:
		return t.Reasoning.ID
	case t.CommandExecution != nil:
		return t.CommandExecution.ID
	case t.FileChange != nil:
		return t.FileChange.ID
	case t.Plan != nil:
		return t.Plan.ID
	case t.ContextCompaction != nil:
		return t.ContextCompaction.ID
	case t.EnteredReviewMode != nil:
		return t.EnteredReviewMode.ID
	case t.ExitedReviewMode != nil:
		return t.ExitedReviewMode.ID
	}
	var w struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(t.Other, &w)
	return w.ID
}

// Type returns the item's type name.
func (t ThreadItem) Type() string {
	switch {
	case t.UserMessage != nil:
		return "userMessage"
	case t.AgentMessage != nil:
		return "agentMessage"
	case t.Reasoning != nil:
		return "reasoning"
	case t.CommandExecution != nil:
		return "commandExecution"
	case t.FileChange != nil:
		return "fileChange"
	case t.Plan != nil:
		return "plan"
	case t.ContextCompaction != nil:
		return "contextCompaction"
	case t.EnteredReviewMode != nil:
		return "enteredReviewMode"
	case t.ExitedReviewMode != nil:
		return "exitedReviewMode"
	}
	var w struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(t.Other, &w)
	return w.Type
}

func (t ThreadItem) MarshalJSON() ([]byte, error) {
	switch {
	case t.UserMessage != nil:
		return json.Marshal(t.UserMessage)
	case t.AgentMessage != nil:
		return json.Marshal(t.AgentMessage)
	case t.Reasoning != nil:
		return json.Marshal(t.Reasoning)
	case t.CommandExecution != nil:
		return json.Marshal(t.CommandExecution)
	case t.FileChange != nil:
		return json.Marshal(t.FileChange)
	case t.Plan != nil:
		return json.Marshal(t.Plan)
	case t.ContextCompaction != nil:
		return json.Marshal(t.ContextCompaction)
	case t.EnteredReviewMode != nil:
		return json.Marshal(t.EnteredReviewMode)
	case t.ExitedReviewMode != nil:
		return json.Marshal(t.ExitedReviewMode)
	case t.Other != nil:
		return t.Other, nil
	}
	return []byte("null"), nil
}

func (t *ThreadItem) UnmarshalJSON(b []byte) error {
	var w struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	var out ThreadItem
	var err error
	switch w.Type {
	case "userMessage":
		out.UserMessage = new(UserMessageItem)
		err = json.Unmarshal(b, out.UserMessage)
	case "agentMessage":
		out.AgentMessage = new(AgentMessageItem)
		err = json.Unmarshal(b, out.AgentMessage)
	case "reasoning":
		out.Reasoning = new(ReasoningItem)
		err = json.Unmarshal(b, out.Reasoning)
	case "commandExecution":
		out.CommandExecution = new(CommandExecutionItem)
		err = json.Unmarshal(b, out.CommandExecution)
	case "fileChange":
		out.FileChange = new(FileChangeItem)
		err = json.Unmarshal(b, out.FileChange)
	case "plan":
		out.Plan = new(PlanItem)
		err = json.Unmarshal(b, out.Plan)
	case "contextCompaction":
		out.ContextCompaction = new(ContextCompactionItem)
		err = json.Unmarshal(b, out.ContextCompaction)
	case "enteredReviewMode":
		out.EnteredReviewMode = new(ReviewModeItem)
		err = json.Unmarshal(b, out.EnteredReviewMode)
	case "exitedReviewMode":
		out.ExitedReviewMode = new(ReviewModeItem)
		err = json.Unmarshal(b, out.ExitedReviewMode)
	default:
		out.Other = bytes.Clone(b)
	}
	if err != nil {
		return err
	}
	*t = out
	return nil
}

// ItemTimes are the times every item carries, in Unix milliseconds.
type ItemTimes struct {
	StartedAtMs   *int64 `json:"startedAtMs"`
	CompletedAtMs *int64 `json:"completedAtMs"`
}

// UserMessageItem is what the user said.
type UserMessageItem struct {
	Type     string      `json:"type"` // "userMessage"
	ID       string      `json:"id"`
	ClientID *string     `json:"clientId"`
	Content  []UserInput `json:"content"`
	ItemTimes
}

// AgentMessageItem is text from the model.
type AgentMessageItem struct {
	Type       string         `json:"type"` // "agentMessage"
	Moderation jsontext.Value `json:"moderation"`
	ID         string         `json:"id"`
	Text       string         `json:"text"`
	// Phase is "commentary", "partial_answer", "final_answer" or null.
	Phase          *string        `json:"phase"`
	MemoryCitation jsontext.Value `json:"memoryCitation"`
	Delivery       jsontext.Value `json:"delivery"`
	Questions      jsontext.Value `json:"questions"`
	ItemTimes
}

// ReasoningItem is the model's reasoning.
type ReasoningItem struct {
	Type    string   `json:"type"` // "reasoning"
	ID      string   `json:"id"`
	Summary []string `json:"summary"`
	Content []string `json:"content"`
	ItemTimes
}

// CommandExecutionItem is a command the model ran.
type CommandExecutionItem struct {
	Type       string  `json:"type"` // "commandExecution"
	ID         string  `json:"id"`
	PluginID   *string `json:"pluginId"`
	ScriptPath *string `json:"scriptPath"`
	Command    string  `json:"command"`
	Cwd        string  `json:"cwd"`
	ProcessID  *string `json:"processId"`
	// Source is "agent", "userShell", "unifiedExecStartup" or
	// "unifiedExecInteraction".
	Source string `json:"source"`
	// Status is "inProgress", "completed", "failed" or "declined".
	Status           string          `json:"status"`
	CommandActions   []CommandAction `json:"commandActions"`
	AggregatedOutput *string         `json:"aggregatedOutput"`
	ExitCode         *int            `json:"exitCode"`
	DurationMs       *int64          `json:"durationMs"`
	ItemTimes
}

// FileChangeItem is a patch the model applied or proposed.
type FileChangeItem struct {
	Type    string             `json:"type"` // "fileChange"
	ID      string             `json:"id"`
	Changes []FileUpdateChange `json:"changes"`
	Status  string             `json:"status"`
	ItemTimes
}

// FileUpdateChange is the change to one file.
type FileUpdateChange struct {
	Path string          `json:"path"`
	Kind PatchChangeKind `json:"kind"`
	Diff string          `json:"diff"`
}

// PatchChangeKind is "add", "delete" or "update" (with an optional
// MovePath).
type PatchChangeKind struct {
	Type     string
	MovePath *string
}

func (k PatchChangeKind) MarshalJSON() ([]byte, error) {
	if k.Type == "update" {
		return json.Marshal(struct {
			Type     string  `json:"type"`
			MovePath *string `json:"move_path"`
		}{k.Type, k.MovePath})
	}
	return json.Marshal(struct {
		Type string `json:"type"`
	}{k.Type})
}

func (k *PatchChangeKind) UnmarshalJSON(b []byte) error {
	var w struct {
		Type     string  `json:"type"`
		MovePath *string `json:"move_path"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*k = PatchChangeKind{Type: w.Type, MovePath: w.MovePath}
	return nil
}

// PlanItem is a proposed plan.
type PlanItem struct {
	Type string `json:"type"` // "plan"
	ID   string `json:"id"`
	Text string `json:"text"`
	ItemTimes
}

// CommandAction is a reading of what a command does, tagged by Type:
// "read" (Name, Path), "listFiles" (Path), "search" (Query, Path) or
// "unknown".
type CommandAction struct {
	Type    string
	Command string
	Name    string
	Path    *string
	Query   *string
}

func (a CommandAction) MarshalJSON() ([]byte, error) {
	switch a.Type {
	case "read":
		path := ""
		if a.Path != nil {
			path = *a.Path
		}
		return json.Marshal(struct {
			Type    string `json:"type"`
			Command string `json:"command"`
			Name    string `json:"name"`
			Path    string `json:"path"`
		}{a.Type, a.Command, a.Name, path})
	case "listFiles":
		return json.Marshal(struct {
			Type    string  `json:"type"`
			Command string  `json:"command"`
			Path    *string `json:"path"`
		}{a.Type, a.Command, a.Path})
	case "search":
		return json.Marshal(struct {
			Type    string  `json:"type"`
			Command string  `json:"command"`
			Query   *string `json:"query"`
			Path    *string `json:"path"`
		}{a.Type, a.Command, a.Query, a.Path})
	}
	return json.Marshal(struct {
		Type    string `json:"type"`
		Command string `json:"command"`
	}{"unknown", a.Command})
}

func (a *CommandAction) UnmarshalJSON(b []byte) error {
	var w struct {
		Type    string  `json:"type"`
		Command string  `json:"command"`
		Name    string  `json:"name"`
		Path    *string `json:"path"`
		Query   *string `json:"query"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*a = CommandAction(w)
	return nil
}
