package core

import (
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/store"
)

// recorder persists a thread: its events and its model history, appended
// in order, flushed to disk at turn boundaries.
type recorder interface {
	Event(ev agent.Event)
	Items(turnID string, items []prompt.Item)
	// Raw appends a history record the core encoded itself (a
	// compaction's).
	Raw(turnID string, rec json.RawMessage)
	Sync() error
	Close() error
}

// nopRecorder keeps nothing (an ephemeral thread, or no store).
type nopRecorder struct{}

func (nopRecorder) Event(agent.Event)           {}
func (nopRecorder) Items(string, []prompt.Item) {}
func (nopRecorder) Raw(string, json.RawMessage) {}
func (nopRecorder) Sync() error                 { return nil }
func (nopRecorder) Close() error                { return nil }

// storeRecorder appends to a store.Writer. A failed append is logged and
// never stops the turn: the conversation goes on, and the warning says what
// was not kept.
type storeRecorder struct {
	w   store.Writer
	log *slog.Logger
	// started holds when each item still open started (item id →
	// time.Time), so that its completion is stored with it: a reloaded
	// turn then reports its items' times, as Codex's does.
	started *sync.Map
}

func newStoreRecorder(w store.Writer, log *slog.Logger) storeRecorder {
	return storeRecorder{w: w, log: log, started: &sync.Map{}}
}

func (r storeRecorder) Event(ev agent.Event) {
	switch m := ev.Msg.(type) {
	case agent.ItemStarted:
		if r.started != nil && m.Item != nil {
			r.started.Store(m.Item.ItemID(), ev.Time)
		}
	case agent.ItemCompleted:
		if r.started != nil && m.Item != nil && m.StartedAt.IsZero() {
			if at, ok := r.started.LoadAndDelete(m.Item.ItemID()); ok {
				m.StartedAt = at.(time.Time)
				ev.Msg = m
			}
		}
	}
	if !store.Kept(ev.Msg) {
		return
	}
	if err := r.w.Append(store.EventRecord(ev)); err != nil {
		r.log.Warn("appending to the rollout", "err", err)
	}
}

func (r storeRecorder) Items(turnID string, items []prompt.Item) {
	recs := make([]store.Record, 0, len(items))
	for _, it := range items {
		b, err := json.Marshal(it)
		if err != nil {
			continue
		}
		recs = append(recs, store.ModelRecord(turnID, b))
	}
	if err := r.w.Append(recs...); err != nil {
		r.log.Warn("appending model history to the rollout", "err", err)
	}
}

func (r storeRecorder) Raw(turnID string, rec json.RawMessage) {
	if err := r.w.Append(store.ModelRecord(turnID, rec)); err != nil {
		r.log.Warn("appending model history to the rollout", "err", err)
	}
}

func (r storeRecorder) Sync() error  { return r.w.Sync() }
func (r storeRecorder) Close() error { return r.w.Close() }

// decodeHistory reads stored model-history items; unreadable ones are
// skipped.
//
// It consumes raw: each record is let go once decoded, so that a long
// history is never held both as JSON and decoded (the caller must hold no
// other reference to the records for that to free anything).
func decodeHistory(raw []json.RawMessage, log *slog.Logger) []prompt.Item {
	out := make([]prompt.Item, 0, len(raw))
	for i, r := range raw {
		raw[i] = nil
		var it prompt.Item
		if err := json.Unmarshal(r, &it); err != nil {
			log.Warn("skipping an unreadable history item", "err", err)
			continue
		}
		out = append(out, it)
	}
	return out
}

// turnBuilder rebuilds a thread's turns from its events, as a client sees
// them: ItemStarted and ItemCompleted upsert an item by id, TurnCompleted
// closes the turn.
type turnBuilder struct {
	mu    sync.Mutex
	turns []agent.Turn
}

func (b *turnBuilder) apply(ev agent.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch m := ev.Msg.(type) {
	case agent.TurnStarted:
		b.turns = append(b.turns, agent.Turn{ID: ev.TurnID, Status: agent.TurnStatusInProgress, StartedAt: m.StartedAt})
	case agent.ItemStarted:
		b.upsert(ev.TurnID, m.Item)
	case agent.ItemCompleted:
		b.upsert(ev.TurnID, m.Item)
	case agent.TurnCompleted:
		if t := b.find(ev.TurnID); t != nil {
			t.Status = m.Status
			t.Error = m.Error
			t.CompletedAt = m.CompletedAt
			t.Duration = m.Duration
		}
	}
}

func (b *turnBuilder) find(id string) *agent.Turn {
	for i := len(b.turns) - 1; i >= 0; i-- {
		if b.turns[i].ID == id {
			return &b.turns[i]
		}
	}
	return nil
}

func (b *turnBuilder) upsert(turnID string, it agent.Item) {
	t := b.find(turnID)
	if t == nil {
		return
	}
	for i, old := range t.Items {
		if old.ItemID() == it.ItemID() {
			t.Items[i] = it
			return
		}
	}
	t.Items = append(t.Items, it)
}

// completed returns a copy of the turns that ended.
func (b *turnBuilder) completed() []agent.Turn {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []agent.Turn
	for _, t := range b.turns {
		if t.Status != agent.TurnStatusInProgress {
			t.Items = append([]agent.Item(nil), t.Items...)
			out = append(out, t)
		}
	}
	return out
}

// all returns a copy of every turn.
func (b *turnBuilder) all() []agent.Turn {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]agent.Turn, len(b.turns))
	for i, t := range b.turns {
		t.Items = append([]agent.Item(nil), t.Items...)
		out[i] = t
	}
	return out
}

// normalizeHistory makes a history the model accepts after a crash: every
// tool call gets an output (an "aborted" one where the process died before
// writing it), and an output without its call is dropped, as Codex does
// when it rebuilds a prompt.
func normalizeHistory(items []prompt.Item) []prompt.Item {
	outputs := map[string]bool{}
	calls := map[string]bool{}
	for _, it := range items {
		switch it.Type {
		case prompt.TypeFunctionCallOutput, prompt.TypeCustomToolCallOutput:
			outputs[it.CallID] = true
		case prompt.TypeFunctionCall, prompt.TypeCustomToolCall:
			calls[it.CallID] = true
		}
	}
	if !needsRepair(items, calls, outputs) {
		return items // the common case: no second copy of a long history
	}
	out := make([]prompt.Item, 0, len(items))
	for _, it := range items {
		switch it.Type {
		case prompt.TypeFunctionCallOutput, prompt.TypeCustomToolCallOutput:
			if !calls[it.CallID] {
				continue
			}
		}
		out = append(out, it)
		if (it.Type == prompt.TypeFunctionCall || it.Type == prompt.TypeCustomToolCall) && !outputs[it.CallID] {
			out = append(out, abortedOutput(it))
			outputs[it.CallID] = true
		}
	}
	return out
}

// needsRepair reports whether normalizeHistory has anything to change: an
// output without its call, or a call without its output.
func needsRepair(items []prompt.Item, calls, outputs map[string]bool) bool {
	for _, it := range items {
		switch it.Type {
		case prompt.TypeFunctionCallOutput, prompt.TypeCustomToolCallOutput:
			if !calls[it.CallID] {
				return true
			}
		case prompt.TypeFunctionCall, prompt.TypeCustomToolCall:
			if !outputs[it.CallID] {
				return true
			}
		}
	}
	return false
}
