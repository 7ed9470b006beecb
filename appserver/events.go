package appserver

import (
	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
)

// apply updates the thread's state with one event of the core and queues
// its notifications. mu is held.
func (t *thread) apply(ev agent.Event, out *outbox) {
	switch m := ev.Msg.(type) {
	case agent.TurnStarted:
		// A turn boundary withdraws what the previous turn asked.
		t.withdrawAllLocked(out)
		a := &activeTurn{id: ev.TurnID, kind: m.Kind, startedAt: m.StartedAt, byID: make(map[string]*itemView)}
		if a.startedAt.IsZero() {
			a.startedAt = ev.Time
		}
		t.st.active = a
		t.setStatusLocked(appproto.ThreadStatus{Type: appproto.StatusActive}, out)
		t.toSubscribersLocked(out, appproto.TurnStarted.Name(), appproto.TurnNotification{ThreadID: t.id,
			Turn: appproto.Turn{ID: a.id, RootTurnID: ptr(a.id), Items: []appproto.ThreadItem{}, ItemsView: appproto.ItemsNotLoaded,
				Status: appproto.TurnInProgress, StartedAt: unixSec(a.startedAt)}})

	case agent.ItemStarted:
		a := t.turnFor(ev)
		if a == nil {
			return
		}
		v := a.item(m.Item.ItemID())
		if v == nil {
			v = &itemView{started: ev.Time}
			a.items = append(a.items, v)
			a.byID[m.Item.ItemID()] = v
		}
		v.item = m.Item
		t.toSubscribersLocked(out, appproto.ItemStarted.Name(), appproto.ItemStartedNotification{
			Item: wireItem(m.Item, v), ThreadID: t.id, TurnID: a.id, StartedAtMs: v.started.UnixMilli()})

	case agent.ItemCompleted:
		a := t.turnFor(ev)
		if a == nil {
			return
		}
		v := a.item(m.Item.ItemID())
		if v == nil {
			v = &itemView{started: ev.Time}
			a.items = append(a.items, v)
			a.byID[m.Item.ItemID()] = v
		}
		v.item, v.completed, v.done = m.Item, ev.Time, true
		if v.doneSeq == 0 {
			a.completed++
			v.doneSeq = a.completed
		}
		// The completed item carries what its deltas brought (the output
		// capped): the buffers are dropped, not kept with the turn.
		v.dropDeltas()
		switch it := m.Item.(type) {
		case *agent.AgentMessage:
			a.lastAgent = it.ID
		case *agent.UserMessage:
			// The thread's preview is its first user message.
			if t.st.info.Preview == "" {
				for _, in := range it.Content {
					if in.Type == "text" {
						t.st.info.Preview = in.Text
						break
					}
				}
			}
			t.st.info.Materialized = true
		}
		t.toSubscribersLocked(out, appproto.ItemCompleted.Name(), appproto.ItemCompletedNotification{
			Item: wireItem(m.Item, v), ThreadID: t.id, TurnID: a.id, CompletedAtMs: v.completed.UnixMilli()})

	case agent.AgentMessageDelta:
		a := t.turnFor(ev)
		if a == nil {
			return
		}
		if v := a.item(m.ItemID); v != nil && !v.done {
			v.text.write(m.Delta)
		}
		t.toSubscribersLocked(out, appproto.AgentMessageDelta.Name(), appproto.DeltaNotification{
			ThreadID: t.id, TurnID: a.id, ItemID: m.ItemID, Delta: validUTF8(m.Delta)})

	case agent.PlanDelta:
		a := t.turnFor(ev)
		if a == nil {
			return
		}
		if v := a.item(m.ItemID); v != nil && !v.done {
			v.text.write(m.Delta)
		}
		t.toSubscribersLocked(out, appproto.PlanDelta.Name(), appproto.DeltaNotification{
			ThreadID: t.id, TurnID: a.id, ItemID: m.ItemID, Delta: validUTF8(m.Delta)})

	case agent.ReasoningSummaryDelta:
		a := t.turnFor(ev)
		if a == nil {
			return
		}
		if !partIndex(m.SummaryIndex) {
			return // an index no model sends: ignored, not passed on
		}
		if v := a.item(m.ItemID); v != nil && !v.done {
			v.summary.write(m.SummaryIndex, m.Delta)
		}
		t.toSubscribersLocked(out, appproto.ReasoningSummaryTextDelta.Name(), appproto.ReasoningSummaryTextDeltaNotification{
			ThreadID: t.id, TurnID: a.id, ItemID: m.ItemID, Delta: validUTF8(m.Delta), SummaryIndex: int64(m.SummaryIndex)})

	case agent.ReasoningSummaryPartAdded:
		a := t.turnFor(ev)
		if a == nil {
			return
		}
		if !partIndex(m.SummaryIndex) {
			return
		}
		if v := a.item(m.ItemID); v != nil && !v.done {
			v.summary.write(m.SummaryIndex, "")
		}
		t.toSubscribersLocked(out, appproto.ReasoningSummaryPartAdded.Name(), appproto.ReasoningSummaryPartAddedNotification{
			ThreadID: t.id, TurnID: a.id, ItemID: m.ItemID, SummaryIndex: int64(m.SummaryIndex)})

	case agent.ReasoningTextDelta:
		a := t.turnFor(ev)
		if a == nil {
			return
		}
		if !partIndex(m.ContentIndex) {
			return
		}
		if v := a.item(m.ItemID); v != nil && !v.done {
			v.content.write(m.ContentIndex, m.Delta)
		}
		t.toSubscribersLocked(out, appproto.ReasoningTextDelta.Name(), appproto.ReasoningTextDeltaNotification{
			ThreadID: t.id, TurnID: a.id, ItemID: m.ItemID, Delta: validUTF8(m.Delta), ContentIndex: int64(m.ContentIndex)})

	case agent.CommandOutputDelta:
		a := t.turnFor(ev)
		if a == nil {
			return
		}
		delta := validUTF8(string(m.Data))
		if v := a.item(m.ItemID); v != nil && !v.done {
			v.output.write(delta)
		}
		t.toSubscribersLocked(out, appproto.CommandOutputDelta.Name(), appproto.DeltaNotification{
			ThreadID: t.id, TurnID: a.id, ItemID: m.ItemID, Delta: delta})

	case agent.MCPToolCallProgress:
		t.toSubscribersLocked(out, "item/mcpToolCall/progress", appproto.McpToolCallProgressNotification{
			ThreadID: t.id, TurnID: ev.TurnID, ItemID: m.ItemID, Message: m.Message})

	case agent.PlanUpdated:
		steps := make([]appproto.TurnPlanStep, len(m.Steps))
		for i, s := range m.Steps {
			steps[i] = appproto.TurnPlanStep{Step: s.Step, Status: orDefault(s.Status, "pending")}
		}
		t.toSubscribersLocked(out, appproto.TurnPlanUpdated.Name(), appproto.TurnPlanUpdatedNotification{
			ThreadID: t.id, TurnID: ev.TurnID, Explanation: optString(m.Explanation), Plan: steps})

	case agent.TurnDiff:
		t.toSubscribersLocked(out, appproto.TurnDiffUpdated.Name(), appproto.TurnDiffUpdatedNotification{
			ThreadID: t.id, TurnID: ev.TurnID, Diff: validUTF8(m.Diff)})

	case agent.TokenCount:
		u := m.Info
		t.st.usage = &u
		t.toSubscribersLocked(out, appproto.ThreadTokenUsageUpdated.Name(), appproto.ThreadTokenUsageUpdatedNotification{
			ThreadID: t.id, TurnID: ev.TurnID, TokenUsage: wireUsage(u)})

	case agent.Error:
		if !m.WillRetry {
			t.setStatusLocked(appproto.ThreadStatus{Type: appproto.StatusSystemError}, out)
		}
		t.toSubscribersLocked(out, appproto.Error.Name(), appproto.ErrorNotification{
			Error: *wireTurnError(&m.Err), WillRetry: m.WillRetry, ThreadID: t.id, TurnID: ev.TurnID})

	case agent.Warning:
		t.toSubscribersLocked(out, appproto.Warning.Name(), appproto.WarningNotification{ThreadID: ptr(t.id), Message: m.Message})

	case agent.ExecApprovalRequest:
		t.execApprovalLocked(ev, m, out)
	case agent.PatchApprovalRequest:
		t.patchApprovalLocked(ev, m, out)
	case agent.MCPToolApprovalRequest:
		t.mcpApprovalLocked(ev, m, out)
	case agent.MCPElicitationRequest:
		t.mcpElicitationLocked(ev, m, out)
	case agent.MCPElicitationWithdrawn:
		t.mcpElicitationWithdrawnLocked(m, out)
	case agent.UserInputRequest:
		t.userInputLocked(ev, m, out)

	case agent.SettingsUpdated:
		t.st.settings = m.Settings
		t.toSubscribersLocked(out, appproto.ThreadSettingsUpdated.Name(), appproto.ThreadSettingsUpdatedNotification{
			ThreadID: t.id, ThreadSettings: wireSettings(m.Settings)})

	case agent.ThreadNameUpdated:
		t.st.info.Name = m.Name
		t.toSubscribersLocked(out, appproto.ThreadNameUpdated.Name(), appproto.ThreadNameUpdatedNotification{
			ThreadID: t.id, ThreadName: ptr(m.Name)})

	case agent.TurnCompleted:
		t.turnCompletedLocked(ev, m, out)
	}
}

// turnFor returns the active turn an event belongs to, or nil for a stray
// event (of a turn that already ended).
func (t *thread) turnFor(ev agent.Event) *activeTurn {
	if a := t.st.active; a != nil && (ev.TurnID == "" || ev.TurnID == a.id) {
		return a
	}
	return nil
}

// turnCompletedLocked ends the active turn: pending interrupts are
// answered first, then the status and turn/completed go out, and the
// turn's unanswered server requests are withdrawn after it (Codex's order).
func (t *thread) turnCompletedLocked(ev agent.Event, m agent.TurnCompleted, out *outbox) {
	a := t.st.active
	if a == nil || a.id != ev.TurnID {
		return
	}
	kept := t.st.interrupts[:0]
	for _, pi := range t.st.interrupts {
		if pi.turnID == a.id {
			out.respond(pi.call, appproto.EmptyResponse{}, nil)
		} else {
			kept = append(kept, pi)
		}
	}
	t.st.interrupts = kept
	// Read state goes out before turn/completed, after a failed turn's
	// status (Codex's order).
	if m.Status == agent.TurnStatusFailed {
		t.setStatusLocked(appproto.ThreadStatus{Type: appproto.StatusSystemError}, out)
		t.publishAttentionLocked(a, m, out)
	} else {
		t.publishAttentionLocked(a, m, out)
		t.setStatusLocked(appproto.ThreadStatus{Type: appproto.StatusIdle}, out)
	}
	turn := appproto.Turn{ID: a.id, RootTurnID: ptr(a.id), Items: []appproto.ThreadItem{}, ItemsView: appproto.ItemsNotLoaded,
		Status: string(m.Status), Error: wireTurnError(m.Error), StartedAt: unixSec(a.startedAt), CompletedAt: unixSec(m.CompletedAt)}
	if m.CompletedAt.IsZero() {
		turn.CompletedAt = unixSec(ev.Time)
	}
	turn.DurationMs = ptr(m.Duration.Milliseconds())
	// Codex's summary of a turn is its final answer, when there is one.
	lastID := m.LastAgentMessageID
	if lastID == "" {
		lastID = a.lastAgent
	}
	if v := a.item(lastID); v != nil && m.Status != agent.TurnStatusInterrupted {
		turn.Items = append(turn.Items, wireItem(v.item, v))
		turn.ItemsView = appproto.ItemsSummary
	}
	t.toSubscribersLocked(out, appproto.TurnCompletedN.Name(), appproto.TurnNotification{ThreadID: t.id, Turn: turn})
	t.withdrawAllLocked(out)
	// An ended turn keeps no delta buffers. The partial text of an agent
	// message that never completed (an interrupted or cut stream) stays in
	// the history, as the turn showed it ([history-keeps-partial-items]),
	// within one view's bound (and its marker) for the whole turn; the
	// rest is dropped.
	budget := maxViewBytes + 64
	for _, v := range a.items {
		if msg, ok := v.item.(*agent.AgentMessage); ok && !v.done && v.text.len() > 0 && budget > 0 {
			text := v.text.String()
			if len(text) <= budget {
				budget -= len(text)
				partial := *msg // the core's item is not changed
				partial.Text += text
				v.item = &partial
			}
		}
		v.dropDeltas()
	}
	t.st.history = append(t.st.history, a.toHist(m, ev.Time))
	t.st.active = nil
	t.st.lastTerminalTurnID = a.id
	t.st.info.Materialized = true
	t.st.info.UpdatedAt = ev.Time
}
