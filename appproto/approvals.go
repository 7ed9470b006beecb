package appproto

import (
	"bytes"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// ServerRequest binds the method name of a server-to-client request to its
// params type P and the client's response type R. The server sends P and
// decodes the client's answer with DecodeResponse; a client registers for
// the name and answers with an R.
type ServerRequest[P, R any] string

// Name returns the method name.
func (r ServerRequest[P, R]) Name() string { return string(r) }

// DecodeResponse decodes a client's result for r.
func (r ServerRequest[P, R]) DecodeResponse(raw jsontext.Value) (R, error) {
	var out R
	err := json.Unmarshal(raw, &out)
	return out, err
}

// The server requests codexd sends.
var (
	CommandExecutionRequestApproval = ServerRequest[CommandExecutionRequestApprovalParams, CommandExecutionRequestApprovalResponse]("item/commandExecution/requestApproval")
	FileChangeRequestApproval       = ServerRequest[FileChangeRequestApprovalParams, FileChangeRequestApprovalResponse]("item/fileChange/requestApproval")
	ToolRequestUserInput            = ServerRequest[ToolRequestUserInputParams, ToolRequestUserInputResponse]("item/tool/requestUserInput")
)

// CommandExecutionRequestApprovalParams ask to run a command. Absent
// optional members are left out, as Codex does for this request.
type CommandExecutionRequestApprovalParams struct {
	Kind                        string                    `json:"kind"` // "command"
	ThreadID                    string                    `json:"threadId"`
	TurnID                      string                    `json:"turnId"`
	ItemID                      string                    `json:"itemId"`
	ApprovalID                  *string                   `json:"approvalId,omitempty"`
	Reason                      *string                   `json:"reason,omitempty"`
	StartedAtMs                 int64                     `json:"startedAtMs"`
	EnvironmentID               *string                   `json:"environmentId,omitempty"`
	Command                     *string                   `json:"command,omitempty"`
	Cwd                         *string                   `json:"cwd,omitempty"`
	CommandActions              []CommandAction           `json:"commandActions,omitempty"`
	ProposedExecpolicyAmendment []string                  `json:"proposedExecpolicyAmendment,omitempty"`
	AvailableDecisions          []CommandApprovalDecision `json:"availableDecisions,omitempty"`
}

// CommandApprovalDecision is a decision on a command: "accept",
// "acceptForSession", "decline", "cancel", an accept with an exec policy
// amendment (Amendment set), or a network policy amendment (kept raw).
type CommandApprovalDecision struct {
	Decision  string
	Amendment []string
	// Network is the value of applyNetworkPolicyAmendment, as received.
	Network jsontext.Value
}

// Decisions.
const (
	DecisionAccept           = "accept"
	DecisionAcceptForSession = "acceptForSession"
	DecisionDecline          = "decline"
	DecisionCancel           = "cancel"
	// DecisionAcceptWithAmendment and DecisionApplyNetworkAmendment name the
	// object forms.
	DecisionAcceptWithAmendment   = "acceptWithExecpolicyAmendment"
	DecisionApplyNetworkAmendment = "applyNetworkPolicyAmendment"
)

func (d CommandApprovalDecision) MarshalJSON() ([]byte, error) {
	switch d.Decision {
	case DecisionAcceptWithAmendment:
		am := d.Amendment
		if am == nil {
			am = []string{}
		}
		type inner struct {
			ExecpolicyAmendment []string `json:"execpolicy_amendment"`
		}
		return json.Marshal(struct {
			V inner `json:"acceptWithExecpolicyAmendment"`
		}{inner{am}})
	case DecisionApplyNetworkAmendment:
		return append(append([]byte(`{"applyNetworkPolicyAmendment":`), d.Network...), '}'), nil
	}
	return json.Marshal(d.Decision)
}

func (d *CommandApprovalDecision) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		switch s {
		case DecisionAccept, DecisionAcceptForSession, DecisionDecline, DecisionCancel:
			*d = CommandApprovalDecision{Decision: s}
			return nil
		}
		return fmt.Errorf("unknown variant `%s`", s)
	}
	var w struct {
		Accept *struct {
			ExecpolicyAmendment []string `json:"execpolicy_amendment"`
		} `json:"acceptWithExecpolicyAmendment"`
		Network jsontext.Value `json:"applyNetworkPolicyAmendment"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	switch {
	case w.Accept != nil:
		*d = CommandApprovalDecision{Decision: DecisionAcceptWithAmendment, Amendment: w.Accept.ExecpolicyAmendment}
	case w.Network != nil:
		*d = CommandApprovalDecision{Decision: DecisionApplyNetworkAmendment, Network: bytes.Clone(w.Network)}
	default:
		return fmt.Errorf("invalid command approval decision %s", b)
	}
	return nil
}

// CommandExecutionRequestApprovalResponse is the client's answer.
type CommandExecutionRequestApprovalResponse struct {
	Decision CommandApprovalDecision `json:"decision"`
}

// FileChangeRequestApprovalParams ask to apply a file change.
type FileChangeRequestApprovalParams struct {
	ThreadID    string `json:"threadId"`
	TurnID      string `json:"turnId"`
	ItemID      string `json:"itemId"`
	StartedAtMs int64  `json:"startedAtMs"`
	// Reason and GrantRoot are always sent, null when absent, as Codex
	// does for this request (unlike the command approval's members).
	Reason    *string `json:"reason"`
	GrantRoot *string `json:"grantRoot"`
}

// FileChangeRequestApprovalResponse is the client's answer: "accept",
// "acceptForSession", "decline" or "cancel".
type FileChangeRequestApprovalResponse struct {
	Decision string `json:"decision"`
}

// ToolRequestUserInputParams ask the user questions.
type ToolRequestUserInputParams struct {
	ThreadID         string                         `json:"threadId"`
	TurnID           string                         `json:"turnId"`
	ItemID           string                         `json:"itemId"`
	Questions        []ToolRequestUserInputQuestion `json:"questions"`
	IsBlocking       bool                           `json:"isBlocking"`
	AutoResolutionMs *uint64                        `json:"autoResolutionMs"`
}

// ToolRequestUserInputQuestion is one question.
type ToolRequestUserInputQuestion struct {
	ID       string                        `json:"id"`
	Header   string                        `json:"header"`
	Question string                        `json:"question"`
	IsOther  bool                          `json:"isOther"`
	IsSecret bool                          `json:"isSecret"`
	Options  *[]ToolRequestUserInputOption `json:"options"`
}

// ToolRequestUserInputOption is one choice of a question.
type ToolRequestUserInputOption struct {
	Label       string `json:"label"`
	Description string `json:"description"`
}

// ToolRequestUserInputResponse maps question ids to answers.
type ToolRequestUserInputResponse struct {
	Answers map[string]ToolRequestUserInputAnswer `json:"answers"`
}

// ToolRequestUserInputAnswer is the answer to one question.
type ToolRequestUserInputAnswer struct {
	Answers []string `json:"answers"`
}
