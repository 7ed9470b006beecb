package mockmodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/codexd/codexd/internal/lazyre"
)

// The answers of long sessions: a window the request must fit, a summary
// for a compaction request and findings for a review request. They come
// before scripts' defaults and markers, as a real model's limits would.

// ContextExceededMessage is the API's message for a request past the
// window.
const ContextExceededMessage = "Your input exceeds the context window of this model. Please adjust your input and try again."

// SummaryPrefix opens the mock's compaction summary.
const SummaryPrefix = "Summary from the mock model."

var (
	windowRE     = lazyre.Regexp{Expr: `MOCK:window=(\d+)`}
	windowMarker = []byte("MOCK:window=")
)

// window is the request's window: the last MOCK:window=N in its user
// messages, else def.
func (r *request) window(def int64) int64 {
	// Most requests carry no marker: the body says so in one pass, where
	// decoding every user message would cost each request of a long session
	// its whole history again.
	if !bytes.Contains(r.body, windowMarker) {
		return def
	}
	for i := len(r.input) - 1; i >= 0; i-- {
		it := r.input[i]
		if it.Role != "user" {
			continue
		}
		if m := windowRE.Get().FindStringSubmatch(text(it.Content)); m != nil {
			if n, err := strconv.ParseInt(m[1], 10, 64); err == nil && n > 0 {
				return n
			}
		}
	}
	return def
}

// inputTokens is the request's size as the mock counts it (as its usage
// reports it).
func (r *request) inputTokens() int64 { return int64(len(r.body)/4 + 1) }

// isCompaction: the last input is a user message asking for a checkpoint
// summary (Codex's prompt and codexd's both do).
func (r *request) isCompaction() bool {
	i := r.lastUser()
	if i < 0 || i != len(r.input)-1 {
		return false
	}
	t := strings.ToLower(text(r.input[i].Content))
	return strings.Contains(t, "checkpoint") && strings.Contains(t, "summar")
}

// isReview: the instructions (the instructions member, or a developer or
// system message) ask for the review findings format.
func (r *request) isReview() bool {
	if strings.Contains(r.instr, "overall_correctness") {
		return true
	}
	for _, it := range r.input {
		if (it.Role == "developer" || it.Role == "system") && strings.Contains(text(it.Content), "overall_correctness") {
			return true
		}
	}
	return false
}

func longContext(r *request, defWindow int64) (Response, string, bool) {
	if !r.decoded {
		return Response{}, "", false
	}
	if w := r.window(defWindow); w > 0 && r.inputTokens() > w {
		resp := textResponse("", 1)
		resp.Output = nil
		resp.Fail = &ErrorBody{Code: "context_length_exceeded", Message: ContextExceededMessage}
		return resp, fmt.Sprintf("context window (%d > %d)", r.inputTokens(), w), true
	}
	if r.isCompaction() {
		return textResponse(r.summary(), 3), "compaction", true
	}
	if r.isReview() {
		if r.step() == 0 && r.hasTool("exec_command") {
			return callResponse("exec_command", map[string]any{"cmd": "git status --short && git diff", "yield_time_ms": 10000}), "review:look", true
		}
		return textResponse(r.findings(), 2), "review:findings", true
	}
	return Response{}, "", false
}

// summary is a deterministic hand-off summary: how many user messages there
// were and the last real one.
func (r *request) summary() string {
	var users []string
	for _, it := range r.input[:len(r.input)-1] {
		if it.Role != "user" {
			continue
		}
		t := strings.TrimSpace(text(it.Content))
		if t == "" || strings.HasPrefix(t, "<") {
			continue // a context block
		}
		users = append(users, t)
	}
	last := "(nothing yet)"
	if len(users) > 0 {
		last = users[len(users)-1]
		if len(last) > 200 {
			last = last[:200] + "…"
		}
	}
	return fmt.Sprintf("%s The user sent %d message(s) so far; the latest was: %s", SummaryPrefix, len(users), last)
}

// findings is a review answer in Codex's findings format, about the first
// file `git status --short` listed (or README.md).
func (r *request) findings() string {
	file := "README.md"
	if out, ok := r.lastOutput(); ok {
		for _, line := range strings.Split(text(out.Output), "\n") {
			f := strings.Fields(line)
			if len(f) == 2 && len(f[0]) <= 2 && strings.Trim(f[0], "MADRCU?!") == "" {
				file = f[1]
				break
			}
		}
	}
	v := map[string]any{
		"findings": []map[string]any{{
			"title":            "[P2] Check the change to " + file,
			"body":             "The mock reviewer flags this file so that clients can show a finding.",
			"confidence_score": 0.5,
			"priority":         2,
			"code_location": map[string]any{
				"absolute_file_path": file,
				"line_range":         map[string]int{"start": 1, "end": 1},
			},
		}},
		"overall_correctness":      "patch is correct",
		"overall_explanation":      "The mock reviewer looked at the changes and found one thing to check.",
		"overall_confidence_score": 0.5,
	}
	b, _ := json.Marshal(v)
	return string(b)
}
