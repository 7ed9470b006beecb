package appproto

import (
	"bytes"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// AskForApproval is an approval policy: "untrusted", "on-request", "never",
// or a granular policy (an object the server keeps as it arrived).
type AskForApproval struct {
	Policy   string         // set unless Granular is
	Granular jsontext.Value // the value of the "granular" member
}

// Approval policies Codex accepts. There is no "on-failure" in v2.
const (
	ApprovalUntrusted = "untrusted"
	ApprovalOnRequest = "on-request"
	ApprovalNever     = "never"
)

// Approval returns the policy named p.
func Approval(p string) AskForApproval { return AskForApproval{Policy: p} }

// IsGranular reports whether a is a granular policy (an experimental form).
func (a AskForApproval) IsGranular() bool { return a.Granular != nil }

func (a AskForApproval) MarshalJSON() ([]byte, error) {
	if a.Granular != nil {
		return append(append([]byte(`{"granular":`), a.Granular...), '}'), nil
	}
	return json.Marshal(a.Policy)
}

func (a *AskForApproval) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		switch s {
		case ApprovalUntrusted, ApprovalOnRequest, ApprovalNever:
			*a = AskForApproval{Policy: s}
			return nil
		}
		return decodeError("unknown variant `%s`, expected one of `untrusted`, `on-request`, `granular`, `never`", s)
	case len(b) > 0 && b[0] == '{':
		var g struct {
			Granular jsontext.Value `json:"granular"`
		}
		if err := json.Unmarshal(b, &g); err != nil {
			return err
		}
		if g.Granular == nil {
			return decodeError("missing field `granular`")
		}
		*a = AskForApproval{Granular: bytes.Clone(g.Granular)}
		return nil
	}
	return decodeError("invalid type: %s, expected string or map", serdeKind(b))
}

// Reviewers of approval requests.
const (
	ReviewerUser             = "user"
	ReviewerAutoReview       = "auto_review"
	ReviewerGuardianSubagent = "guardian_subagent"
)

// Sandbox modes, as thread/start takes them.
const (
	SandboxModeReadOnly         = "read-only"
	SandboxModeWorkspaceWrite   = "workspace-write"
	SandboxModeDangerFullAccess = "danger-full-access"
)

// SandboxPolicy is a sandbox with its parameters, tagged by Type.
type SandboxPolicy struct {
	// Type is "dangerFullAccess", "readOnly", "externalSandbox" or
	// "workspaceWrite".
	Type string
	// WritableRoots, ExcludeTmpdirEnvVar and ExcludeSlashTmp belong to
	// workspaceWrite.
	WritableRoots       []string
	ExcludeTmpdirEnvVar bool
	ExcludeSlashTmp     bool
	// NetworkAccess belongs to readOnly and workspaceWrite.
	NetworkAccess bool
	// ExternalNetwork is externalSandbox's "restricted" or "enabled".
	ExternalNetwork string
}

// Sandbox policy types.
const (
	SandboxDangerFullAccess = "dangerFullAccess"
	SandboxReadOnly         = "readOnly"
	SandboxExternal         = "externalSandbox"
	SandboxWorkspaceWrite   = "workspaceWrite"
)

func (p SandboxPolicy) MarshalJSON() ([]byte, error) {
	switch p.Type {
	case SandboxReadOnly:
		return json.Marshal(struct {
			Type          string `json:"type"`
			NetworkAccess bool   `json:"networkAccess"`
		}{p.Type, p.NetworkAccess})
	case SandboxWorkspaceWrite:
		roots := p.WritableRoots
		if roots == nil {
			roots = []string{}
		}
		return json.Marshal(struct {
			Type                string   `json:"type"`
			WritableRoots       []string `json:"writableRoots"`
			NetworkAccess       bool     `json:"networkAccess"`
			ExcludeTmpdirEnvVar bool     `json:"excludeTmpdirEnvVar"`
			ExcludeSlashTmp     bool     `json:"excludeSlashTmp"`
		}{p.Type, roots, p.NetworkAccess, p.ExcludeTmpdirEnvVar, p.ExcludeSlashTmp})
	case SandboxExternal:
		n := p.ExternalNetwork
		if n == "" {
			n = "restricted"
		}
		return json.Marshal(struct {
			Type          string `json:"type"`
			NetworkAccess string `json:"networkAccess"`
		}{p.Type, n})
	}
	return json.Marshal(struct {
		Type string `json:"type"`
	}{p.Type})
}

func (p *SandboxPolicy) UnmarshalJSON(b []byte) error {
	var w struct {
		Type                *string        `json:"type"`
		WritableRoots       []string       `json:"writableRoots"`
		NetworkAccess       jsontext.Value `json:"networkAccess"`
		ExcludeTmpdirEnvVar bool           `json:"excludeTmpdirEnvVar"`
		ExcludeSlashTmp     bool           `json:"excludeSlashTmp"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.Type == nil {
		return decodeError("missing field `type`")
	}
	out := SandboxPolicy{Type: *w.Type}
	switch out.Type {
	case SandboxDangerFullAccess:
	case SandboxReadOnly, SandboxWorkspaceWrite:
		if w.NetworkAccess != nil && string(w.NetworkAccess) != "null" {
			if err := json.Unmarshal(w.NetworkAccess, &out.NetworkAccess); err != nil {
				return decodeError("invalid type: %s, expected a boolean", serdeKind(w.NetworkAccess))
			}
		}
		if out.Type == SandboxWorkspaceWrite {
			out.WritableRoots = w.WritableRoots
			out.ExcludeTmpdirEnvVar = w.ExcludeTmpdirEnvVar
			out.ExcludeSlashTmp = w.ExcludeSlashTmp
		}
	case SandboxExternal:
		out.ExternalNetwork = "restricted"
		if w.NetworkAccess != nil && string(w.NetworkAccess) != "null" {
			if err := json.Unmarshal(w.NetworkAccess, &out.ExternalNetwork); err != nil ||
				(out.ExternalNetwork != "restricted" && out.ExternalNetwork != "enabled") {
				return decodeError("unknown variant for networkAccess, expected `restricted` or `enabled`")
			}
		}
	default:
		return decodeError("unknown variant `%s`, expected one of `dangerFullAccess`, `readOnly`, `externalSandbox`, `workspaceWrite`", out.Type)
	}
	*p = out
	return nil
}

// ActivePermissionProfile names the profile that produced the permissions.
type ActivePermissionProfile struct {
	ID      string  `json:"id"`
	Extends *string `json:"extends"`
}

// CollaborationMode is a mode ("plan" or "default") with its settings.
type CollaborationMode struct {
	Mode     string                    `json:"mode"`
	Settings CollaborationModeSettings `json:"settings"`
}

// CollaborationModeSettings are the settings of a CollaborationMode (the
// member names are snake_case on the wire, as Codex has them).
type CollaborationModeSettings struct {
	Model                 string  `json:"model"`
	ReasoningEffort       *string `json:"reasoning_effort"`
	DeveloperInstructions *string `json:"developer_instructions"`
}

// TurnError explains a failed turn or an error notification.
type TurnError struct {
	Message string `json:"message"`
	// CodexErrorInfo classifies the error: a JSON string such as
	// "internalServerError", or an object such as
	// {"activeTurnNotSteerable":{"turnKind":"review"}}; nil is null.
	CodexErrorInfo    jsontext.Value `json:"codexErrorInfo"`
	AdditionalDetails *string        `json:"additionalDetails"`
	Misalignment      jsontext.Value `json:"misalignment"`
}

// ErrorInfoName returns a CodexErrorInfo that is a plain name.
func ErrorInfoName(name string) jsontext.Value {
	b, _ := json.Marshal(name)
	return b
}

// TextElement marks a UI-defined span of a text input.
type TextElement struct {
	ByteRange   ByteRange `json:"byteRange"`
	Placeholder *string   `json:"placeholder"`
}

// ByteRange is a byte range of a text input.
type ByteRange struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// UserInput is one part of a user message, tagged by Type: "text",
// "image" (URL or FileID), "localImage" (Path), "audio", "localAudio"
// (Path), "skill" or "mention" (Name and Path).
type UserInput struct {
	Type         string
	Text         string
	TextElements []TextElement
	URL          string
	FileID       string
	Path         string
	Name         string
	// Detail is an image's detail level; "" is null.
	Detail string
}

// TextInput returns a text input.
func TextInput(text string) UserInput { return UserInput{Type: "text", Text: text} }

func (u UserInput) MarshalJSON() ([]byte, error) {
	var detail *string
	if u.Detail != "" {
		detail = &u.Detail
	}
	switch u.Type {
	case "text":
		els := u.TextElements
		if els == nil {
			els = []TextElement{}
		}
		return json.Marshal(struct {
			Type         string        `json:"type"`
			Text         string        `json:"text"`
			TextElements []TextElement `json:"text_elements"`
		}{u.Type, u.Text, els})
	case "image":
		if u.FileID != "" {
			return json.Marshal(struct {
				Type   string  `json:"type"`
				FileID string  `json:"fileId"`
				Detail *string `json:"detail"`
			}{u.Type, u.FileID, detail})
		}
		return json.Marshal(struct {
			Type   string  `json:"type"`
			URL    string  `json:"url"`
			Detail *string `json:"detail"`
		}{u.Type, u.URL, detail})
	case "localImage":
		return json.Marshal(struct {
			Type   string  `json:"type"`
			Path   string  `json:"path"`
			Detail *string `json:"detail"`
		}{u.Type, u.Path, detail})
	case "localAudio":
		return json.Marshal(struct {
			Type string `json:"type"`
			Path string `json:"path"`
		}{u.Type, u.Path})
	case "skill", "mention":
		return json.Marshal(struct {
			Type string `json:"type"`
			Name string `json:"name"`
			Path string `json:"path"`
		}{u.Type, u.Name, u.Path})
	}
	return json.Marshal(struct {
		Type string `json:"type"`
	}{u.Type})
}

var userInputVariants = "`text`, `image`, `localImage`, `audio`, `localAudio`, `skill`, `mention`"

func (u *UserInput) UnmarshalJSON(b []byte) error {
	var w struct {
		Type         *string       `json:"type"`
		Text         *string       `json:"text"`
		TextElements []TextElement `json:"text_elements"`
		URL          *string       `json:"url"`
		FileID       *string       `json:"fileId"`
		Path         *string       `json:"path"`
		Name         *string       `json:"name"`
		Detail       *string       `json:"detail"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.Type == nil {
		return decodeError("missing field `type`")
	}
	out := UserInput{Type: *w.Type}
	need := func(name string, p *string, dst *string) error {
		if p == nil {
			return decodeError("missing field `%s`", name)
		}
		*dst = *p
		return nil
	}
	var err error
	switch out.Type {
	case "text":
		err = need("text", w.Text, &out.Text)
		out.TextElements = w.TextElements
	case "image":
		switch {
		case w.URL != nil:
			out.URL = *w.URL
		case w.FileID != nil:
			out.FileID = *w.FileID
		default:
			err = decodeError("data did not match any variant of untagged enum ImageUserInput")
		}
	case "localImage", "localAudio":
		err = need("path", w.Path, &out.Path)
	case "audio":
	case "skill", "mention":
		if err = need("name", w.Name, &out.Name); err == nil {
			err = need("path", w.Path, &out.Path)
		}
	default:
		err = decodeError("unknown variant `%s`, expected one of %s", out.Type, userInputVariants)
	}
	if err != nil {
		return err
	}
	if w.Detail != nil {
		out.Detail = *w.Detail
	}
	*u = out
	return nil
}

// DecodeError is an error in the shape of params, with the text that
// follows "Invalid request: " in Codex's answer.
type DecodeError struct{ Msg string }

func (e *DecodeError) Error() string { return e.Msg }

func decodeError(format string, args ...any) error {
	return &DecodeError{Msg: fmt.Sprintf(format, args...)}
}

// serdeKind describes a JSON value the way serde's errors do: `integer
// `5“, `string "x"`, `map`, `sequence`...
func serdeKind(v []byte) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "unit"
	}
	switch v[0] {
	case '"':
		var s string
		_ = json.Unmarshal(v, &s)
		return fmt.Sprintf("string %q", s)
	case '{':
		return "map"
	case '[':
		return "sequence"
	case 't', 'f':
		return fmt.Sprintf("boolean `%s`", v)
	case 'n':
		return "null"
	}
	if bytes.ContainsAny(v, ".eE") {
		return fmt.Sprintf("floating point `%s`", v)
	}
	return fmt.Sprintf("integer `%s`", v)
}
