package appproto

import "github.com/go-json-experiment/json/jsontext"

// ThreadStartParams are the params of thread/start. Fields marked
// experimental need the experimentalApi capability.
type ThreadStartParams struct {
	Model                 *string         `json:"model,omitzero"`
	ModelProvider         *string         `json:"modelProvider,omitzero"`
	ServiceTier           *string         `json:"serviceTier,omitzero"`
	Cwd                   *string         `json:"cwd,omitzero"`
	ApprovalPolicy        *AskForApproval `json:"approvalPolicy,omitzero"`
	ApprovalsReviewer     *string         `json:"approvalsReviewer,omitzero"`
	Sandbox               *string         `json:"sandbox,omitzero"`
	Permissions           *string         `json:"permissions,omitzero"` // experimental
	Config                jsontext.Value  `json:"config,omitzero"`
	ServiceName           *string         `json:"serviceName,omitzero"`
	BaseInstructions      *string         `json:"baseInstructions,omitzero"`
	DeveloperInstructions *string         `json:"developerInstructions,omitzero"`
	Personality           *string         `json:"personality,omitzero"`
	Ephemeral             *bool           `json:"ephemeral,omitzero"`
	SessionStartSource    *string         `json:"sessionStartSource,omitzero"`
	ThreadSource          *string         `json:"threadSource,omitzero"`

	// Experimental fields, kept as they arrived: codexd does not act on
	// them beyond gating.
	AllowProviderModelFallback *bool          `json:"allowProviderModelFallback,omitzero"`
	DaybreakEnabled            *bool          `json:"daybreakEnabled,omitzero"`
	DynamicTools               jsontext.Value `json:"dynamicTools,omitzero"`
	Environments               jsontext.Value `json:"environments,omitzero"`
	ExperimentalRawEvents      *bool          `json:"experimentalRawEvents,omitzero"`
	HistoryMode                *string        `json:"historyMode,omitzero"`
	MockExperimentalField      *string        `json:"mockExperimentalField,omitzero"`
	MultiAgentMode             *string        `json:"multiAgentMode,omitzero"`
	ProjectID                  *string        `json:"projectId,omitzero"`
	RuntimeWorkspaceRoots      []string       `json:"runtimeWorkspaceRoots,omitzero"`
	SelectedCapabilityRoots    jsontext.Value `json:"selectedCapabilityRoots,omitzero"`
}

// ThreadStartResponse is the result of thread/start and thread/fork, and
// the first part of thread/resume's: the thread and the settings it runs
// with.
type ThreadStartResponse struct {
	Thread                  Thread                   `json:"thread"`
	Model                   string                   `json:"model"`
	ModelProvider           string                   `json:"modelProvider"`
	ServiceTier             *string                  `json:"serviceTier"`
	DisabledPluginIDs       []string                 `json:"disabledPluginIds"`
	Cwd                     string                   `json:"cwd"`
	RuntimeWorkspaceRoots   []string                 `json:"runtimeWorkspaceRoots"`
	InstructionSources      []string                 `json:"instructionSources"`
	ApprovalPolicy          AskForApproval           `json:"approvalPolicy"`
	ApprovalsReviewer       string                   `json:"approvalsReviewer"`
	Sandbox                 SandboxPolicy            `json:"sandbox"`
	ActivePermissionProfile *ActivePermissionProfile `json:"activePermissionProfile"`
	ReasoningEffort         *string                  `json:"reasoningEffort"`
	MultiAgentMode          string                   `json:"multiAgentMode"`
}

// ThreadResumeParams are the params of thread/resume.
type ThreadResumeParams struct {
	ThreadID              string          `json:"threadId"`
	Model                 *string         `json:"model,omitzero"`
	ModelProvider         *string         `json:"modelProvider,omitzero"`
	ServiceTier           *string         `json:"serviceTier,omitzero"`
	Cwd                   *string         `json:"cwd,omitzero"`
	ApprovalPolicy        *AskForApproval `json:"approvalPolicy,omitzero"`
	ApprovalsReviewer     *string         `json:"approvalsReviewer,omitzero"`
	Sandbox               *string         `json:"sandbox,omitzero"`
	Config                jsontext.Value  `json:"config,omitzero"`
	BaseInstructions      *string         `json:"baseInstructions,omitzero"`
	DeveloperInstructions *string         `json:"developerInstructions,omitzero"`
	Personality           *string         `json:"personality,omitzero"`
	ExcludeTurns          bool            `json:"excludeTurns,omitzero"`

	// Experimental.
	Permissions           *string        `json:"permissions,omitzero"`
	History               jsontext.Value `json:"history,omitzero"`
	InitialTurnsPage      jsontext.Value `json:"initialTurnsPage,omitzero"`
	Path                  *string        `json:"path,omitzero"`
	RuntimeWorkspaceRoots []string       `json:"runtimeWorkspaceRoots,omitzero"`
}

// ThreadResumeResponse is the result of thread/resume: thread/start's,
// with the collaboration mode and the pages of a long history.
type ThreadResumeResponse struct {
	ThreadStartResponse
	CollaborationMode    *CollaborationMode `json:"collaborationMode"`
	InitialTurnsPage     jsontext.Value     `json:"initialTurnsPage"`
	TurnsBackwardsCursor *string            `json:"turnsBackwardsCursor"`
	ItemsBackwardsCursor *string            `json:"itemsBackwardsCursor"`
}

// ThreadForkParams are the params of thread/fork.
type ThreadForkParams struct {
	ThreadID              string          `json:"threadId"`
	Model                 *string         `json:"model,omitzero"`
	ModelProvider         *string         `json:"modelProvider,omitzero"`
	ServiceTier           *string         `json:"serviceTier,omitzero"`
	Cwd                   *string         `json:"cwd,omitzero"`
	ApprovalPolicy        *AskForApproval `json:"approvalPolicy,omitzero"`
	ApprovalsReviewer     *string         `json:"approvalsReviewer,omitzero"`
	Sandbox               *string         `json:"sandbox,omitzero"`
	Config                jsontext.Value  `json:"config,omitzero"`
	BaseInstructions      *string         `json:"baseInstructions,omitzero"`
	DeveloperInstructions *string         `json:"developerInstructions,omitzero"`
	Ephemeral             bool            `json:"ephemeral,omitzero"`
	ExcludeTurns          bool            `json:"excludeTurns,omitzero"`
	LastTurnID            *string         `json:"lastTurnId,omitzero"`
	ThreadSource          *string         `json:"threadSource,omitzero"`

	// Experimental.
	AttachToSource                   *bool    `json:"attachToSource,omitzero"`
	BeforeTurnID                     *string  `json:"beforeTurnId,omitzero"`
	DeferGoalContinuation            *bool    `json:"deferGoalContinuation,omitzero"`
	ExperimentalDisablePredictionMcp *bool    `json:"experimentalDisablePredictionMcp,omitzero"`
	ExperimentalPredictionMode       *bool    `json:"experimentalPredictionMode,omitzero"`
	Path                             *string  `json:"path,omitzero"`
	Permissions                      *string  `json:"permissions,omitzero"`
	RuntimeWorkspaceRoots            []string `json:"runtimeWorkspaceRoots,omitzero"`
}

// ThreadForkResponse is the result of thread/fork.
type ThreadForkResponse = ThreadStartResponse

// ThreadReadParams are the params of thread/read.
type ThreadReadParams struct {
	ThreadID     string `json:"threadId"`
	IncludeTurns bool   `json:"includeTurns,omitzero"`
}

// ThreadReadResponse is the result of thread/read.
type ThreadReadResponse struct {
	Thread    Thread           `json:"thread"`
	ReadState *ThreadReadState `json:"readState"`
}

// ThreadListParams are the params of thread/list.
type ThreadListParams struct {
	Cursor            *string        `json:"cursor,omitzero"`
	Limit             *uint32        `json:"limit,omitzero"`
	SortKey           *string        `json:"sortKey,omitzero"`       // "created_at", "updated_at"...
	SortDirection     *string        `json:"sortDirection,omitzero"` // "asc", "desc"
	ModelProviders    []string       `json:"modelProviders,omitzero"`
	SourceKinds       []string       `json:"sourceKinds,omitzero"`
	Archived          *bool          `json:"archived,omitzero"`
	Cwd               jsontext.Value `json:"cwd,omitzero"` // a path or a list of paths
	SearchTerm        *string        `json:"searchTerm,omitzero"`
	UseStateDBOnly    bool           `json:"useStateDbOnly,omitzero"`
	Originators       []string       `json:"originators,omitzero"`
	ExcludedThreadIDs []string       `json:"excludedThreadIds,omitzero"`
	SectionID         *string        `json:"sectionId,omitzero"`
	CurrentAccount    bool           `json:"currentAccountOnly,omitzero"`

	// Experimental.
	AncestorThreadID       *string `json:"ancestorThreadId,omitzero"`
	AttachedToThreadID     *string `json:"attachedToThreadId,omitzero"`
	IncludeAttachedThreads *bool   `json:"includeAttachedThreads,omitzero"`
	ParentThreadID         *string `json:"parentThreadId,omitzero"`
	ProjectID              *string `json:"projectId,omitzero"`
}

// ThreadListResponse is the result of thread/list.
type ThreadListResponse struct {
	Data            []Thread       `json:"data"`
	ReadStates      jsontext.Value `json:"readStates"`
	NextCursor      *string        `json:"nextCursor"`
	BackwardsCursor *string        `json:"backwardsCursor"`
}

// ThreadLoadedListParams are the params of thread/loaded/list.
type ThreadLoadedListParams struct {
	Cursor *string `json:"cursor,omitzero"`
	Limit  *uint32 `json:"limit,omitzero"`
}

// ThreadLoadedListResponse is the result of thread/loaded/list.
type ThreadLoadedListResponse struct {
	Data       []string `json:"data"`
	NextCursor *string  `json:"nextCursor"`
}

// ThreadTurnsListParams are the params of thread/turns/list.
type ThreadTurnsListParams struct {
	ThreadID      string  `json:"threadId"`
	Cursor        *string `json:"cursor,omitzero"`
	Limit         *uint32 `json:"limit,omitzero"`
	SortDirection *string `json:"sortDirection,omitzero"`
	ItemsView     *string `json:"itemsView,omitzero"`
}

// ThreadTurnsListResponse is the result of thread/turns/list.
type ThreadTurnsListResponse struct {
	Data            []Turn  `json:"data"`
	NextCursor      *string `json:"nextCursor"`
	BackwardsCursor *string `json:"backwardsCursor"`
}

// ThreadIDParams are the params of the methods that take only a thread
// id: thread/unsubscribe, thread/archive and thread/unarchive.
type ThreadIDParams struct {
	ThreadID string `json:"threadId"`
}

// ThreadUnsubscribeResponse is the result of thread/unsubscribe: status is
// "unsubscribed", "notSubscribed" or "notLoaded".
type ThreadUnsubscribeResponse struct {
	Status string `json:"status"`
}

// EmptyResponse is the `{}` result of methods that return nothing.
type EmptyResponse struct{}

// ThreadUnarchiveResponse is the result of thread/unarchive.
type ThreadUnarchiveResponse struct {
	Thread Thread `json:"thread"`
}

// ThreadSetNameParams are the params of thread/name/set.
type ThreadSetNameParams struct {
	ThreadID string `json:"threadId"`
	Name     string `json:"name"`
}

// ThreadSettingsUpdateParams are the params of thread/settings/update.
type ThreadSettingsUpdateParams struct {
	ThreadID          string             `json:"threadId"`
	Model             *string            `json:"model,omitzero"`
	ServiceTier       *string            `json:"serviceTier,omitzero"`
	Effort            *string            `json:"effort,omitzero"`
	Summary           *string            `json:"summary,omitzero"`
	Cwd               *string            `json:"cwd,omitzero"`
	ApprovalPolicy    *AskForApproval    `json:"approvalPolicy,omitzero"`
	ApprovalsReviewer *string            `json:"approvalsReviewer,omitzero"`
	SandboxPolicy     *SandboxPolicy     `json:"sandboxPolicy,omitzero"`
	Permissions       *string            `json:"permissions,omitzero"`
	Personality       *string            `json:"personality,omitzero"`
	CollaborationMode *CollaborationMode `json:"collaborationMode,omitzero"`
	MultiAgentMode    *string            `json:"multiAgentMode,omitzero"`
	DisabledPluginIDs []string           `json:"disabledPluginIds,omitzero"`
	Environments      jsontext.Value     `json:"environments,omitzero"`
}

// ThreadSettings are a thread's settings, as thread/settings/updated
// reports them.
type ThreadSettings struct {
	DisabledPluginIDs       []string                 `json:"disabledPluginIds"`
	Cwd                     string                   `json:"cwd"`
	Environments            *[]ThreadEnvironment     `json:"environments"`
	ApprovalPolicy          AskForApproval           `json:"approvalPolicy"`
	ApprovalsReviewer       string                   `json:"approvalsReviewer"`
	SandboxPolicy           SandboxPolicy            `json:"sandboxPolicy"`
	ActivePermissionProfile *ActivePermissionProfile `json:"activePermissionProfile"`
	Model                   string                   `json:"model"`
	ModelProvider           string                   `json:"modelProvider"`
	ServiceTier             *string                  `json:"serviceTier"`
	Effort                  *string                  `json:"effort"`
	Summary                 *string                  `json:"summary"`
	CollaborationMode       CollaborationMode        `json:"collaborationMode"`
	MultiAgentMode          string                   `json:"multiAgentMode"`
	Personality             *string                  `json:"personality"`
}
