package compaction

import "github.com/codexd/codexd/core/prompt"

// A compaction in the middle of a turn (between a tool call's output and
// the next request) must not lose what the turn has done so far. Codex
// 0.169 (observed on its mock: the replacement history of a mid-turn
// compaction) keeps none of it verbatim: the recent user messages, its
// initial context just above the last of them, and the summary last; the
// turn's calls live on only in the summary's prose, and a model that
// does not find its call's output runs the call again (Codex with the
// mock model does so until the turn is stopped). codexd places the
// context and the summary as Codex does and then keeps the turn's own
// progress after the summary: its tool calls with their outputs and its
// messages, within a budget, so the next request continues the turn.

// Progress returns what the turn in progress has done since its last
// user message: its tool calls, each with its output, and its assistant
// messages, in order, the newest first kept within budget tokens (the
// newest unit's outputs are cut in the middle when even it alone does not
// fit). A call is never kept without its output, nor an output without its
// call: the Responses API refuses either. Reasoning items are left out:
// they are opaque and belong to the response that made them.
func Progress(history []prompt.Item, budget int64) []prompt.Item {
	start := lastRealUser(history)
	if start < 0 {
		return nil
	}
	var units [][]prompt.Item
	callUnit := map[string]int{} // call id -> index in units
	for _, it := range history[start+1:] {
		switch {
		case isCall(it):
			callUnit[it.CallID] = len(units)
			units = append(units, []prompt.Item{it})
		case isOutput(it):
			if i, ok := callUnit[it.CallID]; ok {
				units[i] = append(units[i], it)
			}
		case it.Type == prompt.TypeMessage && it.Role == "assistant":
			units = append(units, []prompt.Item{it})
		}
	}
	// A call whose output is not in the history yet cannot be sent.
	complete := units[:0]
	for _, u := range units {
		if !isCall(u[0]) || len(u) > 1 {
			complete = append(complete, u)
		}
	}
	units = complete

	first := len(units)
	var used int64
	for first > 0 {
		n := Tokens(units[first-1])
		if used+n > budget {
			break
		}
		used += n
		first--
	}
	var out []prompt.Item
	if first == len(units) && len(units) > 0 {
		// Even the newest does not fit alone: keep it with its outputs cut.
		out = shrinkUnit(units[len(units)-1], budget)
	}
	for _, u := range units[first:] {
		out = append(out, u...)
	}
	return out
}

// shrinkUnit cuts the outputs (or the message) of one unit so that it
// fits budget, as far as its fixed parts allow.
func shrinkUnit(u []prompt.Item, budget int64) []prompt.Item {
	out := append([]prompt.Item(nil), u...)
	var fixed int64
	var texts int
	for _, it := range out {
		if it.Output != nil || (it.Type == prompt.TypeMessage && len(it.Content) > 0) {
			fixed += itemOverhead
			texts++
			continue
		}
		fixed += ItemTokens(it)
	}
	if texts == 0 {
		return out
	}
	each := max(budget-fixed, 0) / int64(texts)
	for i, it := range out {
		switch {
		case it.Output != nil:
			s := truncateMiddle(*it.Output, each)
			it.Output = &s
			out[i] = it
		case it.Type == prompt.TypeMessage && len(it.Content) > 0:
			m := prompt.Message(it.Role, truncateMiddle(itemText(it), each))
			m.ID = it.ID
			out[i] = m
		}
	}
	return out
}

// lastRealUser is the index of the last message the user wrote (not a
// context block nor a summary), or -1.
func lastRealUser(history []prompt.Item) int {
	for i := len(history) - 1; i >= 0; i-- {
		if isRealUser(history[i]) {
			return i
		}
	}
	return -1
}

func isRealUser(it prompt.Item) bool {
	if it.Type != prompt.TypeMessage || it.Role != "user" {
		return false
	}
	text := messageText(it)
	return text != "" && !IsSummary(text) && !isContextBlock(text)
}

func isCall(it prompt.Item) bool {
	return it.Type == prompt.TypeFunctionCall || it.Type == prompt.TypeCustomToolCall
}

// InsertContext places the initial context in a history rebuilt in the
// middle of a turn where Codex 0.169 places it: just above the last user
// message, else above the summary, so that the summary stays after it.
func InsertContext(rebuilt, context []prompt.Item) []prompt.Item {
	at := lastRealUser(rebuilt)
	if at < 0 {
		for i := len(rebuilt) - 1; i >= 0; i-- {
			if rebuilt[i].Type == prompt.TypeMessage && IsSummary(messageText(rebuilt[i])) {
				at = i
				break
			}
		}
	}
	if at < 0 {
		return append(append([]prompt.Item(nil), rebuilt...), context...)
	}
	out := make([]prompt.Item, 0, len(rebuilt)+len(context))
	out = append(append(append(out, rebuilt[:at]...), context...), rebuilt[at:]...)
	return out
}
