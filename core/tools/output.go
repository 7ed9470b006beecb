package tools

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// ExecOutput is the result of exec_command or write_stdin, written back to
// the model in Codex's text format.
type ExecOutput struct {
	ChunkID  string
	WallTime time.Duration
	// ExitCode is set once the process exited.
	ExitCode *int
	// SessionID is set while the process still runs.
	SessionID *int
	// Output is what the process printed during the wait, whole.
	Output    []byte
	MaxTokens int
}

// Text renders the output as Codex does:
//
//	Chunk ID: 1a2b3c
//	Wall time: 0.0123 seconds
//	Process exited with code 0            (or: Process running with session ID N)
//	Original token count: N
//	Output:
//	...
func (o ExecOutput) Text() string {
	text := strings.ToValidUTF8(string(o.Output), "\uFFFD")
	var b strings.Builder
	if o.ChunkID != "" {
		fmt.Fprintf(&b, "Chunk ID: %s\n", o.ChunkID)
	}
	fmt.Fprintf(&b, "Wall time: %.4f seconds\n", o.WallTime.Seconds())
	if o.ExitCode != nil {
		fmt.Fprintf(&b, "Process exited with code %d\n", *o.ExitCode)
	}
	if o.SessionID != nil {
		fmt.Fprintf(&b, "Process running with session ID %d\n", *o.SessionID)
	}
	fmt.Fprintf(&b, "Original token count: %d\n", ApproxTokens(len(text)))
	b.WriteString("Output:\n")
	max := o.MaxTokens
	if max <= 0 {
		max = DefaultMaxOutputTokens
	}
	b.WriteString(TruncateTokens(text, max))
	return b.String()
}

// ChunkID returns a fresh 6-hex-digit chunk id.
func ChunkID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ApproxTokens estimates tokens as Codex does: four bytes a token, rounded
// up.
func ApproxTokens(bytes int) int { return (bytes + 3) / 4 }

// TruncateTokens cuts the middle of text to about maxTokens tokens, as
// Codex's formatted_truncate_text does: unchanged when it fits, else
// "Total output lines: N\n\n" + head + "…K tokens truncated…" + tail, the
// head and tail each half of the byte budget, cut on UTF-8 boundaries.
func TruncateTokens(text string, maxTokens int) string {
	budget := maxTokens * 4
	if len(text) <= budget {
		return text
	}
	lines := strings.Count(text, "\n")
	if !strings.HasSuffix(text, "\n") {
		lines++
	}
	removed := ApproxTokens(len(text) - budget)
	if budget <= 0 {
		return fmt.Sprintf("Total output lines: %d\n\n…%d tokens truncated…", lines, ApproxTokens(len(text)))
	}
	left := budget / 2
	right := budget - left
	headEnd := left
	for headEnd > 0 && !utf8.RuneStart(text[headEnd]) {
		headEnd--
	}
	tailStart := len(text) - right
	for tailStart < len(text) && !utf8.RuneStart(text[tailStart]) {
		tailStart++
	}
	tailStart = max(tailStart, headEnd)
	return fmt.Sprintf("Total output lines: %d\n\n%s…%d tokens truncated…%s", lines, text[:headEnd], removed, text[tailStart:])
}

// Rejected is the text the model gets when a command did not run because it
// was refused (by the user, or because the policy cannot ask), in the words
// of Codex's unified exec error.
func Rejected(tool, reason string) string {
	return fmt.Sprintf("%s failed: CreateProcess { message: \"Rejected(\\\"%s\\\")\" }", tool, reason)
}

// Reasons of a rejection.
const (
	ReasonRejectedByUser  = "rejected by user"
	ReasonApprovalFailed  = "approval request failed"
	ReasonNeverAsk        = "approval required by policy, but AskForApproval is set to Never"
	ReasonGranularRules   = "approval required by policy rule, but AskForApproval::Granular.rules is false"
	ReasonForcedRemoval   = "rm -f style commands are not permitted. Use a safer approach"
	ReasonSandboxDenied   = "sandbox denied the command and the approval policy does not allow asking to run it unsandboxed"
	PlanUpdatedOutput     = "Plan updated"
	PatchRejectedByUser   = "patch rejected by user"
	PatchApprovalFailed   = "patch approval request failed"
	PatchVerifyFailedText = "apply_patch verification failed: "
)

// EscalationRefused is the error when a model asks to run unsandboxed
// under a policy other than on-request.
func EscalationRefused(policy string) string {
	return fmt.Sprintf("approval policy is %s; reject command — you cannot ask for escalated permissions if the approval policy is %s", policy, policy)
}

// TruncateForHistory bounds a tool's output as Codex does before it joins
// the history: by tokens (mode "tokens", four bytes a token, the middle
// replaced by "…N tokens truncated…") or by bytes (mode "bytes", the
// middle replaced by "…N chars truncated…", N counting characters), with
// "Total output lines: N" first when anything was cut. A limit of 0 or
// less keeps nothing of the middle; text within the limit is unchanged.
func TruncateForHistory(text, mode string, limit int64) string {
	if mode != "bytes" {
		if limit >= int64(len(text)) {
			return text
		}
		return TruncateTokens(text, int(limit))
	}
	if int64(len(text)) <= limit {
		return text
	}
	lines := strings.Count(text, "\n")
	if !strings.HasSuffix(text, "\n") {
		lines++
	}
	budget := int(max(limit, 0))
	headEnd := budget / 2
	for headEnd > 0 && !utf8.RuneStart(text[headEnd]) {
		headEnd--
	}
	tailStart := len(text) - (budget - budget/2)
	for tailStart < len(text) && !utf8.RuneStart(text[tailStart]) {
		tailStart++
	}
	tailStart = max(tailStart, headEnd)
	removed := utf8.RuneCountInString(text[headEnd:tailStart])
	return fmt.Sprintf("Total output lines: %d\n\n%s…%d chars truncated…%s", lines, text[:headEnd], removed, text[tailStart:])
}
