package store

import (
	"fmt"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/agent"
)

// Codex's session_meta, event_msg and turn_context payloads, as far as
// codexd reads and writes them. Codex's names throughout; "codexd" members
// hold what Codex has no field for, exactly, so that codexd reads back what
// it wrote.

// sessionMeta is the session_meta payload.
type sessionMeta struct {
	ID               string            `json:"id"`
	SessionID        string            `json:"session_id,omitempty"`
	ForkedFromID     string            `json:"forked_from_id,omitempty"`
	Timestamp        string            `json:"timestamp"`
	Cwd              string            `json:"cwd"`
	Originator       string            `json:"originator"`
	CliVersion       string            `json:"cli_version"`
	Source           jsontext.Value    `json:"source,omitempty"`
	ModelProvider    string            `json:"model_provider,omitempty"`
	BaseInstructions *baseInstructions `json:"base_instructions,omitzero"`
	ThreadSource     jsontext.Value    `json:"thread_source,omitempty"`
	HistoryMode      string            `json:"history_mode,omitempty"`
	Codexd           *metaExt          `json:"codexd,omitzero"`
}

type baseInstructions struct {
	Text string `json:"text"`
}

// metaExt is codexd's part of a session_meta.
type metaExt struct {
	CreatedAt             time.Time  `json:"created_at,omitzero"`
	Source                string     `json:"source,omitempty"`
	ThreadSource          string     `json:"thread_source,omitempty"`
	Settings              settingsV1 `json:"settings"`
	DeveloperInstructions *string    `json:"developer_instructions,omitzero"`
}

func encodeSessionMeta(m ThreadMeta) *sessionMeta {
	src, _ := jsonv2.Marshal(orString(m.Source, "unknown"))
	d := &sessionMeta{
		ID: m.ID, SessionID: m.ID, ForkedFromID: m.ForkedFromID, Timestamp: formatTime(m.CreatedAt),
		Cwd: m.Settings.Cwd, Originator: m.Originator, CliVersion: m.CliVersion, Source: src,
		ModelProvider: m.Settings.ModelProvider, HistoryMode: "paginated",
		Codexd: &metaExt{
			CreatedAt: utc(m.CreatedAt), Source: m.Source, ThreadSource: m.ThreadSource,
			Settings: encodeSettings(m.Settings), DeveloperInstructions: m.DeveloperInstructions,
		},
	}
	if m.ThreadSource != "" {
		d.ThreadSource, _ = jsonv2.Marshal(m.ThreadSource)
	}
	if m.BaseInstructions != nil {
		d.BaseInstructions = &baseInstructions{Text: *m.BaseInstructions}
	}
	return d
}

func decodeSessionMeta(p jsontext.Value) (ThreadMeta, error) {
	var d sessionMeta
	if err := jsonv2.Unmarshal(p, &d, jsonOpts); err != nil {
		return ThreadMeta{}, err
	}
	id, err := canonicalID(d.ID)
	if err != nil {
		return ThreadMeta{}, err
	}
	m := ThreadMeta{
		ID: id, ForkedFromID: d.ForkedFromID, Originator: d.Originator, CliVersion: d.CliVersion,
		Source: sourceName(d.Source), ThreadSource: stringOf(d.ThreadSource),
		Settings: agent.Settings{Cwd: d.Cwd, ModelProvider: d.ModelProvider},
	}
	if d.ForkedFromID != "" {
		if f, err := canonicalID(d.ForkedFromID); err == nil {
			m.ForkedFromID = f
		}
	}
	if t, err := parseTime(d.Timestamp); err == nil {
		m.CreatedAt = t
	}
	if d.BaseInstructions != nil {
		s := d.BaseInstructions.Text
		m.BaseInstructions = &s
	}
	if x := d.Codexd; x != nil {
		if !x.CreatedAt.IsZero() {
			m.CreatedAt = x.CreatedAt.UTC()
		}
		m.Source, m.ThreadSource = x.Source, x.ThreadSource
		m.Settings = decodeSettings(x.Settings)
		m.DeveloperInstructions = x.DeveloperInstructions
	}
	return m, nil
}

// sourceName is a SessionSource as one string: Codex writes a name
// ("vscode", "exec", "cli"...) or an object for a sub-agent.
func sourceName(v jsontext.Value) string {
	if s := stringOf(v); s != "" {
		return s
	}
	var obj map[string]jsontext.Value
	if jsonv2.Unmarshal(v, &obj, jsonOpts) == nil {
		for k := range obj {
			return k
		}
	}
	return ""
}

func stringOf(v jsontext.Value) string {
	var s string
	if len(v) == 0 || jsonv2.Unmarshal(v, &s, jsonOpts) != nil {
		return ""
	}
	return s
}

// eventMsg is every event_msg payload codexd reads or writes, in one flat
// shape told apart by Type.
type eventMsg struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id,omitempty"`
	TurnID   string `json:"turn_id,omitempty"`
	// RootTurnID is the turn a sub-agent's turn descends from, the turn
	// itself for a user's turn: Codex's history projection
	// (thread_history_1.sqlite) takes a turn's rootTurnId from it.
	RootTurnID string `json:"root_turn_id,omitempty"`

	// task_started; task_complete and turn_aborted (seconds; Codex's
	// projection takes a turn's startedAt from task_complete's)
	StartedAt          int64  `json:"started_at,omitzero"`
	ModelContextWindow int64  `json:"model_context_window,omitzero"`
	CollaborationMode  string `json:"collaboration_mode_kind,omitempty"`
	// item_completed
	Item          jsontext.Value `json:"item,omitempty"`
	StartedAtMs   int64          `json:"started_at_ms,omitzero"`
	CompletedAtMs int64          `json:"completed_at_ms,omitzero"`
	// task_complete, turn_aborted
	LastAgentMessage *string    `json:"last_agent_message,omitzero"`
	Error            *turnError `json:"error,omitzero"`
	Reason           string     `json:"reason,omitempty"`
	CompletedAt      int64      `json:"completed_at,omitzero"`
	DurationMs       *int64     `json:"duration_ms,omitzero"`
	// token_count
	Info *tokenInfo `json:"info,omitzero"`
	// thread_name_updated
	ThreadName *string `json:"thread_name,omitzero"`

	Codexd *eventExt `json:"codexd,omitzero"`
}

type turnError struct {
	Message string         `json:"message"`
	Info    jsontext.Value `json:"codex_error_info,omitempty"`
}

type tokenInfo struct {
	Total              tokenUsage `json:"total_token_usage"`
	Last               tokenUsage `json:"last_token_usage"`
	ModelContextWindow *int64     `json:"model_context_window,omitzero"`
}

type tokenUsage struct {
	Input           int64 `json:"input_tokens"`
	CachedInput     int64 `json:"cached_input_tokens"`
	CacheWriteInput int64 `json:"cache_write_input_tokens"`
	Output          int64 `json:"output_tokens"`
	ReasoningOutput int64 `json:"reasoning_output_tokens"`
	Total           int64 `json:"total_tokens"`
}

// eventExt is codexd's part of an event: exact times and what Codex does
// not record.
type eventExt struct {
	StartedAt          time.Time    `json:"started_at,omitzero"`
	Kind               string       `json:"kind,omitempty"`
	Status             string       `json:"status,omitempty"`
	Error              *turnErrorV1 `json:"error,omitzero"`
	LastAgentMessageID string       `json:"last_agent_message_id,omitempty"`
	CompletedAt        time.Time    `json:"completed_at,omitzero"`
	DurationNs         int64        `json:"duration_ns,omitzero"`
}

// encodeEventMsg is the line type and payload of a kept event.
func encodeEventMsg(msg agent.EventMsg, turnID, thread string, at time.Time) (string, any, error) {
	switch m := msg.(type) {
	case agent.TurnStarted:
		return lineEventMsg, &eventMsg{
			Type: "task_started", TurnID: turnID, RootTurnID: turnID, StartedAt: unixOr(m.StartedAt, at),
			ModelContextWindow: m.ModelContextWindow, CollaborationMode: "default",
			Codexd: &eventExt{StartedAt: utc(m.StartedAt), Kind: m.Kind},
		}, nil
	case agent.ItemCompleted:
		it, err := encodeTurnItem(m.Item)
		if err != nil {
			return "", nil, err
		}
		d := &eventMsg{Type: "item_completed", ThreadID: thread, TurnID: turnID, Item: it, CompletedAtMs: at.UnixMilli()}
		if !m.StartedAt.IsZero() {
			d.StartedAtMs = m.StartedAt.UnixMilli()
		}
		return lineEventMsg, d, nil
	case agent.TurnCompleted:
		d := &eventMsg{
			Type: "task_complete", TurnID: turnID, RootTurnID: turnID, CompletedAt: unixOr(m.CompletedAt, at),
			Codexd: &eventExt{
				Status: string(m.Status), LastAgentMessageID: m.LastAgentMessageID,
				CompletedAt: utc(m.CompletedAt), DurationNs: int64(m.Duration),
			},
		}
		if m.Duration > 0 {
			ms := m.Duration.Milliseconds()
			d.DurationMs = &ms
		}
		if !m.CompletedAt.IsZero() {
			d.StartedAt = m.CompletedAt.Add(-m.Duration).Unix()
		}
		if m.LastAgentMessage != "" {
			s := m.LastAgentMessage
			d.LastAgentMessage = &s
		}
		if m.Status == agent.TurnStatusInterrupted {
			d.Type, d.Reason = "turn_aborted", "interrupted"
		}
		if m.Error != nil {
			e := turnErrorV1(*m.Error)
			d.Codexd.Error = &e
			d.Error = &turnError{Message: m.Error.Message}
			if m.Error.Info != "" {
				d.Error.Info, _ = jsonv2.Marshal(snakeCase(m.Error.Info))
			}
		}
		return lineEventMsg, d, nil
	case agent.TokenCount:
		w := m.Info.ModelContextWindow
		info := &tokenInfo{Total: tokenUsage(m.Info.Total), Last: tokenUsage(m.Info.Last)}
		if w != 0 {
			info.ModelContextWindow = &w
		}
		return lineEventMsg, &eventMsg{Type: "token_count", Info: info}, nil
	case agent.SettingsUpdated:
		return lineTurnContext, encodeTurnContext(m.Settings, turnID), nil
	case agent.ThreadNameUpdated:
		name := m.Name
		return lineEventMsg, &eventMsg{Type: "thread_name_updated", ThreadID: thread, ThreadName: &name}, nil
	case nil:
		return "", nil, fmt.Errorf("%w: nil event", ErrInvalidRecord)
	}
	return "", nil, fmt.Errorf("%w: event %T is not kept", ErrInvalidRecord, msg)
}

// decodeEventMsg fills e from an event_msg payload; the events codexd
// does not keep are errQuiet.
func decodeEventMsg(p jsontext.Value, e *entry) error {
	var d eventMsg
	if err := jsonv2.Unmarshal(p, &d, jsonOpts); err != nil {
		return err
	}
	x, ours := d.Codexd, d.Codexd != nil
	if !ours {
		x = &eventExt{}
	}
	e.TurnID = d.TurnID
	switch d.Type {
	case "task_started", "turn_started":
		started := x.StartedAt
		if !ours && d.StartedAt > 0 {
			started = time.Unix(d.StartedAt, 0).UTC()
		}
		e.Event = agent.TurnStarted{StartedAt: started, Kind: x.Kind, ModelContextWindow: d.ModelContextWindow}
	case "item_completed":
		it, err := decodeTurnItem(d.Item)
		if err != nil {
			return err
		}
		ic := agent.ItemCompleted{Item: it}
		if d.StartedAtMs > 0 {
			ic.StartedAt = time.UnixMilli(d.StartedAtMs).UTC()
		}
		e.Event = ic
	case "task_complete", "turn_complete", "turn_aborted":
		m := agent.TurnCompleted{
			Status: agent.TurnStatus(x.Status), LastAgentMessageID: x.LastAgentMessageID,
			CompletedAt: x.CompletedAt, Duration: time.Duration(x.DurationNs),
		}
		if d.LastAgentMessage != nil {
			m.LastAgentMessage = *d.LastAgentMessage
		}
		if !ours && d.CompletedAt > 0 {
			m.CompletedAt = time.Unix(d.CompletedAt, 0).UTC()
		}
		if !ours && d.DurationMs != nil {
			m.Duration = time.Duration(*d.DurationMs) * time.Millisecond
		}
		switch {
		case x.Error != nil:
			te := agent.TurnError(*x.Error)
			m.Error = &te
		case d.Error != nil:
			m.Error = &agent.TurnError{Message: d.Error.Message, Info: camelCase(errorInfoName(d.Error.Info))}
		}
		if m.Status == "" {
			switch {
			case d.Type == "turn_aborted":
				m.Status = agent.TurnStatusInterrupted
			case m.Error != nil:
				m.Status = agent.TurnStatusFailed
			default:
				m.Status = agent.TurnStatusCompleted
			}
		}
		e.Event = m
	case "token_count":
		if d.Info == nil {
			return fmt.Errorf("%w: token_count without info", errQuiet)
		}
		u := agent.TokenUsageInfo{Total: agent.TokenUsage(d.Info.Total), Last: agent.TokenUsage(d.Info.Last)}
		if d.Info.ModelContextWindow != nil {
			u.ModelContextWindow = *d.Info.ModelContextWindow
		}
		e.Event = agent.TokenCount{Info: u}
	case "thread_name_updated":
		if d.ThreadName == nil {
			return fmt.Errorf("thread_name_updated without a name")
		}
		e.Event = agent.ThreadNameUpdated{Name: *d.ThreadName}
	case "":
		return fmt.Errorf("event without a type")
	default:
		return fmt.Errorf("%w: event %q", errQuiet, d.Type)
	}
	return nil
}

// errorInfoName is a codex_error_info's name: a string, or the one member
// of an object ({"http_connection_failed":{...}}).
func errorInfoName(v jsontext.Value) string {
	return sourceName(v)
}

// turnContext is the turn_context payload.
type turnContext struct {
	TurnID            string         `json:"turn_id,omitempty"`
	RootTurnID        string         `json:"root_turn_id,omitempty"`
	Cwd               string         `json:"cwd"`
	ApprovalPolicy    jsontext.Value `json:"approval_policy,omitempty"`
	ApprovalsReviewer string         `json:"approvals_reviewer,omitempty"`
	SandboxPolicy     *sandboxPolicy `json:"sandbox_policy,omitzero"`
	Model             string         `json:"model"`
	Effort            *string        `json:"effort,omitzero"`
	Summary           string         `json:"summary,omitempty"`
	Personality       string         `json:"personality,omitempty"`
	Codexd            *settingsV1    `json:"codexd,omitzero"`
}

type sandboxPolicy struct {
	Type                string   `json:"type"`
	WritableRoots       []string `json:"writable_roots,omitempty"`
	NetworkAccess       any      `json:"network_access,omitempty"`
	ExcludeTmpdirEnvVar *bool    `json:"exclude_tmpdir_env_var,omitzero"`
	ExcludeSlashTmp     *bool    `json:"exclude_slash_tmp,omitzero"`
}

func encodeTurnContext(s agent.Settings, turnID string) *turnContext {
	// Codex's AskForApproval: a name, or for a granular policy the object
	// {"granular": {flags}} (the name alone would not parse in Codex).
	var ap jsontext.Value
	if s.Approval == agent.ApprovalGranular && s.Granular != nil {
		ap, _ = jsonv2.Marshal(map[string]*granularV1{"granular": encodeGranular(s.Granular)})
	} else {
		ap, _ = jsonv2.Marshal(orString(string(s.Approval), string(agent.ApprovalOnRequest)))
	}
	d := &turnContext{
		TurnID: turnID, RootTurnID: turnID, Cwd: s.Cwd, ApprovalPolicy: ap, ApprovalsReviewer: s.ApprovalsReviewer,
		Model: s.Model, Summary: orString(s.ReasoningSummary, "auto"), Personality: s.Personality,
	}
	if s.ReasoningEffort != "" {
		e := s.ReasoningEffort
		d.Effort = &e
	}
	sp := &sandboxPolicy{Type: orString(string(s.Sandbox.Mode), string(agent.SandboxReadOnly))}
	switch s.Sandbox.Mode {
	case agent.SandboxWorkspaceWrite:
		ex1, ex2 := s.Sandbox.ExcludeTmpdirEnvVar, s.Sandbox.ExcludeSlashTmp
		sp.WritableRoots, sp.NetworkAccess = s.Sandbox.WritableRoots, s.Sandbox.NetworkAccess
		sp.ExcludeTmpdirEnvVar, sp.ExcludeSlashTmp = &ex1, &ex2
	case agent.SandboxExternal:
		sp.Type = "external-sandbox"
		sp.NetworkAccess = "restricted"
		if s.Sandbox.NetworkAccess {
			sp.NetworkAccess = "enabled"
		}
	case agent.SandboxReadOnly:
		if s.Sandbox.NetworkAccess {
			sp.NetworkAccess = true
		}
	}
	d.SandboxPolicy = sp
	x := encodeSettings(s)
	d.Codexd = &x
	return d
}

// decodeTurnContext reads a turn_context as a settings update. Codex's
// own lack the provider (it is the session's): an update without one
// keeps the thread's (summary.observe).
func decodeTurnContext(p jsontext.Value, e *entry) error {
	var d turnContext
	if err := jsonv2.Unmarshal(p, &d, jsonOpts); err != nil {
		return err
	}
	e.TurnID = d.TurnID
	if d.Codexd != nil {
		e.Event = agent.SettingsUpdated{Settings: decodeSettings(*d.Codexd)}
		return nil
	}
	s := agent.Settings{
		Model: d.Model, Cwd: d.Cwd, Approval: agent.ApprovalPolicy(approvalName(d.ApprovalPolicy)),
		ApprovalsReviewer: d.ApprovalsReviewer, ReasoningSummary: d.Summary, Personality: d.Personality,
	}
	if d.Effort != nil {
		s.ReasoningEffort = *d.Effort
	}
	if sp := d.SandboxPolicy; sp != nil {
		s.Sandbox.Mode = agent.SandboxMode(sp.Type)
		if sp.Type == "external-sandbox" {
			s.Sandbox.Mode = agent.SandboxExternal
		}
		s.Sandbox.WritableRoots = sp.WritableRoots
		switch v := sp.NetworkAccess.(type) {
		case bool:
			s.Sandbox.NetworkAccess = v
		case string:
			s.Sandbox.NetworkAccess = v == "enabled"
		}
		if sp.ExcludeTmpdirEnvVar != nil {
			s.Sandbox.ExcludeTmpdirEnvVar = *sp.ExcludeTmpdirEnvVar
		}
		if sp.ExcludeSlashTmp != nil {
			s.Sandbox.ExcludeSlashTmp = *sp.ExcludeSlashTmp
		}
	}
	e.Event = agent.SettingsUpdated{Settings: s}
	return nil
}

// approvalName is an AskForApproval's name ("never", "on-request"...; a
// granular policy is an object, read as on-request).
func approvalName(v jsontext.Value) string {
	if s := stringOf(v); s != "" {
		return s
	}
	if len(v) > 0 {
		return string(agent.ApprovalOnRequest)
	}
	return ""
}

func unixOr(t, or time.Time) int64 {
	if t.IsZero() {
		t = or
	}
	return t.Unix()
}

func orString(s, or string) string {
	if s == "" {
		return or
	}
	return s
}

// snakeCase turns camelCase (the app-server's names) into snake_case
// (the rollout's); camelCase goes back.
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if 'A' <= r && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

func camelCase(s string) string {
	var b strings.Builder
	up := false
	for _, r := range s {
		if r == '_' {
			up = true
			continue
		}
		if up && 'a' <= r && r <= 'z' {
			r -= 'a' - 'A'
		}
		up = false
		b.WriteRune(r)
	}
	return b.String()
}
