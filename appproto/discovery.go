package appproto

import "github.com/go-json-experiment/json/jsontext"

// ModelListParams are the params of model/list.
type ModelListParams struct {
	Cursor        *string `json:"cursor,omitzero"`
	Limit         *uint32 `json:"limit,omitzero"`
	IncludeHidden *bool   `json:"includeHidden,omitzero"`
	ModelProvider *string `json:"modelProvider,omitzero"`
}

// ModelListResponse is the result of model/list.
type ModelListResponse struct {
	Data       []Model `json:"data"`
	NextCursor *string `json:"nextCursor"`
}

// Model describes a model a client may pick.
type Model struct {
	ID                        string                  `json:"id"`
	Model                     string                  `json:"model"`
	Upgrade                   *string                 `json:"upgrade"`
	UpgradeInfo               jsontext.Value          `json:"upgradeInfo"`
	AvailabilityNux           jsontext.Value          `json:"availabilityNux"`
	DisplayName               string                  `json:"displayName"`
	Description               string                  `json:"description"`
	ModelSpecialty            *string                 `json:"modelSpecialty"`
	Hidden                    bool                    `json:"hidden"`
	SupportedReasoningEfforts []ReasoningEffortOption `json:"supportedReasoningEfforts"`
	DefaultReasoningEffort    string                  `json:"defaultReasoningEffort"`
	InputModalities           []string                `json:"inputModalities"`
	SupportsPersonality       bool                    `json:"supportsPersonality"`
	MultiAgentVersion         *string                 `json:"multiAgentVersion"`
	AdditionalSpeedTiers      []string                `json:"additionalSpeedTiers"`
	ServiceTiers              []jsontext.Value        `json:"serviceTiers"`
	DefaultServiceTier        *string                 `json:"defaultServiceTier"`
	AvailableAccessPrograms   jsontext.Value          `json:"availableAccessPrograms"`
	IsDefault                 bool                    `json:"isDefault"`
}

// ReasoningEffortOption is an effort a model supports.
type ReasoningEffortOption struct {
	ReasoningEffort string `json:"reasoningEffort"`
	Description     string `json:"description"`
}

// GetAccountParams are the params of account/read.
type GetAccountParams struct {
	RefreshToken bool `json:"refreshToken,omitzero"`
}

// GetAccountResponse is the result of account/read.
type GetAccountResponse struct {
	Account            jsontext.Value `json:"account"`
	UserID             *string        `json:"userId"`
	RequiresOpenaiAuth bool           `json:"requiresOpenaiAuth"`
	WorkspaceRouting   jsontext.Value `json:"workspaceRouting"`
}

// ConfigReadParams are the params of config/read.
type ConfigReadParams struct {
	Cwd           *string `json:"cwd,omitzero"`
	IncludeLayers bool    `json:"includeLayers,omitzero"`
}

// ConfigReadResponse is the result of config/read.
type ConfigReadResponse struct {
	Config  Config                    `json:"config"`
	Origins map[string]jsontext.Value `json:"origins"`
	Layers  jsontext.Value            `json:"layers"`
}

// Config is the effective configuration, with Codex's config.toml names.
// codexd reports the members it knows; the schema lets the rest be absent.
type Config struct {
	Model                 *string         `json:"model"`
	ModelProvider         *string         `json:"model_provider"`
	ApprovalPolicy        *AskForApproval `json:"approval_policy"`
	ApprovalsReviewer     *string         `json:"approvals_reviewer"`
	SandboxMode           *string         `json:"sandbox_mode"`
	ModelReasoningEffort  *string         `json:"model_reasoning_effort"`
	ModelReasoningSummary *string         `json:"model_reasoning_summary"`
	ServiceTier           *string         `json:"service_tier"`
	Instructions          *string         `json:"instructions"`
	DeveloperInstructions *string         `json:"developer_instructions"`
}

// NoParams are the params of a method that takes none
// (configRequirements/read): absent, null or {}.
type NoParams struct{}

// ConfigRequirementsReadResponse is the result of configRequirements/read.
type ConfigRequirementsReadResponse struct {
	SupportsIndependentSpeedModes *bool          `json:"supportsIndependentSpeedModes"`
	Requirements                  jsontext.Value `json:"requirements"`
}

// SkillsListParams are the params of skills/list.
type SkillsListParams struct {
	Cwds        []string `json:"cwds,omitzero"`
	ForceReload bool     `json:"forceReload,omitzero"`
}

// SkillsListResponse is the result of skills/list.
type SkillsListResponse struct {
	Data []SkillsListEntry `json:"data"`
}

// SkillsListEntry lists the skills found for one cwd.
type SkillsListEntry struct {
	Cwd    string           `json:"cwd"`
	Skills []SkillMetadata  `json:"skills"`
	Errors []SkillErrorInfo `json:"errors"`
}

// SkillMetadata describes one skill. As Codex 0.169 sends it,
// shortDescription is absent (not null) when the SKILL.md has none.
type SkillMetadata struct {
	Name             string  `json:"name"`
	Description      string  `json:"description"`
	ShortDescription string  `json:"shortDescription,omitzero"`
	Path             string  `json:"path"`
	Scope            string  `json:"scope"`
	Enabled          bool    `json:"enabled"`
	PluginID         *string `json:"pluginId"`
}

// SkillErrorInfo is a SKILL.md that could not be loaded.
type SkillErrorInfo struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// PermissionProfileListParams are the params of permissionProfile/list.
type PermissionProfileListParams struct {
	Cursor *string `json:"cursor,omitzero"`
	Limit  *uint32 `json:"limit,omitzero"`
	Cwd    *string `json:"cwd,omitzero"`
}

// PermissionProfileListResponse is the result of permissionProfile/list.
type PermissionProfileListResponse struct {
	Data       []PermissionProfileSummary `json:"data"`
	NextCursor *string                    `json:"nextCursor"`
}

// PermissionProfileSummary describes a named permission profile.
type PermissionProfileSummary struct {
	ID          string  `json:"id"`
	Description *string `json:"description"`
	Allowed     bool    `json:"allowed"`
}

// CollaborationModeListParams are the params of collaborationMode/list.
type CollaborationModeListParams struct{}

// CollaborationModeListResponse is the result of collaborationMode/list.
type CollaborationModeListResponse struct {
	Data []CollaborationModeMask `json:"data"`
}

// CollaborationModeMask is a preset collaboration mode.
type CollaborationModeMask struct {
	Name            string  `json:"name"`
	Mode            *string `json:"mode"`
	Model           *string `json:"model"`
	ReasoningEffort *string `json:"reasoning_effort"`
}
