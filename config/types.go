package config

import (
	"fmt"
	"slices"
	"strings"
)

// ApprovalPolicy says when a command needs the user's approval
// (approval_policy), with Codex's values.
type ApprovalPolicy string

const (
	ApprovalUntrusted ApprovalPolicy = "untrusted"
	ApprovalOnFailure ApprovalPolicy = "on-failure"
	ApprovalOnRequest ApprovalPolicy = "on-request"
	ApprovalNever     ApprovalPolicy = "never"
	// ApprovalGranular is Codex's table form,
	// approval_policy = { granular = { ... } }; Config.GranularApproval
	// holds the table.
	ApprovalGranular ApprovalPolicy = "granular"
)

var approvalPolicies = []string{"untrusted", "on-failure", "on-request", "never"}

// UnmarshalTOML accepts one of the four names or Codex's granular table.
func (p *ApprovalPolicy) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case string:
		if !slices.Contains(approvalPolicies, v) {
			return unknownVariant(v, approvalPolicies)
		}
		*p = ApprovalPolicy(v)
		return nil
	case map[string]any:
		if _, ok := v["granular"].(map[string]any); ok && len(v) == 1 {
			*p = ApprovalGranular
			return nil
		}
		return fmt.Errorf("expected one of %s or a table { granular = { ... } }", quoteList(approvalPolicies))
	default:
		return fmt.Errorf("invalid type %s, expected a string", tomlType(v))
	}
}

// SandboxMode is how far commands are confined (sandbox_mode).
type SandboxMode string

const (
	SandboxReadOnly         SandboxMode = "read-only"
	SandboxWorkspaceWrite   SandboxMode = "workspace-write"
	SandboxDangerFullAccess SandboxMode = "danger-full-access"
)

var sandboxModes = []string{"read-only", "workspace-write", "danger-full-access"}

// UnmarshalText accepts Codex's three modes.
func (m *SandboxMode) UnmarshalText(b []byte) error {
	return setEnum((*string)(m), string(b), sandboxModes)
}

// UnmarshalTOML accepts a mode or its table form (see unitVariant).
func (m *SandboxMode) UnmarshalTOML(v any) error {
	return unitVariant((*string)(m), v, sandboxModes)
}

// ReasoningSummary is model_reasoning_summary.
type ReasoningSummary string

var reasoningSummaries = []string{"auto", "concise", "detailed", "none"}

// UnmarshalText accepts auto, concise, detailed and none.
func (s *ReasoningSummary) UnmarshalText(b []byte) error {
	return setEnum((*string)(s), string(b), reasoningSummaries)
}

// UnmarshalTOML accepts a summary or its table form (see unitVariant).
func (s *ReasoningSummary) UnmarshalTOML(v any) error {
	return unitVariant((*string)(s), v, reasoningSummaries)
}

// Verbosity is model_verbosity (the Responses API's text.verbosity).
type Verbosity string

var verbosities = []string{"low", "medium", "high"}

// UnmarshalText accepts low, medium and high.
func (v *Verbosity) UnmarshalText(b []byte) error {
	return setEnum((*string)(v), string(b), verbosities)
}

// UnmarshalTOML accepts a verbosity or its table form (see unitVariant).
func (v *Verbosity) UnmarshalTOML(x any) error {
	return unitVariant((*string)(v), x, verbosities)
}

// ReasoningEffort is model_reasoning_effort. Codex 0.169 takes any
// non-empty value a model advertises (none, minimal, low, medium, high,
// xhigh for OpenAI's models), so only emptiness is refused.
type ReasoningEffort string

// UnmarshalText refuses an empty effort.
func (e *ReasoningEffort) UnmarshalText(b []byte) error {
	if strings.TrimSpace(string(b)) == "" {
		return fmt.Errorf("reasoning effort must not be empty")
	}
	*e = ReasoningEffort(b)
	return nil
}

// WireAPI is a provider's wire_api. Only "responses" exists.
type WireAPI string

// WireResponses is the OpenAI Responses API (POST {base_url}/responses).
const WireResponses WireAPI = "responses"

// UnmarshalText accepts "responses"; "chat" gets Codex's explanation.
func (w *WireAPI) UnmarshalText(b []byte) error {
	switch s := string(b); s {
	case "responses":
		*w = WireResponses
		return nil
	case "chat":
		return fmt.Errorf("wire_api = \"chat\" is no longer supported (Codex removed it); set wire_api = \"responses\"")
	default:
		return fmt.Errorf("wire_api %q is not supported: only \"responses\" is", s)
	}
}

// count is a non-negative TOML integer (Codex's u64 fields).
type count int64

func (c *count) UnmarshalTOML(v any) error {
	n, ok := v.(int64)
	if !ok {
		return fmt.Errorf("invalid type %s, expected a non-negative integer", tomlType(v))
	}
	if n < 0 {
		return fmt.Errorf("invalid value %d, expected a non-negative integer", n)
	}
	*c = count(n)
	return nil
}

func setEnum(dst *string, v string, allowed []string) error {
	if !slices.Contains(allowed, v) {
		return unknownVariant(v, allowed)
	}
	*dst = v
	return nil
}

// unitVariant sets dst to the variant v names, as Codex 0.169 reads an
// enum of unit variants: a string, or a table of one key, the variant,
// whose value is an empty table or array (low = {} is low, observed
// through config/value/write).
func unitVariant(dst *string, v any, allowed []string) error {
	switch x := v.(type) {
	case string:
		return setEnum(dst, x, allowed)
	case map[string]any:
		if len(x) != 1 {
			return fmt.Errorf("wanted exactly 1 element, found %d elements", len(x))
		}
		for k, val := range x {
			if !slices.Contains(allowed, k) {
				return unknownVariant(k, allowed)
			}
			switch y := val.(type) {
			case map[string]any:
				if len(y) > 0 {
					return fmt.Errorf("expected empty table")
				}
			case []any:
				if len(y) > 0 {
					return fmt.Errorf("expected empty array")
				}
			case []map[string]any:
				if len(y) > 0 {
					return fmt.Errorf("expected empty array")
				}
			default:
				return fmt.Errorf("expected table, found %s", tomlType(val))
			}
			*dst = k
		}
		return nil
	}
	return fmt.Errorf("invalid type %s, expected a string", tomlType(v))
}

func unknownVariant(v string, allowed []string) error {
	return fmt.Errorf("unknown variant %q, expected one of %s", v, quoteList(allowed))
}

func quoteList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "float"
	case bool:
		return "boolean"
	case map[string]any:
		return "table"
	case []any, []map[string]any:
		return "array"
	default:
		return "datetime"
	}
}
