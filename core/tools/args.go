package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Bounds of exec_command and write_stdin, as Codex's unified exec has them.
const (
	DefaultExecYield        = 10 * time.Second
	DefaultWriteYield       = 250 * time.Millisecond
	MinYield                = 250 * time.Millisecond
	MaxYield                = 30 * time.Second
	MinEmptyPollYield       = 5 * time.Second
	MaxEmptyPollYield       = 300 * time.Second
	DefaultMaxOutputTokens  = 10_000
	MaxRetainedOutputBytes  = 1 << 20
	MaxProcessesPerThread   = 64
	SandboxUseDefault       = "use_default"
	SandboxRequireEscalated = "require_escalated"
)

// ExecArgs are exec_command's arguments.
type ExecArgs struct {
	Cmd                string   `json:"cmd"`
	Workdir            string   `json:"workdir"`
	Shell              string   `json:"shell"`
	Login              *bool    `json:"login"`
	TTY                bool     `json:"tty"`
	YieldTimeMs        *float64 `json:"yield_time_ms"`
	MaxOutputTokens    *float64 `json:"max_output_tokens"`
	SandboxPermissions string   `json:"sandbox_permissions"`
	Justification      string   `json:"justification"`
	PrefixRule         []string `json:"prefix_rule"`
}

// ParseExecArgs reads exec_command's arguments; the error text is the one
// the model sees.
func ParseExecArgs(raw string) (ExecArgs, error) {
	var a ExecArgs
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		return a, fmt.Errorf("failed to parse exec_command arguments: %v", err)
	}
	switch a.SandboxPermissions {
	case "", SandboxUseDefault, SandboxRequireEscalated:
	default:
		return a, fmt.Errorf("failed to parse exec_command arguments: unknown variant `%s`, expected `use_default` or `require_escalated`", a.SandboxPermissions)
	}
	return a, nil
}

// Escalated reports a request to run outside the sandbox.
func (a ExecArgs) Escalated() bool { return a.SandboxPermissions == SandboxRequireEscalated }

// Yield is the initial wait, clamped to Codex's bounds.
func (a ExecArgs) Yield() time.Duration {
	d := DefaultExecYield
	if a.YieldTimeMs != nil {
		d = time.Duration(*a.YieldTimeMs) * time.Millisecond
	}
	return clamp(d, MinYield, MaxYield)
}

// MaxTokens is the output budget.
func (a ExecArgs) MaxTokens() int { return maxTokens(a.MaxOutputTokens) }

// WriteStdinArgs are write_stdin's arguments.
type WriteStdinArgs struct {
	SessionID       json.Number `json:"session_id"`
	Chars           string      `json:"chars"`
	YieldTimeMs     *float64    `json:"yield_time_ms"`
	MaxOutputTokens *float64    `json:"max_output_tokens"`
}

// ParseWriteStdinArgs reads write_stdin's arguments.
func ParseWriteStdinArgs(raw string) (WriteStdinArgs, error) {
	var a WriteStdinArgs
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		return a, fmt.Errorf("failed to parse write_stdin arguments: %v", err)
	}
	if a.SessionID == "" {
		return a, fmt.Errorf("failed to parse write_stdin arguments: missing field `session_id`")
	}
	return a, nil
}

// Yield is the wait after the write: an empty poll waits longer.
func (a WriteStdinArgs) Yield() time.Duration {
	d := DefaultWriteYield
	if a.YieldTimeMs != nil {
		d = time.Duration(*a.YieldTimeMs) * time.Millisecond
	}
	if d < MinYield {
		d = MinYield
	}
	if a.Chars == "" {
		return clamp(d, MinEmptyPollYield, MaxEmptyPollYield)
	}
	return min(d, MaxYield)
}

// MaxTokens is the output budget.
func (a WriteStdinArgs) MaxTokens() int { return maxTokens(a.MaxOutputTokens) }

func maxTokens(v *float64) int {
	if v == nil || *v <= 0 {
		return DefaultMaxOutputTokens
	}
	return int(*v)
}

func clamp(d, lo, hi time.Duration) time.Duration {
	return max(lo, min(d, hi))
}

// PlanArgs are update_plan's arguments.
type PlanArgs struct {
	Explanation string `json:"explanation"`
	Plan        []struct {
		Step   string `json:"step"`
		Status string `json:"status"`
	} `json:"plan"`
}

// ParsePlanArgs reads update_plan's arguments.
func ParsePlanArgs(raw string) (PlanArgs, error) {
	var a PlanArgs
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		return a, fmt.Errorf("failed to parse function arguments: %v", err)
	}
	for _, s := range a.Plan {
		switch s.Status {
		case "pending", "in_progress", "completed":
		default:
			return a, fmt.Errorf("failed to parse function arguments: unknown variant `%s`, expected one of `pending`, `in_progress`, `completed`", s.Status)
		}
	}
	return a, nil
}

// PatchArgs are apply_patch's arguments.
type PatchArgs struct {
	Input string `json:"input"`
}

// ParsePatchArgs reads apply_patch's arguments.
func ParsePatchArgs(raw string) (PatchArgs, error) {
	var a PatchArgs
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		return a, fmt.Errorf("failed to parse function arguments: %v", err)
	}
	return a, nil
}

// UserInputArgs are request_user_input's arguments.
type UserInputArgs struct {
	Questions []struct {
		ID       string `json:"id"`
		Header   string `json:"header"`
		Question string `json:"question"`
		Options  []struct {
			Label       string `json:"label"`
			Description string `json:"description"`
		} `json:"options"`
	} `json:"questions"`
}

// ParseUserInputArgs reads request_user_input's arguments.
func ParseUserInputArgs(raw string) (UserInputArgs, error) {
	var a UserInputArgs
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		return a, fmt.Errorf("failed to parse function arguments: %v", err)
	}
	if len(a.Questions) == 0 {
		return a, fmt.Errorf("request_user_input requires at least one question")
	}
	return a, nil
}

// ViewImageArgs are view_image's arguments.
type ViewImageArgs struct {
	Path string
}

// ParseViewImageArgs reads view_image's arguments.
func ParseViewImageArgs(raw string) (ViewImageArgs, error) {
	var w struct {
		Path *string `json:"path"`
	}
	if err := json.Unmarshal([]byte(raw), &w); err != nil {
		return ViewImageArgs{}, err
	}
	if w.Path == nil {
		return ViewImageArgs{}, fmt.Errorf("missing field `path` at %s", serdeEnd(raw))
	}
	return ViewImageArgs{Path: *w.Path}, nil
}

// serdeEnd is where serde_json reports a missing field: just past the
// object's closing brace, as "line L column C".
func serdeEnd(raw string) string {
	end := strings.LastIndexByte(raw, '}') + 1
	if end == 0 {
		end = len(raw)
	}
	line := 1 + strings.Count(raw[:end], "\n")
	col := end - (strings.LastIndexByte(raw[:end], '\n') + 1)
	return fmt.Sprintf("line %d column %d", line, col)
}
