package store

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/agent"
)

// Items are stored as Codex's TurnItem (protocol crate, items.rs), the
// "item" of an item_completed event: {"type":"UserMessage",...},
// "AgentMessage", "Reasoning", "CommandExecution", "FileChange", "Plan",
// "ContextCompaction". The review-mode markers have no TurnItem: they are
// written as types of codexd's own, which Codex skips. Item types codexd
// has no agent type for (Codex's web searches, MCP calls...) are skipped
// on reading (errQuiet).

// turnItem is every TurnItem codexd reads or writes, in one flat shape.
type turnItem struct {
	Type string `json:"type"`
	ID   string `json:"id"`

	// UserMessage (content: []userInput), AgentMessage (content: []agentContent)
	ClientID string         `json:"client_id,omitempty"`
	Content  jsontext.Value `json:"content,omitempty"`
	Phase    string         `json:"phase,omitempty"`
	// Plan
	Text string `json:"text,omitempty"`
	// WebSearch
	Query  *string          `json:"query,omitzero"`
	Action *webSearchAction `json:"action,omitzero"`
	// Reasoning
	SummaryText []string `json:"summary_text,omitzero"`
	RawContent  []string `json:"raw_content,omitzero"`
	// CommandExecution
	ProcessID        string          `json:"process_id,omitempty"`
	Command          []string        `json:"command,omitzero"`
	Cwd              string          `json:"cwd,omitempty"`
	ParsedCmd        []parsedCommand `json:"parsed_cmd,omitzero"`
	Source           string          `json:"source,omitempty"`
	AggregatedOutput *string         `json:"aggregated_output,omitzero"`
	ExitCode         *int            `json:"exit_code,omitzero"`
	Duration         *rustDuration   `json:"duration,omitzero"`
	// FileChange (changes: path → change)
	Changes map[string]fileChange `json:"changes,omitzero"`
	// McpToolCall (see codex_mcp.go)
	Server       string         `json:"server,omitempty"`
	Tool         string         `json:"tool,omitempty"`
	Arguments    jsontext.Value `json:"arguments,omitzero"`
	ReadOnlyHint *bool          `json:"readOnlyHint,omitzero"`
	Result       *mcpResult     `json:"result,omitzero"`
	Error        *mcpError      `json:"error,omitzero"`
	// CommandExecution, FileChange, McpToolCall
	Status string `json:"status,omitempty"`
	// codexd's review markers
	Review string `json:"review,omitempty"`
	// ImageView (a file: URI)
	Path string `json:"path,omitempty"`

	Codexd *itemExt `json:"codexd,omitzero"`
}

// itemExt is codexd's part of an item.
type itemExt struct {
	Command       string   `json:"command,omitempty"`
	SandboxDenied bool     `json:"sandbox_denied,omitzero"`
	Status        string   `json:"status,omitempty"`
	Order         []string `json:"order,omitempty"`
}

// Codex's TurnItem type names (and codexd's for what Codex has none).
const (
	tiUserMessage      = "UserMessage"
	tiAgentMessage     = "AgentMessage"
	tiReasoning        = "Reasoning"
	tiCommandExecution = "CommandExecution"
	tiFileChange       = "FileChange"
	tiPlan             = "Plan"
	tiWebSearch        = "WebSearch"
	tiCompaction       = "ContextCompaction"
	tiEnteredReview    = "CodexdEnteredReviewMode"
	tiExitedReview     = "CodexdExitedReviewMode"
	tiMcpToolCall      = "McpToolCall"
	tiImageView        = "ImageView"
)

type userInput struct {
	Type         string        `json:"type"`
	Text         string        `json:"text,omitempty"`
	TextElements []textElement `json:"text_elements,omitzero"`
	ImageURL     string        `json:"image_url,omitempty"`
	Path         string        `json:"path,omitempty"`
	Name         string        `json:"name,omitempty"`
	Detail       string        `json:"detail,omitempty"`
}

type textElement struct {
	ByteRange   byteRange `json:"byte_range"`
	Placeholder *string   `json:"placeholder,omitzero"`
}

type byteRange struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

type agentContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type parsedCommand struct {
	Type  string  `json:"type"`
	Cmd   string  `json:"cmd"`
	Name  string  `json:"name,omitempty"`
	Path  *string `json:"path,omitzero"`
	Query *string `json:"query,omitzero"`
}

// rustDuration is a std::time::Duration as serde writes it.
type rustDuration struct {
	Secs  int64 `json:"secs"`
	Nanos int64 `json:"nanos"`
}

// fileChange is Codex's FileChange: {"type":"add","content"},
// {"type":"delete","content"}, {"type":"update","unified_diff","move_path"}.
type fileChange struct {
	Type        string  `json:"type"`
	Content     *string `json:"content,omitzero"`
	UnifiedDiff *string `json:"unified_diff,omitzero"`
	MovePath    *string `json:"move_path,omitzero"`
}

func encodeTurnItem(it agent.Item) (jsontext.Value, error) {
	var d *turnItem
	switch it := it.(type) {
	case *agent.UserMessage:
		content := make([]userInput, 0, len(it.Content))
		for _, x := range it.Content {
			u := userInput{Type: x.Type, Text: x.Text, ImageURL: x.URL, Path: x.Path, Name: x.Name, Detail: x.Detail}
			if x.Type == "localImage" {
				u.Type = "local_image"
			}
			if x.Type == "text" {
				u.TextElements = []textElement{}
			}
			for _, e := range x.TextElements {
				u.TextElements = append(u.TextElements, textElement{ByteRange: byteRange{e.Start, e.End}, Placeholder: e.Placeholder})
			}
			content = append(content, u)
		}
		c, err := jsonv2.Marshal(content, jsonOpts)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidRecord, err)
		}
		d = &turnItem{Type: tiUserMessage, ID: it.ID, ClientID: it.ClientID, Content: c}
	case *agent.AgentMessage:
		c, err := jsonv2.Marshal([]agentContent{{Type: "Text", Text: it.Text}}, jsonOpts)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidRecord, err)
		}
		d = &turnItem{Type: tiAgentMessage, ID: it.ID, Content: c, Phase: it.Phase}
	case *agent.Reasoning:
		d = &turnItem{Type: tiReasoning, ID: it.ID, SummaryText: nonNil(it.Summary), RawContent: nonNil(it.Content)}
	case *agent.CommandExecution:
		argv := it.Argv
		if len(argv) == 0 {
			argv = []string{it.Command}
		}
		d = &turnItem{
			Type: tiCommandExecution, ID: it.ID, ProcessID: it.ProcessID, Command: argv,
			Cwd: fileURI(it.Cwd), ParsedCmd: []parsedCommand{}, Source: snakeCase(orString(it.Source, "agent")),
			Status:           orString(string(it.Status), string(agent.ItemStatusInProgress)),
			AggregatedOutput: it.Output, ExitCode: it.ExitCode,
			Codexd: &itemExt{Command: it.Command, SandboxDenied: it.SandboxDenied},
		}
		if it.Duration > 0 {
			d.Duration = &rustDuration{Secs: int64(it.Duration / time.Second), Nanos: int64(it.Duration % time.Second)}
		}
		for _, a := range it.Actions {
			d.ParsedCmd = append(d.ParsedCmd, encodeAction(a))
		}
	case *agent.FileChange:
		d = &turnItem{Type: tiFileChange, ID: it.ID, Changes: map[string]fileChange{}, Codexd: &itemExt{Status: string(it.Status)}}
		switch it.Status {
		case agent.ItemStatusCompleted, agent.ItemStatusFailed, agent.ItemStatusDeclined:
			d.Status = string(it.Status)
		}
		for _, u := range it.Changes {
			diff := u.Diff
			c := fileChange{Type: u.Kind}
			if u.Kind == "update" {
				c.UnifiedDiff = &diff
			} else {
				c.Content = &diff
			}
			if u.MovePath != "" {
				mp := u.MovePath
				c.MovePath = &mp
			}
			if _, dup := d.Changes[u.Path]; !dup {
				d.Codexd.Order = append(d.Codexd.Order, u.Path)
			}
			d.Changes[u.Path] = c // one change a path, as Codex keeps them
		}
	case *agent.MCPToolCall:
		d = encodeMCPToolCall(it)
	case *agent.Plan:
		d = &turnItem{Type: tiPlan, ID: it.ID, Text: it.Text}
	case *agent.WebSearch:
		q := it.Query
		d = &turnItem{Type: tiWebSearch, ID: it.ID, Query: &q}
		if a := it.Action; a != nil {
			d.Action = &webSearchAction{Type: a.Type, Query: optStr(a.Query), Queries: a.Queries, URL: optStr(a.URL), Pattern: optStr(a.Pattern)}
		}
	case *agent.ContextCompaction:
		d = &turnItem{Type: tiCompaction, ID: it.ID}
	case *agent.EnteredReviewMode:
		d = &turnItem{Type: tiEnteredReview, ID: it.ID, Review: it.Review}
	case *agent.ExitedReviewMode:
		d = &turnItem{Type: tiExitedReview, ID: it.ID, Review: it.Review}
	case *agent.ImageView:
		d = &turnItem{Type: tiImageView, ID: it.ID, Path: fileURI(it.Path)}
	case nil:
		return nil, fmt.Errorf("%w: nil item", ErrInvalidRecord)
	default:
		return nil, fmt.Errorf("%w: item type %T has no codec", ErrInvalidRecord, it)
	}
	b, err := jsonv2.Marshal(d, jsonOpts)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidRecord, err)
	}
	return b, nil
}

func decodeTurnItem(v jsontext.Value) (agent.Item, error) {
	if len(v) == 0 {
		return nil, fmt.Errorf("item missing")
	}
	var d turnItem
	if err := jsonv2.Unmarshal(v, &d, jsonOpts); err != nil {
		return nil, err
	}
	x := d.Codexd
	if x == nil {
		x = &itemExt{}
	}
	switch d.Type {
	case tiUserMessage:
		var in []userInput
		if len(d.Content) > 0 {
			if err := jsonv2.Unmarshal(d.Content, &in, jsonOpts); err != nil {
				return nil, err
			}
		}
		um := &agent.UserMessage{ID: d.ID, ClientID: d.ClientID}
		for _, u := range in {
			a := agent.Input{Type: u.Type, Text: u.Text, URL: u.ImageURL, Path: u.Path, Name: u.Name, Detail: u.Detail}
			if u.Type == "local_image" {
				a.Type = "localImage"
			}
			for _, e := range u.TextElements {
				a.TextElements = append(a.TextElements, agent.TextElement{Start: e.ByteRange.Start, End: e.ByteRange.End, Placeholder: e.Placeholder})
			}
			um.Content = append(um.Content, a)
		}
		return um, nil
	case tiAgentMessage:
		var parts []agentContent
		if len(d.Content) > 0 {
			if err := jsonv2.Unmarshal(d.Content, &parts, jsonOpts); err != nil {
				return nil, err
			}
		}
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return &agent.AgentMessage{ID: d.ID, Text: b.String(), Phase: d.Phase}, nil
	case tiReasoning:
		return &agent.Reasoning{ID: d.ID, Summary: nilIfEmpty(d.SummaryText), Content: nilIfEmpty(d.RawContent)}, nil
	case tiMcpToolCall:
		return decodeMCPToolCall(&d), nil
	case tiCommandExecution:
		it := &agent.CommandExecution{
			ID: d.ID, Command: x.Command, Argv: d.Command, Cwd: filePath(d.Cwd), ProcessID: d.ProcessID,
			Source: camelCase(d.Source), Status: agent.ItemStatus(d.Status), Output: d.AggregatedOutput,
			ExitCode: d.ExitCode, SandboxDenied: x.SandboxDenied,
		}
		if it.Command == "" {
			it.Command = shellJoin(d.Command)
		}
		if x.Command != "" && len(d.Command) == 1 && d.Command[0] == x.Command {
			it.Argv = nil // written as [command]: there was no argv
		}
		if d.Duration != nil {
			it.Duration = time.Duration(d.Duration.Secs)*time.Second + time.Duration(d.Duration.Nanos)
		}
		for _, p := range d.ParsedCmd {
			it.Actions = append(it.Actions, decodeAction(p))
		}
		return it, nil
	case tiFileChange:
		it := &agent.FileChange{ID: d.ID, Status: agent.ItemStatus(orString(x.Status, d.Status))}
		// codexd's order, if it names each change once; else by path.
		var paths []string
		seen := map[string]bool{}
		for _, p := range x.Order {
			if _, ok := d.Changes[p]; ok && !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
		if len(paths) != len(d.Changes) {
			paths = paths[:0]
			for p := range d.Changes {
				paths = append(paths, p)
			}
			sort.Strings(paths)
		}
		for _, p := range paths {
			c, ok := d.Changes[p]
			if !ok {
				continue
			}
			u := agent.FileUpdate{Path: p, Kind: c.Type}
			switch {
			case c.UnifiedDiff != nil:
				u.Diff = *c.UnifiedDiff
			case c.Content != nil:
				u.Diff = *c.Content
			}
			if c.MovePath != nil {
				u.MovePath = *c.MovePath
			}
			it.Changes = append(it.Changes, u)
		}
		return it, nil
	case tiPlan:
		return &agent.Plan{ID: d.ID, Text: d.Text}, nil
	case tiWebSearch:
		it := &agent.WebSearch{ID: d.ID}
		if d.Query != nil {
			it.Query = *d.Query
		}
		if a := d.Action; a != nil {
			it.Action = &agent.WebSearchAction{Type: a.Type, Query: deref(a.Query), Queries: a.Queries, URL: deref(a.URL), Pattern: deref(a.Pattern)}
		}
		return it, nil
	case tiCompaction:
		return &agent.ContextCompaction{ID: d.ID}, nil
	case tiEnteredReview:
		return &agent.EnteredReviewMode{ID: d.ID, Review: d.Review}, nil
	case tiExitedReview:
		return &agent.ExitedReviewMode{ID: d.ID, Review: d.Review}, nil
	case tiImageView:
		return &agent.ImageView{ID: d.ID, Path: filePath(d.Path)}, nil
	case "":
		return nil, fmt.Errorf("item without a type")
	}
	return nil, fmt.Errorf("%w: item type %q", errQuiet, d.Type)
}

func encodeAction(a agent.CommandAction) parsedCommand {
	p := parsedCommand{Type: snakeCase(orString(a.Type, "unknown")), Cmd: a.Command, Name: a.Name}
	if a.Path != "" || a.Type == "read" {
		s := a.Path
		p.Path = &s
	}
	if a.Query != "" {
		s := a.Query
		p.Query = &s
	}
	return p
}

func decodeAction(p parsedCommand) agent.CommandAction {
	a := agent.CommandAction{Type: camelCase(p.Type), Command: p.Cmd, Name: p.Name}
	if p.Path != nil {
		a.Path = *p.Path
	}
	if p.Query != nil {
		a.Query = *p.Query
	}
	return a
}

// fileURI is Codex's PathUri of an absolute path; other paths are kept.
func fileURI(p string) string {
	if !strings.HasPrefix(p, "/") {
		return p
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// filePath reads a PathUri back (a plain path is taken as it is).
func filePath(s string) string {
	if !strings.HasPrefix(s, "file:") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil || u.Path == "" {
		return s
	}
	return u.Path
}

// shellJoin quotes argv as a POSIX shell reads it back, as Codex shows a
// command: words without special characters bare, others in single quotes.
func shellJoin(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'"'"'`) + "'"
	}
	return strings.Join(out, " ")
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// webSearchAction is a WebSearch item's action as Codex's rollout holds
// it: {"type":"search","query":…}, "open_page", "find_in_page", "other";
// fields it lacks are left out.
type webSearchAction struct {
	Type    string   `json:"type"`
	Query   *string  `json:"query,omitzero"`
	Queries []string `json:"queries,omitzero"`
	URL     *string  `json:"url,omitzero"`
	Pattern *string  `json:"pattern,omitzero"`
}

func optStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
