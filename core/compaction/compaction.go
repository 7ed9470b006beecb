// Package compaction decides when a thread's model history must be
// compacted and how: it estimates what a request costs in tokens, sets the
// trigger, shapes the summarisation request so that it fits the model's
// window, rebuilds the history from the summary, and reads back the
// compaction records of a rollout.
//
// It is pure: it runs no model, touches no disk and knows no turn. The core
// calls it before each model request and runs the summarisation itself.
// It must never import the core, a model client, a store or a front-end.
package compaction

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/codexd/codexd/core/prompt"
)

// DefaultPrompt asks the model for the hand-off summary (compact_prompt and
// experimental_compact_prompt_file replace it). Our own words; the aim is
// Codex's: a summary another model can pick the work up from.
const DefaultPrompt = `Context checkpoint: the conversation so far is about to be replaced by your summary, and the work will continue from it alone. Write that summary now, for whoever picks the task up next.

Cover:
- what the user asked for, and any constraints or preferences they stated;
- what has been done so far: decisions taken, files changed, commands run and what they showed;
- what is still open, and the exact next steps;
- facts that would be costly to find again (paths, names, versions, error messages).

Be concise and concrete. Do not call tools; answer with the summary only.`

// SummaryPrefix opens the summary message in the rebuilt history, so the
// model knows what it is reading (and so that a later compaction can tell
// the summary from what the user said).
const SummaryPrefix = "Summary of the earlier conversation, written when its history was compacted. Continue the work from it:"

// FallbackSummary stands in when no summary could be had even from the most
// recent item alone.
const FallbackSummary = "(No summary is available: the earlier conversation did not fit the model's context window and was dropped.)"

// UserMessageBudget is Codex's budget, in tokens, for the most recent user
// messages kept verbatim in a compacted history.
const UserMessageBudget = 20_000

// DefaultContextWindow is the window Codex assumes for a model it has no
// metadata for.
const DefaultContextWindow = 258_400

// MaxTurnAddition is the most one step of a turn adds to the history
// before the next request: the largest tool output the core lets through
// (10,000 tokens) and room for the model's own answer.
const MaxTurnAddition = 12_000

// ApproxTokens is Codex's estimate of the tokens of n bytes of text: a
// token for every four bytes, rounded up.
func ApproxTokens(n int) int64 { return int64((n + 3) / 4) }

// itemOverhead is what an item costs beyond its text (its type, role and
// call id), in tokens.
const itemOverhead = 8

// ItemTokens estimates the tokens one history item takes in a request.
func ItemTokens(it prompt.Item) int64 {
	n := len(it.Name) + len(it.Arguments) + len(it.Input)
	// A tool's output may be parts too (view_image's image).
	for _, c := range append(it.Content[:len(it.Content):len(it.Content)], it.OutputContent...) {
		n += len(c.Text)
		if c.ImageURL != "" {
			// An image costs what it costs whatever the URL's length;
			// a data: URL is no measure of it.
			n += 4 * 765
		}
	}
	for _, s := range it.Summary {
		n += len(s.Text)
	}
	if it.EncryptedContent != nil {
		n += len(*it.EncryptedContent) * 3 / 4
	}
	if it.Output != nil {
		n += len(*it.Output)
	}
	return ApproxTokens(n) + itemOverhead
}

// Tokens estimates the tokens of items.
func Tokens(items []prompt.Item) int64 {
	var n int64
	for _, it := range items {
		n += ItemTokens(it)
	}
	return n
}

// RequestTokens estimates the tokens a request sends: its instructions,
// tool definitions and input.
func RequestTokens(req *prompt.Request) int64 {
	n := ApproxTokens(len(req.Instructions))
	for _, t := range req.Tools {
		n += ApproxTokens(len(t))
	}
	return n + Tokens(req.Input)
}

// Threshold is the request size, in tokens, from which the core compacts
// before sending: the configured model_auto_compact_token_limit, else 90 %
// of the window, and never so close to the window that one more step of
// the turn (the largest tool output and an answer) would pass it. Codex
// checks only after a response, against a total that moves with what the
// response added, so its trigger lands anywhere from 70 % to 98 %; this
// one is a fixed point of the request itself.
func Threshold(window, autoLimit int64) int64 {
	if window <= 0 {
		window = DefaultContextWindow
	}
	limit := window * 9 / 10
	if autoLimit > 0 {
		limit = autoLimit
	}
	limit = min(limit, window-reserve(window))
	return max(limit, 1)
}

// reserve is the headroom kept below the window: one step of a turn, or a
// quarter of a small window.
func reserve(window int64) int64 { return min(MaxTurnAddition, window/4) }

// Budget is what the summarisation request may send, in tokens, so that
// the model has room left to answer: the window less the headroom.
func Budget(window int64) int64 {
	if window <= 0 {
		window = DefaultContextWindow
	}
	return max(window-reserve(window), 1)
}

// SummaryInput is the input of the summarisation request: the history,
// without its oldest items when it would pass budget (tokens, what the
// request's fixed part leaves), then the compaction prompt. A tool call and
// its output go together; an item that alone passes the budget is cut in
// the middle. Codex sends the whole history and, when the model refuses
// it, drops one item at a time and asks again (or fails); this request
// fits from the first try. dropped counts the items left out.
func SummaryInput(history []prompt.Item, instruction string, budget int64) (input []prompt.Item, dropped int) {
	ask := prompt.Message("user", instruction)
	budget -= ItemTokens(ask)
	total := Tokens(history)
	start := 0
	for start < len(history) && total > budget {
		total -= ItemTokens(history[start])
		start++
		// Never begin with an output whose call was dropped.
		for start < len(history) && isOutput(history[start]) {
			total -= ItemTokens(history[start])
			start++
		}
	}
	kept := append([]prompt.Item(nil), history[start:]...)
	if len(kept) == 0 && len(history) > 0 {
		// Even the last item does not fit: keep its tail that does.
		last := history[len(history)-1]
		if !isOutput(last) && last.Type != prompt.TypeFunctionCall && last.Type != prompt.TypeCustomToolCall {
			kept = []prompt.Item{shrink(last, budget)}
			start--
		}
	}
	return append(kept, ask), start
}

func isOutput(it prompt.Item) bool {
	return it.Type == prompt.TypeFunctionCallOutput || it.Type == prompt.TypeCustomToolCallOutput
}

// shrink returns a message item cut to about budget tokens of text, as a
// plain text message of the same role.
func shrink(it prompt.Item, budget int64) prompt.Item {
	role := it.Role
	if role == "" {
		role = "user"
	}
	text := itemText(it)
	return prompt.Message(role, truncateMiddle(text, max(budget-itemOverhead, 0)))
}

// itemText is the readable text of any item.
func itemText(it prompt.Item) string {
	var parts []string
	for _, c := range it.Content {
		if c.Text != "" {
			parts = append(parts, c.Text)
		}
	}
	for _, s := range it.Summary {
		parts = append(parts, s.Text)
	}
	if it.Output != nil {
		parts = append(parts, *it.Output)
	}
	return strings.Join(parts, "\n")
}

// truncateMiddle keeps about maxTokens tokens of text, half from each end.
func truncateMiddle(text string, maxTokens int64) string {
	if ApproxTokens(len(text)) <= maxTokens {
		return text
	}
	keep := int(maxTokens * 4)
	marker := "\n…(earlier text cut to fit the context window)…\n"
	if keep <= len(marker) {
		return marker
	}
	keep -= len(marker)
	head, tail := keep/2, keep-keep/2
	return strings.ToValidUTF8(text[:head], "") + marker + strings.ToValidUTF8(text[len(text)-tail:], "")
}

// UserMessages returns the text of the user's own messages in history, in
// order: not the summaries of earlier compactions, nor the context blocks
// that the core sends as user messages.
func UserMessages(history []prompt.Item) []string {
	var out []string
	for _, it := range history {
		if it.Type != prompt.TypeMessage || it.Role != "user" {
			continue
		}
		text := messageText(it)
		if text == "" || IsSummary(text) || isContextBlock(text) {
			continue
		}
		out = append(out, text)
	}
	return out
}

func messageText(it prompt.Item) string {
	var parts []string
	for _, c := range it.Content {
		if c.Text != "" && (c.Type == "input_text" || c.Type == "output_text") {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// IsSummary reports whether a user message is a compaction summary.
func IsSummary(text string) bool { return strings.HasPrefix(text, SummaryPrefix+"\n") }

func isContextBlock(text string) bool {
	t := strings.TrimSpace(text)
	return strings.HasPrefix(t, "<environment_context>") || strings.HasPrefix(t, "# AGENTS.md instructions") ||
		strings.HasPrefix(t, "<user_instructions>")
}

// Rebuild is the compacted history, as Codex builds it: the most recent
// user messages that fit within budget tokens (the oldest of them cut to
// fit), then the summary as a user message. The initial context is not in
// it: the core puts it before the history of every request.
func Rebuild(userMessages []string, summary string, budget int64) []prompt.Item {
	var picked []string
	remaining := budget
	for i := len(userMessages) - 1; i >= 0 && remaining > 0; i-- {
		m := userMessages[i]
		n := ApproxTokens(len(m))
		if n <= remaining {
			picked = append(picked, m)
			remaining -= n
			continue
		}
		picked = append(picked, truncateMiddle(m, remaining))
		break
	}
	out := make([]prompt.Item, 0, len(picked)+1)
	for i := len(picked) - 1; i >= 0; i-- {
		out = append(out, prompt.Message("user", picked[i]))
	}
	if strings.TrimSpace(summary) == "" {
		summary = FallbackSummary
	}
	return append(out, prompt.Message("user", SummaryPrefix+"\n"+summary))
}

// UserBudget is the budget of Rebuild for a model whose trigger is
// threshold: Codex's 20,000 tokens, but never more than a quarter of the
// trigger, so that a compacted history is always well under it (with a
// small window, Codex's budget alone can exceed the trigger and make it
// compact on every request).
func UserBudget(threshold int64) int64 { return min(UserMessageBudget, threshold/4) }

// MarkerType is the type of the history record that marks a compaction in
// a rollout (Codex writes a `compacted` rollout item).
const MarkerType = "compacted"

// Marker is the record of a compaction: the summary message and the
// history that replaced everything before it.
type Marker struct {
	Type               string        `json:"type"`
	Message            string        `json:"message"`
	ReplacementHistory []prompt.Item `json:"replacement_history"`
}

// MarkerRecord encodes the record of a compaction.
func MarkerRecord(summary string, history []prompt.Item) (json.RawMessage, error) {
	return json.Marshal(Marker{Type: MarkerType, Message: summary, ReplacementHistory: history})
}

// Replay applies the compaction records of a stored history: the history
// starts again from the last record's replacement, followed by what was
// recorded after it. Records that cannot be read are left out, as is
// everything else unreadable: the caller decodes the rest.
func Replay(raw []json.RawMessage) []json.RawMessage {
	last := -1
	var marker Marker
	for i := len(raw) - 1; i >= 0; i-- {
		if !isMarker(raw[i]) {
			continue
		}
		if err := json.Unmarshal(raw[i], &marker); err == nil {
			last = i
			break
		}
	}
	if last < 0 {
		return dropMarkers(raw)
	}
	out := make([]json.RawMessage, 0, len(marker.ReplacementHistory)+len(raw)-last-1)
	for _, it := range marker.ReplacementHistory {
		if it.Type == MarkerType {
			continue
		}
		b, err := json.Marshal(it)
		if err == nil {
			out = append(out, b)
		}
	}
	return append(out, dropMarkers(raw[last+1:])...)
}

// isMarker reports whether a stored item is a compaction record, reading
// only its type.
func isMarker(b json.RawMessage) bool {
	if !bytes.Contains(b, []byte(`"`+MarkerType+`"`)) {
		return false // the common case, without decoding
	}
	var t struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(b, &t) == nil && t.Type == MarkerType
}

func dropMarkers(raw []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(raw))
	for _, r := range raw {
		if !isMarker(r) {
			out = append(out, r)
		}
	}
	return out
}
