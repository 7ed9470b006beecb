package store

import (
	"fmt"

	"github.com/codexd/codexd/agent"
)

// The codec is a set of on-disk types, one per agent type that is persisted,
// with explicit snake_case names, and conversions both ways. They are
// separate from the agent types on purpose: renaming a field of package
// agent must not change what is on disk. codec_test.go fills every field of
// every agent type by reflection and round-trips it, so a field added to
// agent without a line here fails the tests.
//
// Tags: omitempty for strings and slices (absent means empty), omitzero for
// numbers, bools, times and pointers (a nil pointer is absent, a pointer to
// a zero value is kept).

// Item type names on disk.
const (
	itemUserMessage      = "user_message"
	itemAgentMessage     = "agent_message"
	itemReasoning        = "reasoning"
	itemCommandExecution = "command_execution"
	itemFileChange       = "file_change"
	itemPlan             = "plan"
	itemCompaction       = "context_compaction"
	itemEnteredReview    = "entered_review_mode"
	itemExitedReview     = "exited_review_mode"
)

// itemV1 is every item type in one flat shape, told apart by Type; each
// type uses only its own fields. One flat struct decodes in one pass.
type itemV1 struct {
	Type string `json:"type"`
	ID   string `json:"id"`

	// user_message
	ClientID string    `json:"client_id,omitempty"`
	Content  []inputV1 `json:"content,omitempty"`
	// agent_message, plan
	Text  string `json:"text,omitempty"`
	Phase string `json:"phase,omitempty"`
	// reasoning
	Summary    []string `json:"summary,omitempty"`
	RawContent []string `json:"raw_content,omitempty"`
	// command_execution
	Command       string            `json:"command,omitempty"`
	Argv          []string          `json:"argv,omitempty"`
	Cwd           string            `json:"cwd,omitempty"`
	ProcessID     string            `json:"process_id,omitempty"`
	Source        string            `json:"source,omitempty"`
	Actions       []commandActionV1 `json:"actions,omitempty"`
	Output        *string           `json:"output,omitzero"`
	ExitCode      *int              `json:"exit_code,omitzero"`
	DurationNs    int64             `json:"duration_ns,omitzero"`
	SandboxDenied bool              `json:"sandbox_denied,omitzero"`
	// file_change
	Changes []fileUpdateV1 `json:"changes,omitempty"`
	// command_execution, file_change
	Status string `json:"status,omitempty"`
	// entered_review_mode, exited_review_mode
	Review string `json:"review,omitempty"`
}

type inputV1 struct {
	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	TextElements []textElementV1 `json:"text_elements,omitempty"`
	URL          string          `json:"url,omitempty"`
	Path         string          `json:"path,omitempty"`
	Name         string          `json:"name,omitempty"`
	Detail       string          `json:"detail,omitempty"`
}

type textElementV1 struct {
	Start       int     `json:"start"`
	End         int     `json:"end"`
	Placeholder *string `json:"placeholder,omitzero"`
}

type commandActionV1 struct {
	Type    string `json:"type"`
	Command string `json:"command,omitempty"`
	Name    string `json:"name,omitempty"`
	Path    string `json:"path,omitempty"`
	Query   string `json:"query,omitempty"`
}

type fileUpdateV1 struct {
	Path     string `json:"path"`
	Kind     string `json:"kind"`
	MovePath string `json:"move_path,omitempty"`
	Diff     string `json:"diff,omitempty"`
}

func encodeItem(it agent.Item) (*itemV1, error) {
	switch it := it.(type) {
	case *agent.UserMessage:
		return &itemV1{Type: itemUserMessage, ID: it.ID, ClientID: it.ClientID, Content: encodeInputs(it.Content)}, nil
	case *agent.AgentMessage:
		return &itemV1{Type: itemAgentMessage, ID: it.ID, Text: it.Text, Phase: it.Phase}, nil
	case *agent.Reasoning:
		return &itemV1{Type: itemReasoning, ID: it.ID, Summary: it.Summary, RawContent: it.Content}, nil
	case *agent.CommandExecution:
		d := &itemV1{
			Type: itemCommandExecution, ID: it.ID, Command: it.Command, Argv: it.Argv, Cwd: it.Cwd,
			ProcessID: it.ProcessID, Source: it.Source, Status: string(it.Status),
			Output: it.Output, ExitCode: it.ExitCode, DurationNs: int64(it.Duration),
			SandboxDenied: it.SandboxDenied,
		}
		for _, a := range it.Actions {
			d.Actions = append(d.Actions, commandActionV1(a))
		}
		return d, nil
	case *agent.FileChange:
		return &itemV1{Type: itemFileChange, ID: it.ID, Changes: encodeFileUpdates(it.Changes), Status: string(it.Status)}, nil
	case *agent.Plan:
		return &itemV1{Type: itemPlan, ID: it.ID, Text: it.Text}, nil
	case *agent.ContextCompaction:
		return &itemV1{Type: itemCompaction, ID: it.ID}, nil
	case *agent.EnteredReviewMode:
		return &itemV1{Type: itemEnteredReview, ID: it.ID, Review: it.Review}, nil
	case *agent.ExitedReviewMode:
		return &itemV1{Type: itemExitedReview, ID: it.ID, Review: it.Review}, nil
	case nil:
		return nil, fmt.Errorf("%w: nil item", ErrInvalidRecord)
	}
	return nil, fmt.Errorf("%w: item type %T has no codec", ErrInvalidRecord, it)
}

func decodeItem(d *itemV1) (agent.Item, error) {
	if d == nil {
		return nil, fmt.Errorf("item missing")
	}
	switch d.Type {
	case itemUserMessage:
		return &agent.UserMessage{ID: d.ID, ClientID: d.ClientID, Content: decodeInputs(d.Content)}, nil
	case itemAgentMessage:
		return &agent.AgentMessage{ID: d.ID, Text: d.Text, Phase: d.Phase}, nil
	case itemReasoning:
		return &agent.Reasoning{ID: d.ID, Summary: d.Summary, Content: d.RawContent}, nil
	case itemCommandExecution:
		it := &agent.CommandExecution{
			ID: d.ID, Command: d.Command, Argv: d.Argv, Cwd: d.Cwd, ProcessID: d.ProcessID,
			Source: d.Source, Status: agent.ItemStatus(d.Status), Output: d.Output,
			ExitCode: d.ExitCode, Duration: durationNs(d.DurationNs), SandboxDenied: d.SandboxDenied,
		}
		for _, a := range d.Actions {
			it.Actions = append(it.Actions, agent.CommandAction(a))
		}
		return it, nil
	case itemFileChange:
		return &agent.FileChange{ID: d.ID, Changes: decodeFileUpdates(d.Changes), Status: agent.ItemStatus(d.Status)}, nil
	case itemPlan:
		return &agent.Plan{ID: d.ID, Text: d.Text}, nil
	case itemCompaction:
		return &agent.ContextCompaction{ID: d.ID}, nil
	case itemEnteredReview:
		return &agent.EnteredReviewMode{ID: d.ID, Review: d.Review}, nil
	case itemExitedReview:
		return &agent.ExitedReviewMode{ID: d.ID, Review: d.Review}, nil
	}
	return nil, fmt.Errorf("unknown item type %q", d.Type)
}

func encodeInputs(in []agent.Input) []inputV1 {
	var out []inputV1
	for _, x := range in {
		d := inputV1{Type: x.Type, Text: x.Text, URL: x.URL, Path: x.Path, Name: x.Name, Detail: x.Detail}
		for _, e := range x.TextElements {
			d.TextElements = append(d.TextElements, textElementV1(e))
		}
		out = append(out, d)
	}
	return out
}

func decodeInputs(in []inputV1) []agent.Input {
	var out []agent.Input
	for _, d := range in {
		x := agent.Input{Type: d.Type, Text: d.Text, URL: d.URL, Path: d.Path, Name: d.Name, Detail: d.Detail}
		for _, e := range d.TextElements {
			x.TextElements = append(x.TextElements, agent.TextElement(e))
		}
		out = append(out, x)
	}
	return out
}

func encodeFileUpdates(in []agent.FileUpdate) []fileUpdateV1 {
	var out []fileUpdateV1
	for _, u := range in {
		out = append(out, fileUpdateV1(u))
	}
	return out
}

func decodeFileUpdates(in []fileUpdateV1) []agent.FileUpdate {
	var out []agent.FileUpdate
	for _, u := range in {
		out = append(out, agent.FileUpdate(u))
	}
	return out
}
