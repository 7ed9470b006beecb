package store

import (
	"fmt"
	"time"

	"github.com/codexd/codexd/agent"
)

// Event type names on disk.
const (
	evTurnStarted       = "turn_started"
	evItemCompleted     = "item_completed"
	evTurnCompleted     = "turn_completed"
	evTokenCount        = "token_count"
	evSettingsUpdated   = "settings_updated"
	evThreadNameUpdated = "thread_name_updated"
)

// eventV1 is every kept event in one flat shape, told apart by Type.
type eventV1 struct {
	Type string `json:"type"`

	// turn_started
	StartedAt          time.Time `json:"started_at,omitzero"`
	Kind               string    `json:"kind,omitempty"`
	ModelContextWindow int64     `json:"model_context_window,omitzero"`
	// item_completed (started_at: when the item started, if known)
	Item *itemV1 `json:"item,omitzero"`
	// turn_completed
	Status             string       `json:"status,omitempty"`
	Error              *turnErrorV1 `json:"error,omitzero"`
	LastAgentMessage   string       `json:"last_agent_message,omitempty"`
	LastAgentMessageID string       `json:"last_agent_message_id,omitempty"`
	CompletedAt        time.Time    `json:"completed_at,omitzero"`
	DurationNs         int64        `json:"duration_ns,omitzero"`
	// token_count
	Usage *usageInfoV1 `json:"usage,omitzero"`
	// settings_updated
	Settings *settingsV1 `json:"settings,omitzero"`
	// thread_name_updated
	Name string `json:"name,omitempty"`
}

type turnErrorV1 struct {
	Message           string `json:"message,omitempty"`
	Info              string `json:"info,omitempty"`
	HTTPStatus        int    `json:"http_status,omitzero"`
	AdditionalDetails string `json:"additional_details,omitempty"`
}

type usageInfoV1 struct {
	Total              usageV1 `json:"total"`
	Last               usageV1 `json:"last"`
	ModelContextWindow int64   `json:"model_context_window,omitzero"`
}

type usageV1 struct {
	Input           int64 `json:"input,omitzero"`
	CachedInput     int64 `json:"cached_input,omitzero"`
	CacheWriteInput int64 `json:"cache_write_input,omitzero"`
	Output          int64 `json:"output,omitzero"`
	ReasoningOutput int64 `json:"reasoning_output,omitzero"`
	Total           int64 `json:"total,omitzero"`
}

type settingsV1 struct {
	Model             string    `json:"model,omitempty"`
	ModelProvider     string    `json:"model_provider,omitempty"`
	Cwd               string    `json:"cwd,omitempty"`
	Approval          string    `json:"approval_policy,omitempty"`
	ApprovalsReviewer string    `json:"approvals_reviewer,omitempty"`
	Sandbox           sandboxV1 `json:"sandbox,omitzero"`
	PermissionProfile string    `json:"permission_profile,omitempty"`
	ReasoningEffort   string    `json:"reasoning_effort,omitempty"`
	ReasoningSummary  string    `json:"reasoning_summary,omitempty"`
	Personality       string    `json:"personality,omitempty"`
	ServiceTier       string    `json:"service_tier,omitempty"`
	CollaborationMode string    `json:"collaboration_mode,omitempty"`
	// Environments: absent is the default environment, [] none.
	Environments *[]environmentV1 `json:"environments,omitzero"`
	// Granular: the flags of a granular approval policy (Approval
	// "granular"), in Codex's GranularApprovalConfig names.
	Granular *granularV1 `json:"granular,omitzero"`
	// RuntimeWorkspaceRoots: absent is the derived roots (the cwd and the
	// writable roots), [] none.
	RuntimeWorkspaceRoots *[]string `json:"runtime_workspace_roots,omitzero"`
}

type granularV1 struct {
	SandboxApproval    bool `json:"sandbox_approval"`
	Rules              bool `json:"rules"`
	SkillApproval      bool `json:"skill_approval"`
	RequestPermissions bool `json:"request_permissions"`
	MCPElicitations    bool `json:"mcp_elicitations"`
}

func encodeGranular(g *agent.GranularApproval) *granularV1 {
	if g == nil {
		return nil
	}
	v := granularV1(*g)
	return &v
}

func decodeGranular(g *granularV1) *agent.GranularApproval {
	if g == nil {
		return nil
	}
	v := agent.GranularApproval(*g)
	return &v
}

type environmentV1 struct {
	ID                    string   `json:"id"`
	Cwd                   string   `json:"cwd"`
	RuntimeWorkspaceRoots []string `json:"runtime_workspace_roots,omitzero"` // [] (none) is kept, nil (the cwd) is not
}

type sandboxV1 struct {
	Mode                string   `json:"mode,omitempty"`
	WritableRoots       []string `json:"writable_roots,omitempty"`
	NetworkAccess       bool     `json:"network_access,omitzero"`
	ExcludeTmpdirEnvVar bool     `json:"exclude_tmpdir_env_var,omitzero"`
	ExcludeSlashTmp     bool     `json:"exclude_slash_tmp,omitzero"`
}

// metaFormat marks a session_meta line as ours: a rollout whose first line
// lacks it (Codex's own) is never indexed or touched.
const metaFormat = "codexd"

// metaV1 is the session_meta payload. "id", "timestamp", "forked_from_id",
// "source", "originator" and "cli_version" are Codex's names for the same
// things.
type metaV1 struct {
	Format                string     `json:"format"`
	ID                    string     `json:"id"`
	ForkedFromID          string     `json:"forked_from_id,omitempty"`
	Timestamp             time.Time  `json:"timestamp"`
	Source                string     `json:"source,omitempty"`
	ThreadSource          string     `json:"thread_source,omitempty"`
	Originator            string     `json:"originator,omitempty"`
	CliVersion            string     `json:"cli_version,omitempty"`
	Settings              settingsV1 `json:"settings"`
	BaseInstructions      *string    `json:"base_instructions,omitzero"`
	DeveloperInstructions *string    `json:"developer_instructions,omitzero"`
}

func encodeEvent(msg agent.EventMsg) (*eventV1, error) {
	switch m := msg.(type) {
	case agent.TurnStarted:
		return &eventV1{Type: evTurnStarted, StartedAt: utc(m.StartedAt), Kind: m.Kind, ModelContextWindow: m.ModelContextWindow}, nil
	case agent.ItemCompleted:
		it, err := encodeItem(m.Item)
		if err != nil {
			return nil, err
		}
		return &eventV1{Type: evItemCompleted, Item: it, StartedAt: utc(m.StartedAt)}, nil
	case agent.TurnCompleted:
		d := &eventV1{
			Type: evTurnCompleted, Status: string(m.Status), LastAgentMessage: m.LastAgentMessage,
			LastAgentMessageID: m.LastAgentMessageID, CompletedAt: utc(m.CompletedAt), DurationNs: int64(m.Duration),
		}
		if m.Error != nil {
			e := turnErrorV1(*m.Error)
			d.Error = &e
		}
		return d, nil
	case agent.TokenCount:
		u := encodeUsage(m.Info)
		return &eventV1{Type: evTokenCount, Usage: &u}, nil
	case agent.SettingsUpdated:
		s := encodeSettings(m.Settings)
		return &eventV1{Type: evSettingsUpdated, Settings: &s}, nil
	case agent.ThreadNameUpdated:
		return &eventV1{Type: evThreadNameUpdated, Name: m.Name}, nil
	case nil:
		return nil, fmt.Errorf("%w: nil event", ErrInvalidRecord)
	}
	return nil, fmt.Errorf("%w: event %T is not kept", ErrInvalidRecord, msg)
}

// errUnknownEvent marks an event type this version does not know: a later
// codexd's addition, skipped quietly.
type errUnknownEvent string

func (e errUnknownEvent) Error() string { return fmt.Sprintf("unknown event type %q", string(e)) }

func decodeEvent(d *eventV1) (agent.EventMsg, error) {
	switch d.Type {
	case "":
		return nil, fmt.Errorf("event without a type")
	case evTurnStarted:
		return agent.TurnStarted{StartedAt: d.StartedAt, Kind: d.Kind, ModelContextWindow: d.ModelContextWindow}, nil
	case evItemCompleted:
		it, err := decodeItem(d.Item)
		if err != nil {
			return nil, err
		}
		return agent.ItemCompleted{Item: it, StartedAt: d.StartedAt}, nil
	case evTurnCompleted:
		m := agent.TurnCompleted{
			Status: agent.TurnStatus(d.Status), LastAgentMessage: d.LastAgentMessage,
			LastAgentMessageID: d.LastAgentMessageID, CompletedAt: d.CompletedAt, Duration: durationNs(d.DurationNs),
		}
		if d.Error != nil {
			e := agent.TurnError(*d.Error)
			m.Error = &e
		}
		return m, nil
	case evTokenCount:
		if d.Usage == nil {
			return nil, fmt.Errorf("token_count without usage")
		}
		return agent.TokenCount{Info: decodeUsage(*d.Usage)}, nil
	case evSettingsUpdated:
		if d.Settings == nil {
			return nil, fmt.Errorf("settings_updated without settings")
		}
		return agent.SettingsUpdated{Settings: decodeSettings(*d.Settings)}, nil
	case evThreadNameUpdated:
		return agent.ThreadNameUpdated{Name: d.Name}, nil
	}
	return nil, errUnknownEvent(d.Type)
}

func encodeUsage(u agent.TokenUsageInfo) usageInfoV1 {
	return usageInfoV1{Total: usageV1(u.Total), Last: usageV1(u.Last), ModelContextWindow: u.ModelContextWindow}
}

func decodeUsage(u usageInfoV1) agent.TokenUsageInfo {
	return agent.TokenUsageInfo{Total: agent.TokenUsage(u.Total), Last: agent.TokenUsage(u.Last), ModelContextWindow: u.ModelContextWindow}
}

func encodeSettings(s agent.Settings) settingsV1 {
	return settingsV1{
		Model: s.Model, ModelProvider: s.ModelProvider, Cwd: s.Cwd, Approval: string(s.Approval),
		ApprovalsReviewer: s.ApprovalsReviewer,
		Sandbox: sandboxV1{
			Mode: string(s.Sandbox.Mode), WritableRoots: s.Sandbox.WritableRoots,
			NetworkAccess: s.Sandbox.NetworkAccess, ExcludeTmpdirEnvVar: s.Sandbox.ExcludeTmpdirEnvVar,
			ExcludeSlashTmp: s.Sandbox.ExcludeSlashTmp,
		},
		PermissionProfile: s.PermissionProfile, ReasoningEffort: s.ReasoningEffort,
		ReasoningSummary: s.ReasoningSummary, Personality: s.Personality, ServiceTier: s.ServiceTier,
		CollaborationMode: s.CollaborationMode, Environments: encodeEnvironments(s.Environments),
		Granular: encodeGranular(s.Granular), RuntimeWorkspaceRoots: optRoots(s.RuntimeWorkspaceRoots),
	}
}

// optRoots is roots for a member that tells nil (absent) from empty.
func optRoots(roots []string) *[]string {
	if roots == nil {
		return nil
	}
	return &roots
}

func encodeEnvironments(envs []agent.Environment) *[]environmentV1 {
	if envs == nil {
		return nil
	}
	out := make([]environmentV1, 0, len(envs))
	for _, e := range envs {
		out = append(out, environmentV1{ID: e.ID, Cwd: e.Cwd, RuntimeWorkspaceRoots: e.RuntimeWorkspaceRoots})
	}
	return &out
}

func decodeEnvironments(envs *[]environmentV1) []agent.Environment {
	if envs == nil {
		return nil
	}
	out := make([]agent.Environment, 0, len(*envs))
	for _, e := range *envs {
		out = append(out, agent.Environment{ID: e.ID, Cwd: e.Cwd, RuntimeWorkspaceRoots: e.RuntimeWorkspaceRoots})
	}
	return out
}

func decodeSettings(s settingsV1) agent.Settings {
	return agent.Settings{
		Model: s.Model, ModelProvider: s.ModelProvider, Cwd: s.Cwd, Approval: agent.ApprovalPolicy(s.Approval),
		ApprovalsReviewer: s.ApprovalsReviewer,
		Sandbox: agent.SandboxPolicy{
			Mode: agent.SandboxMode(s.Sandbox.Mode), WritableRoots: s.Sandbox.WritableRoots,
			NetworkAccess: s.Sandbox.NetworkAccess, ExcludeTmpdirEnvVar: s.Sandbox.ExcludeTmpdirEnvVar,
			ExcludeSlashTmp: s.Sandbox.ExcludeSlashTmp,
		},
		PermissionProfile: s.PermissionProfile, ReasoningEffort: s.ReasoningEffort,
		ReasoningSummary: s.ReasoningSummary, Personality: s.Personality, ServiceTier: s.ServiceTier,
		CollaborationMode: s.CollaborationMode, Environments: decodeEnvironments(s.Environments),
		Granular: decodeGranular(s.Granular), RuntimeWorkspaceRoots: derefRoots(s.RuntimeWorkspaceRoots),
	}
}

func derefRoots(roots *[]string) []string {
	if roots == nil {
		return nil
	}
	return append([]string{}, (*roots)...)
}

func encodeMetaV1(m ThreadMeta) *metaV1 {
	return &metaV1{
		Format: metaFormat, ID: m.ID, ForkedFromID: m.ForkedFromID, Timestamp: utc(m.CreatedAt),
		Source: m.Source, ThreadSource: m.ThreadSource, Originator: m.Originator, CliVersion: m.CliVersion,
		Settings: encodeSettings(m.Settings), BaseInstructions: m.BaseInstructions,
		DeveloperInstructions: m.DeveloperInstructions,
	}
}

func decodeMetaV1(d *metaV1) (ThreadMeta, error) {
	if d.Format != metaFormat {
		return ThreadMeta{}, errForeign
	}
	id, err := canonicalID(d.ID)
	if err != nil {
		return ThreadMeta{}, err
	}
	return ThreadMeta{
		ID: id, ForkedFromID: d.ForkedFromID, CreatedAt: d.Timestamp, Source: d.Source,
		ThreadSource: d.ThreadSource, Originator: d.Originator, CliVersion: d.CliVersion,
		Settings: decodeSettings(d.Settings), BaseInstructions: d.BaseInstructions,
		DeveloperInstructions: d.DeveloperInstructions,
	}, nil
}

// utc drops the location and monotonic reading, so what is written and what
// is read back are the same instant in the same form.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

func durationNs(n int64) time.Duration { return time.Duration(n) }
