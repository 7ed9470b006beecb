package appproto

import "github.com/go-json-experiment/json/jsontext"

// TurnStartParams are the params of turn/start.
type TurnStartParams struct {
	ThreadID            string             `json:"threadId"`
	Input               []UserInput        `json:"input"`
	ClientUserMessageID *string            `json:"clientUserMessageId,omitzero"`
	Cwd                 *string            `json:"cwd,omitzero"`
	ApprovalPolicy      *AskForApproval    `json:"approvalPolicy,omitzero"`
	ApprovalsReviewer   *string            `json:"approvalsReviewer,omitzero"`
	SandboxPolicy       *SandboxPolicy     `json:"sandboxPolicy,omitzero"`
	Model               *string            `json:"model,omitzero"`
	ServiceTier         *string            `json:"serviceTier,omitzero"`
	ServiceTierForTurn  *string            `json:"serviceTierForTurn,omitzero"`
	Effort              *string            `json:"effort,omitzero"`
	Summary             *string            `json:"summary,omitzero"`
	Personality         *string            `json:"personality,omitzero"`
	OutputSchema        jsontext.Value     `json:"outputSchema,omitzero"`
	DisabledPluginIDs   []string           `json:"disabledPluginIds,omitzero"`
	ParentTurnID        *string            `json:"parentTurnId,omitzero"`
	RootTurnID          *string            `json:"rootTurnId,omitzero"`
	ToolOutput          jsontext.Value     `json:"toolOutput,omitzero"`
	TurnTrigger         *string            `json:"turnTrigger,omitzero"`
	CollaborationMode   *CollaborationMode `json:"collaborationMode,omitzero"` // experimental

	// Experimental.
	Permissions                     *string        `json:"permissions,omitzero"`
	AdditionalContext               jsontext.Value `json:"additionalContext,omitzero"`
	CyberAccessProgram              jsontext.Value `json:"cyberAccessProgram,omitzero"`
	Environments                    jsontext.Value `json:"environments,omitzero"`
	MultiAgentMode                  *string        `json:"multiAgentMode,omitzero"`
	ResponsesapiClientMetadata      jsontext.Value `json:"responsesapiClientMetadata,omitzero"`
	ResponsesapiClientMetadataPatch jsontext.Value `json:"responsesapiClientMetadataPatch,omitzero"`
	RuntimeWorkspaceRoots           []string       `json:"runtimeWorkspaceRoots,omitzero"`
}

// TurnStartResponse is the result of turn/start: the turn, in progress.
type TurnStartResponse struct {
	Turn Turn `json:"turn"`
}

// TurnSteerParams are the params of turn/steer.
type TurnSteerParams struct {
	ThreadID            string      `json:"threadId"`
	ExpectedTurnID      string      `json:"expectedTurnId"`
	Input               []UserInput `json:"input"`
	ClientUserMessageID *string     `json:"clientUserMessageId,omitzero"`

	// Experimental.
	AdditionalContext               jsontext.Value `json:"additionalContext,omitzero"`
	ResponsesapiClientMetadata      jsontext.Value `json:"responsesapiClientMetadata,omitzero"`
	ResponsesapiClientMetadataPatch jsontext.Value `json:"responsesapiClientMetadataPatch,omitzero"`
}

// TurnSteerResponse is the result of turn/steer.
type TurnSteerResponse struct {
	TurnID string `json:"turnId"`
}

// TurnInterruptParams are the params of turn/interrupt.
type TurnInterruptParams struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
}

// MaxInputChars is the most text a turn/start or turn/steer may carry,
// summed over its text inputs, in characters (Unicode scalar values):
// Codex 0.169's MAX_USER_INPUT_TEXT_CHARS, 1 MiB of characters.
const MaxInputChars = 1 << 20

// InputTooLargeData is the data of the -32602 error for input over
// MaxInputChars.
type InputTooLargeData struct {
	InputErrorCode string `json:"input_error_code"` // "input_too_large"
	MaxChars       int    `json:"max_chars"`
	ActualChars    int    `json:"actual_chars"`
}
