package appserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
)

// This file maps the core's vocabulary (package agent) onto the wire's
// (package appproto). It holds no state.

func ptr[T any](v T) *T { return &v }

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func unixSec(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	return ptr(t.Unix())
}

func unixMs(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	return ptr(t.UnixMilli())
}

// sessionSource is what Codex reports as a thread's source. Threads the
// app-server creates are "vscode", as Codex records them, so that
// thread/list's default filter (interactive sources) finds them.
func sessionSource(src string) jsontext.Value {
	switch src {
	case "cli", "vscode", "exec", "appServer", "unknown":
		return appproto.SessionSourceName(src)
	case "":
		return appproto.SessionSourceName("unknown")
	}
	return appproto.SessionSourceName("unknown")
}

// wireThread is the Thread of info. Loaded threads report their
// environment and that they accept input, as Codex does.
func wireThread(info agent.ThreadInfo, status appproto.ThreadStatus, loaded *agent.Settings, turns []appproto.Turn) appproto.Thread {
	if turns == nil {
		turns = []appproto.Turn{}
	}
	t := appproto.Thread{
		ID:            info.ID,
		SessionID:     info.ID,
		ForkedFromID:  optString(info.ForkedFromID),
		Preview:       info.Preview,
		Ephemeral:     info.Ephemeral,
		HistoryMode:   "paginated",
		ModelProvider: info.ModelProvider,
		Model:         optString(info.Model),
		// A thread that is not loaded reports the effort its rollout
		// last recorded, as Codex does.
		ReasoningEffort: optString(info.ReasoningEffort),
		CreatedAt:       info.CreatedAt.Unix(),
		UpdatedAt:       info.UpdatedAt.Unix(),
		RecencyAt:       ptr(info.UpdatedAt.Unix()),
		Status:          status,
		Path:            optString(info.Path),
		Cwd:             info.Cwd,
		CliVersion:      info.CliVersion,
		Source:          sessionSource(info.Source),
		ThreadSource:    optString(info.ThreadSource),
		Originator:      optString(info.Originator),
		Name:            optString(info.Name),
		Turns:           turns,
	}
	if t.CliVersion == "" {
		t.CliVersion = Version
	}
	if loaded != nil {
		t.Model = optString(loaded.Model)
		t.ModelProvider = loaded.ModelProvider
		t.Cwd = loaded.Cwd
		t.ReasoningEffort = optString(loaded.ReasoningEffort)
		t.Environments = ptr(environments(*loaded))
		t.CanAcceptDirectInput = ptr(true)
	}
	return t
}

// wireApprovalOf maps an approval policy with its granular flags. v2 has
// no "on-failure": it is reported as "on-request", its nearest v2 policy;
// a granular one is reported as Codex 0.169 does: {"granular": {...}}.
func wireApprovalOf(p agent.ApprovalPolicy, g *agent.GranularApproval) appproto.AskForApproval {
	if p == agent.ApprovalGranular {
		if g == nil {
			g = &agent.GranularApproval{}
		}
		return appproto.AskForApproval{Granular: mustJSON(wireGranular{g.MCPElicitations, g.RequestPermissions, g.Rules, g.SandboxApproval, g.SkillApproval})}
	}
	switch p {
	case agent.ApprovalUntrusted, agent.ApprovalOnRequest, agent.ApprovalNever:
		return appproto.Approval(string(p))
	case agent.ApprovalOnFailure:
		return appproto.Approval(appproto.ApprovalOnRequest)
	}
	return appproto.Approval(appproto.ApprovalNever)
}

func wireSandbox(p agent.SandboxPolicy) appproto.SandboxPolicy {
	switch p.Mode {
	case agent.SandboxReadOnly:
		return appproto.SandboxPolicy{Type: appproto.SandboxReadOnly, NetworkAccess: p.NetworkAccess}
	case agent.SandboxWorkspaceWrite:
		return appproto.SandboxPolicy{Type: appproto.SandboxWorkspaceWrite, WritableRoots: p.WritableRoots,
			NetworkAccess: p.NetworkAccess, ExcludeTmpdirEnvVar: p.ExcludeTmpdirEnvVar, ExcludeSlashTmp: p.ExcludeSlashTmp}
	case agent.SandboxExternal:
		n := "restricted"
		if p.NetworkAccess {
			n = "enabled"
		}
		return appproto.SandboxPolicy{Type: appproto.SandboxExternal, ExternalNetwork: n}
	}
	return appproto.SandboxPolicy{Type: appproto.SandboxDangerFullAccess}
}

func agentSandbox(p appproto.SandboxPolicy) agent.SandboxPolicy {
	switch p.Type {
	case appproto.SandboxReadOnly:
		return agent.SandboxPolicy{Mode: agent.SandboxReadOnly, NetworkAccess: p.NetworkAccess}
	case appproto.SandboxWorkspaceWrite:
		return agent.SandboxPolicy{Mode: agent.SandboxWorkspaceWrite, WritableRoots: p.WritableRoots,
			NetworkAccess: p.NetworkAccess, ExcludeTmpdirEnvVar: p.ExcludeTmpdirEnvVar, ExcludeSlashTmp: p.ExcludeSlashTmp}
	case appproto.SandboxExternal:
		return agent.SandboxPolicy{Mode: agent.SandboxExternal, NetworkAccess: p.ExternalNetwork == "enabled"}
	}
	return agent.SandboxPolicy{Mode: agent.SandboxDangerFullAccess}
}

func activeProfile(s agent.Settings) *appproto.ActivePermissionProfile {
	if s.PermissionProfile == "" {
		return nil
	}
	return &appproto.ActivePermissionProfile{ID: s.PermissionProfile}
}

func collaborationMode(s agent.Settings) appproto.CollaborationMode {
	mode := s.CollaborationMode
	if mode == "" {
		mode = "default"
	}
	return appproto.CollaborationMode{Mode: mode, Settings: appproto.CollaborationModeSettings{
		Model: s.Model, ReasoningEffort: optString(s.ReasoningEffort)}}
}

func wireSettings(s agent.Settings) appproto.ThreadSettings {
	return appproto.ThreadSettings{
		DisabledPluginIDs:       []string{},
		Cwd:                     s.Cwd,
		Environments:            ptr(environments(s)),
		ApprovalPolicy:          wireApprovalOf(s.Approval, s.Granular),
		ApprovalsReviewer:       reviewer(s),
		SandboxPolicy:           startSandbox(s), // as thread/start reports it
		ActivePermissionProfile: activeProfile(s),
		Model:                   s.Model,
		ModelProvider:           s.ModelProvider,
		ServiceTier:             optString(s.ServiceTier),
		Effort:                  optString(s.ReasoningEffort),
		Summary:                 optString(s.ReasoningSummary),
		CollaborationMode:       collaborationMode(s),
		MultiAgentMode:          "explicitRequestOnly",
		Personality:             optString(s.Personality),
	}
}

func reviewer(s agent.Settings) string {
	if s.ApprovalsReviewer == "" {
		return appproto.ReviewerUser
	}
	return s.ApprovalsReviewer
}

// wireInputs and agentInputs convert user inputs.
func wireInputs(in []agent.Input) []appproto.UserInput {
	out := make([]appproto.UserInput, len(in))
	for i, x := range in {
		u := appproto.UserInput{Type: x.Type, Text: x.Text, URL: x.URL, Path: x.Path, Name: x.Name, Detail: x.Detail}
		if x.Type == "text" {
			u.TextElements = make([]appproto.TextElement, len(x.TextElements))
			for j, e := range x.TextElements {
				u.TextElements[j] = appproto.TextElement{ByteRange: appproto.ByteRange{Start: e.Start, End: e.End}, Placeholder: e.Placeholder}
			}
		}
		out[i] = u
	}
	return out
}

func agentInputs(in []appproto.UserInput) []agent.Input {
	out := make([]agent.Input, len(in))
	for i, u := range in {
		x := agent.Input{Type: u.Type, Text: u.Text, URL: u.URL, Path: u.Path, Name: u.Name, Detail: u.Detail}
		if u.FileID != "" {
			x.URL = u.FileID
		}
		for _, e := range u.TextElements {
			x.TextElements = append(x.TextElements, agent.TextElement{Start: e.ByteRange.Start, End: e.ByteRange.End, Placeholder: e.Placeholder})
		}
		out[i] = x
	}
	return out
}

// remoteImage is the error for an image input with an http(s) URL, which
// Codex 0.169 refuses before the turn (-32600): the model takes images
// inline only.
func remoteImage(in []appproto.UserInput) error {
	for _, u := range in {
		scheme, _, ok := strings.Cut(u.URL, ":")
		if u.Type == "image" && ok && (strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https")) {
			return invalidRequest("remote image URLs are not supported; use an inline data URL instead")
		}
	}
	return nil
}

// inputChars counts the characters of the text inputs, as Codex's limit
// does.
func inputChars(in []appproto.UserInput) int {
	n := 0
	for _, u := range in {
		if u.Type == "text" {
			n += utf8.RuneCountInString(u.Text)
		}
	}
	return n
}

// itemView is an item with what the listener accumulated from its deltas
// while it runs, each within maxViewBytes (deltaview.go); a completed item
// keeps none of it.
type itemView struct {
	item      agent.Item
	text      deltaBuf // agent message text, from deltas
	output    deltaBuf // command output, from deltas
	summary   partsBuf // reasoning summary parts, from deltas
	content   partsBuf // raw reasoning parts, from deltas
	started   time.Time
	completed time.Time
	done      bool
	doneSeq   int // the order items completed in, within the turn
}

// dropDeltas forgets what the deltas brought.
func (v *itemView) dropDeltas() {
	v.text, v.output, v.summary, v.content = deltaBuf{}, deltaBuf{}, partsBuf{}, partsBuf{}
}

// wireItem projects an item; v (may be nil) adds what deltas brought.
func wireItem(it agent.Item, v *itemView) appproto.ThreadItem {
	var times appproto.ItemTimes
	if v != nil {
		times = appproto.ItemTimes{StartedAtMs: unixMs(v.started), CompletedAtMs: unixMs(v.completed)}
	}
	switch x := it.(type) {
	case *agent.UserMessage:
		return appproto.ThreadItem{UserMessage: &appproto.UserMessageItem{Type: "userMessage", ID: x.ID,
			ClientID: optString(x.ClientID), Content: wireInputs(x.Content), ItemTimes: times}}
	case *agent.AgentMessage:
		text := x.Text
		if v != nil && !v.done {
			text += v.text.String()
		}
		return appproto.ThreadItem{AgentMessage: &appproto.AgentMessageItem{Type: "agentMessage", ID: x.ID,
			Text: text, Phase: optString(x.Phase), ItemTimes: times}}
	case *agent.Reasoning:
		summary, content := x.Summary, x.Content
		if v != nil && !v.done {
			if len(summary) == 0 {
				summary = v.summary.strings()
			}
			if len(content) == 0 {
				content = v.content.strings()
			}
		}
		return appproto.ThreadItem{Reasoning: &appproto.ReasoningItem{Type: "reasoning", ID: x.ID,
			Summary: nonNil(summary), Content: nonNil(content), ItemTimes: times}}
	case *agent.CommandExecution:
		ce := &appproto.CommandExecutionItem{Type: "commandExecution", ID: x.ID, Command: x.Command, Cwd: x.Cwd,
			ProcessID: optString(x.ProcessID), Source: orDefault(x.Source, "agent"), Status: orDefault(string(x.Status), "inProgress"),
			CommandActions: wireActions(x.Actions), ExitCode: x.ExitCode, ItemTimes: times}
		if x.Output != nil {
			ce.AggregatedOutput = ptr(validUTF8(*x.Output))
		} else if v != nil && !v.done && v.output.len() > 0 {
			ce.AggregatedOutput = ptr(v.output.String())
		}
		if x.Duration > 0 || x.Status == agent.ItemStatusCompleted || x.Status == agent.ItemStatusFailed {
			if x.ExitCode != nil {
				ce.DurationMs = ptr(x.Duration.Milliseconds())
			}
		}
		return appproto.ThreadItem{CommandExecution: ce}
	case *agent.FileChange:
		return appproto.ThreadItem{FileChange: &appproto.FileChangeItem{Type: "fileChange", ID: x.ID,
			Changes: wireChanges(x.Changes), Status: orDefault(string(x.Status), "inProgress"), ItemTimes: times}}
	case *agent.Plan:
		text := x.Text
		if v != nil && !v.done {
			text += v.text.String()
		}
		return appproto.ThreadItem{Plan: &appproto.PlanItem{Type: "plan", ID: x.ID, Text: text, ItemTimes: times}}
	case *agent.ContextCompaction:
		return appproto.ThreadItem{ContextCompaction: &appproto.ContextCompactionItem{Type: "contextCompaction", ID: x.ID, ItemTimes: times}}
	case *agent.EnteredReviewMode:
		return appproto.ThreadItem{EnteredReviewMode: &appproto.ReviewModeItem{Type: "enteredReviewMode", ID: x.ID, Review: x.Review, ItemTimes: times}}
	case *agent.ExitedReviewMode:
		return appproto.ThreadItem{ExitedReviewMode: &appproto.ReviewModeItem{Type: "exitedReviewMode", ID: x.ID, Review: x.Review, ItemTimes: times}}
	case *agent.MCPToolCall:
		return appproto.ThreadItem{Other: wireMCPToolCall(x, times)}
	case *agent.WebSearch:
		return appproto.ThreadItem{Other: wireWebSearch(x, times)}
	case *agent.ImageView:
		b, _ := json.Marshal(struct {
			Type string `json:"type"`
			ID   string `json:"id"`
			Path string `json:"path"`
			appproto.ItemTimes
		}{"imageView", x.ID, x.Path, times})
		return appproto.ThreadItem{Other: b}
	}
	return appproto.ThreadItem{}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func validUTF8(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

func wireActions(as []agent.CommandAction) []appproto.CommandAction {
	out := make([]appproto.CommandAction, len(as))
	for i, a := range as {
		out[i] = appproto.CommandAction{Type: orDefault(a.Type, "unknown"), Command: a.Command, Name: a.Name,
			Path: optString(a.Path), Query: optString(a.Query)}
	}
	return out
}

func wireChanges(cs []agent.FileUpdate) []appproto.FileUpdateChange {
	out := make([]appproto.FileUpdateChange, len(cs))
	for i, c := range cs {
		kind := appproto.PatchChangeKind{Type: orDefault(c.Kind, "update")}
		diff := c.Diff
		if kind.Type == "update" {
			kind.MovePath = optString(c.MovePath)
			// Codex 0.169 tells where a moved file went after its hunks.
			if c.MovePath != "" {
				diff += "\n\nMoved to: " + c.MovePath
			}
		}
		out[i] = appproto.FileUpdateChange{Path: c.Path, Kind: kind, Diff: diff}
	}
	return out
}

// wireTurnError projects a turn error; Info becomes codexErrorInfo.
func wireTurnError(e *agent.TurnError) *appproto.TurnError {
	if e == nil {
		return nil
	}
	// The message may quote what the model's server answered, which
	// need not be UTF-8; a notification that does not encode is lost.
	out := &appproto.TurnError{Message: validUTF8(e.Message), AdditionalDetails: optString(validUTF8(e.AdditionalDetails))}
	if e.Info != "" {
		out.CodexErrorInfo = appproto.ErrorInfoName(e.Info)
	}
	return out
}

// wireTurn projects a stored turn with its items in view ("full",
// "summary": user and agent messages, or "notLoaded": none).
func wireTurn(t agent.Turn, view string) appproto.Turn { return wireTurnWith(t, view, nil) }

// wireTurnWith is wireTurn with the views (times) of the items, if known.
func wireTurnWith(t agent.Turn, view string, views map[string]*itemView) appproto.Turn {
	items := []appproto.ThreadItem{}
	for _, it := range t.Items {
		if view == appproto.ItemsNotLoaded {
			break
		}
		if view == appproto.ItemsSummary {
			switch it.(type) {
			case *agent.UserMessage, *agent.AgentMessage:
			default:
				continue
			}
		}
		v := views[it.ItemID()]
		if tm, ok := t.ItemTimes[it.ItemID()]; ok && v == nil {
			// A stored turn: the times its items were recorded with.
			v = &itemView{started: tm.Started, completed: tm.Completed, done: true}
		}
		items = append(items, wireItem(it, v))
	}
	out := appproto.Turn{ID: t.ID, RootTurnID: ptr(t.ID), Items: items, ItemsView: view, Status: string(t.Status),
		Error: wireTurnError(t.Error), StartedAt: unixSec(t.StartedAt), CompletedAt: unixSec(t.CompletedAt)}
	switch {
	case t.Duration > 0:
		out.DurationMs = ptr(t.Duration.Milliseconds())
	case !t.StartedAt.IsZero() && !t.CompletedAt.IsZero():
		out.DurationMs = ptr(t.CompletedAt.Sub(t.StartedAt).Milliseconds())
	}
	return out
}

func wireUsage(u agent.TokenUsageInfo) appproto.ThreadTokenUsage {
	b := func(x agent.TokenUsage) appproto.TokenUsageBreakdown {
		return appproto.TokenUsageBreakdown{TotalTokens: x.Total, InputTokens: x.Input, CachedInputTokens: x.CachedInput,
			CacheWriteInputTokens: x.CacheWriteInput, OutputTokens: x.Output, ReasoningOutputTokens: x.ReasoningOutput}
	}
	out := appproto.ThreadTokenUsage{Total: b(u.Total), Last: b(u.Last)}
	if u.ModelContextWindow > 0 {
		out.ModelContextWindow = ptr(u.ModelContextWindow)
	}
	return out
}

// listEntry is a stored thread as thread/list shows it: as stored, with
// the live status of a loaded thread and, as in Codex, the environments it
// runs in (null for a thread that is not loaded); canAcceptDirectInput
// stays null in a listing.
func (s *Server) listEntry(info agent.ThreadInfo) appproto.Thread {
	status := appproto.ThreadStatus{Type: appproto.StatusNotLoaded}
	var envs *[]appproto.ThreadEnvironment
	if t := s.thread(info.ID); t != nil {
		t.mu.Lock()
		status = t.st.status
		st := t.st.settings
		if t.th != nil {
			st = t.th.Settings() // as thread/read has them (readLocked)
		}
		envs = ptr(environments(st))
		t.mu.Unlock()
	}
	th := wireThread(info, status, nil, nil)
	th.Environments = envs
	return th
}

// backwardsCursor is Codex's backwardsCursor of a page: the time of its
// first thread's sort key, in milliseconds, which the store reads as an
// anchor that includes that millisecond (to list back from the page in the
// other direction).
func backwardsCursor(first agent.ThreadInfo, key string) string {
	at := first.CreatedAt
	if key == "updated_at" {
		at = first.UpdatedAt
	}
	return at.UTC().Truncate(time.Millisecond).Format("2006-01-02T15:04:05.000Z07:00")
}

// wireMCPToolCall is an MCPToolCall in the schema's McpToolCallThreadItem
// shape.
func wireMCPToolCall(x *agent.MCPToolCall, times appproto.ItemTimes) []byte {
	it := appproto.McpToolCallItem{Type: "mcpToolCall", ID: x.ID, Server: x.Server, Tool: x.Tool,
		Status: orDefault(string(x.Status), "inProgress"), Arguments: x.Arguments, ItemTimes: times,
		AppContext: json.RawMessage("null"), McpAppUi: json.RawMessage("null"), ReadOnlyHint: x.ReadOnlyHint}
	if len(it.Arguments) == 0 {
		it.Arguments = []byte("null")
	}
	if it.Status == string(agent.ItemStatusDeclined) {
		it.Status = "failed"
	}
	if r := x.Result; r != nil {
		content := r.Content
		if content == nil {
			content = []json.RawMessage{}
		}
		it.Result = &appproto.McpToolCallResult{Content: content, StructuredContent: r.StructuredContent, Meta: json.RawMessage("null")}
		if len(it.Result.StructuredContent) == 0 {
			it.Result.StructuredContent = json.RawMessage("null")
		}
	}
	if x.Error != "" {
		it.Error = &appproto.McpToolCallError{Message: x.Error}
	}
	if x.Status == agent.ItemStatusCompleted || x.Status == agent.ItemStatusFailed {
		it.DurationMs = ptr(x.Duration.Milliseconds())
	}
	b, _ := json.Marshal(it)
	return b
}

// wireWebSearch is a webSearch item as Codex 0.169 sends it: the action's
// kind in camelCase, absent fields null, and no results (only a standalone
// search has them).
func wireWebSearch(x *agent.WebSearch, times appproto.ItemTimes) []byte {
	action := map[string]any{"type": "other"}
	if a := x.Action; a != nil {
		opt := func(s string) any {
			if s == "" {
				return nil
			}
			return s
		}
		switch a.Type {
		case "search":
			var qs any
			if a.Queries != nil {
				qs = a.Queries
			}
			action = map[string]any{"type": "search", "query": opt(a.Query), "queries": qs}
		case "open_page":
			action = map[string]any{"type": "openPage", "url": opt(a.URL)}
		case "find_in_page":
			action = map[string]any{"type": "findInPage", "url": opt(a.URL), "pattern": opt(a.Pattern)}
		}
	}
	b, _ := json.Marshal(struct {
		Type    string         `json:"type"`
		ID      string         `json:"id"`
		Query   string         `json:"query"`
		Action  map[string]any `json:"action"`
		Results any            `json:"results"`
		appproto.ItemTimes
	}{"webSearch", x.ID, validUTF8(x.Query), action, nil, times})
	return b
}

// wireGranular is Codex's GranularApprovalConfig as it reports it (its
// members sorted by name).
type wireGranular struct {
	MCPElicitations    bool `json:"mcp_elicitations"`
	RequestPermissions bool `json:"request_permissions"`
	Rules              bool `json:"rules"`
	SandboxApproval    bool `json:"sandbox_approval"`
	SkillApproval      bool `json:"skill_approval"`
}

// granularFlags reads the "granular" member of an approval policy as
// Codex does: sandbox_approval, rules and mcp_elicitations are required,
// skill_approval and request_permissions default to false.
func granularFlags(raw jsontext.Value) (*agent.GranularApproval, error) {
	var g struct {
		SandboxApproval    *bool `json:"sandbox_approval"`
		Rules              *bool `json:"rules"`
		SkillApproval      bool  `json:"skill_approval"`
		RequestPermissions bool  `json:"request_permissions"`
		MCPElicitations    *bool `json:"mcp_elicitations"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		v    *bool
	}{{"sandbox_approval", g.SandboxApproval}, {"rules", g.Rules}, {"mcp_elicitations", g.MCPElicitations}} {
		if f.v == nil {
			return nil, fmt.Errorf("missing field `%s`", f.name)
		}
	}
	return &agent.GranularApproval{SandboxApproval: *g.SandboxApproval, Rules: *g.Rules, SkillApproval: g.SkillApproval,
		RequestPermissions: g.RequestPermissions, MCPElicitations: *g.MCPElicitations}, nil
}
