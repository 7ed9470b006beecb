package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/compaction"
	"github.com/codexd/codexd/core/prompt"
)

// errCompactFailed wraps what stops a compaction.
var errCompactFailed = errors.New("compaction failed")

// threshold is the request size from which a thread on model compacts
// first: model_auto_compact_token_limit, else the model's own limit, if
// any, against its window.
func (c *Core) threshold(model string) int64 {
	limit := c.cfg.Compaction.AutoCompactTokenLimit
	if limit == 0 {
		limit = c.modelInfo(model).AutoCompactTokenLimit
	}
	return compaction.Threshold(c.contextWindow(model), limit)
}

// autoCompact compacts the history first when the next request would pass
// the threshold. It is the hook before each model request of a turn. When
// it does not compact it returns the request it measured, for the turn to
// send: building it again would cost each request the history once more.
func (tr *turn) autoCompact() (*prompt.Request, error) {
	if len(tr.t.historySnapshot()) == 0 {
		return nil, nil
	}
	req := tr.buildRequest()
	if compaction.RequestTokens(req) < tr.t.core.threshold(tr.settings.Model) {
		return req, nil
	}
	return nil, tr.compact(true)
}

// isContextExceeded reports whether the model refused the request as too
// large for its window.
func isContextExceeded(err error) bool {
	return err != nil && prompt.AsError(err).Info == "contextWindowExceeded"
}

// runCompact is the body of a compaction turn (thread/compact/start).
func (tr *turn) runCompact() (agent.TurnStatus, *agent.TurnError) {
	err := tr.compact(false)
	switch {
	case tr.ctx.Err() != nil:
		return agent.TurnStatusInterrupted, nil
	case err != nil:
		return agent.TurnStatusFailed, turnError(err)
	}
	return agent.TurnStatusCompleted, nil
}

// compact has the model summarise the history and replaces the history with
// the recent user messages and the summary, as a contextCompaction item of
// the turn. The summarisation request is cut to fit the window; when the
// model still refuses it as too large, it is cut by half again, down to the
// last item, and then the compaction goes on with no summary rather than
// fail (the history is dropped either way: the thread can go on).
//
// inTurn is true for a compaction inside a regular turn: when the turn
// has already done something (tool calls since its user message), the
// context goes above the last user message as Codex 0.169 places it in
// the middle of a turn, and that progress follows the summary, so that
// the next request continues the turn instead of starting it again.
func (tr *turn) compact(inTurn bool) error {
	t := tr.t
	item := &agent.ContextCompaction{ID: newUUIDv7()}
	tr.emit(agent.ItemStarted{Item: item})

	history := t.historySnapshot()
	window := t.core.contextWindow(tr.settings.Model)
	base := tr.buildRequest()
	req := *base
	req.Tools = nil
	req.Text = nil
	fixed := compaction.RequestTokens(&prompt.Request{Instructions: req.Instructions}) + compaction.Tokens(tr.prefix)
	budget := compaction.Budget(window) - fixed
	instruction := t.core.cfg.Compaction.PromptOr()

	var summary string
	var used *prompt.Usage
	for {
		input, dropped := compaction.SummaryInput(history, instruction, budget)
		req.Input = append(append([]prompt.Item(nil), tr.prefix...), input...)
		text, u, err := tr.summarise(&req)
		if err == nil {
			summary, used = text, u
			if dropped > 0 {
				t.log.Info("compaction: oldest items left out of the summary request", "dropped", dropped)
			}
			break
		}
		if tr.ctx.Err() != nil {
			return tr.ctx.Err()
		}
		if !isContextExceeded(err) {
			return fmt.Errorf("%w: %w", errCompactFailed, err)
		}
		if len(input) <= 2 || budget <= 1 {
			// Nothing left to cut: go on without a summary.
			summary = ""
			break
		}
		// The model counts more tokens than the estimate: halve the room.
		budget = min(budget, compaction.Tokens(input)) / 2
	}

	keep := compaction.UserBudget(t.core.threshold(tr.settings.Model))
	rebuilt := compaction.Rebuild(compaction.UserMessages(history), summary, keep)
	var progress []prompt.Item
	if inTurn {
		progress = compaction.Progress(history, keep)
	}
	if len(progress) > 0 {
		rebuilt = append(compaction.InsertContext(rebuilt, tr.initialContext()), progress...)
	} else {
		rebuilt = append(tr.initialContext(), rebuilt...)
	}
	t.replaceHistory(tr.id, summary, rebuilt)
	// The usage first, then the item's end, in Codex's order.
	tr.reportRebuiltUsage(window, used)
	tr.emit(agent.ItemCompleted{Item: item})
	return nil
}

// summarise streams one summarisation request and returns the text of the
// model's last message. Stream errors are retried as a turn's are.
func (tr *turn) summarise(req *prompt.Request) (string, *prompt.Usage, error) {
	prov, err := tr.t.core.provider(tr.settings)
	if err != nil {
		return "", nil, err
	}
	for attempt := 0; ; attempt++ {
		text, u, err := drainSummary(tr.ctx, prov, req)
		if err == nil || tr.ctx.Err() != nil {
			return text, u, err
		}
		pe := prompt.AsError(err)
		if !pe.Stream || attempt >= prov.StreamMaxRetries {
			return "", nil, err
		}
		tr.emit(agent.Error{WillRetry: true, Err: agent.TurnError{
			Message: fmt.Sprintf("Reconnecting... %d/%d", attempt+1, prov.StreamMaxRetries),
			Info:    "responseStreamDisconnected", HTTPStatus: pe.HTTPStatus, AdditionalDetails: pe.Error(),
		}})
		select {
		case <-time.After(streamBackoff(attempt)):
		case <-tr.ctx.Done():
			return "", nil, tr.ctx.Err()
		}
	}
}

// drainSummary reads a response to its end, keeping the last assistant
// message's text; nothing of it is shown as a message of the turn.
func drainSummary(ctx context.Context, prov *providerClient, req *prompt.Request) (string, *prompt.Usage, error) {
	s, err := prov.Client.Stream(ctx, req, func(prompt.Event) {})
	if err != nil {
		return "", nil, err
	}
	defer s.Close()
	var last string
	var deltas strings.Builder // many deltas: += would cost quadratic time
	for {
		ev, err := nextEvent(s)
		if err != nil {
			return "", nil, err
		}
		switch ev.Kind {
		case prompt.TextDelta:
			deltas.WriteString(ev.Delta)
		case prompt.ItemDone:
			if ev.Item != nil && ev.Item.Type == prompt.TypeMessage && (ev.Item.Role == "" || ev.Item.Role == "assistant") {
				last = ev.Item.Text()
				if last == "" {
					last = deltas.String()
				}
				deltas.Reset()
			}
		case prompt.Completed:
			if last == "" {
				last = deltas.String()
			}
			return last, ev.Usage, nil
		}
	}
}

// replaceHistory makes rebuilt the thread's history and records the
// compaction, so that a resume starts from it.
func (t *thread) replaceHistory(turnID, summary string, rebuilt []prompt.Item) {
	t.mu.Lock()
	t.history = append([]prompt.Item(nil), rebuilt...)
	t.mu.Unlock()
	rec, err := compaction.MarkerRecord(summary, rebuilt)
	if err != nil {
		t.log.Warn("encoding the compaction record", "err", err)
		return
	}
	t.rec.Raw(turnID, rec)
}

// reportRebuiltUsage tells the client what the next request will cost now:
// the rebuilt history's size, against the model's real window (Codex keeps
// reporting the size from before the compaction). The summarisation's own
// usage u joins the thread's total.
func (tr *turn) reportRebuiltUsage(window int64, u *prompt.Usage) {
	est := compaction.RequestTokens(tr.buildRequest())
	t := tr.t
	t.mu.Lock()
	if t.usage == nil {
		t.usage = &agent.TokenUsageInfo{}
	}
	if u != nil {
		tot := &t.usage.Total
		tot.Input += u.InputTokens
		tot.CachedInput += u.CachedInputTokens
		tot.Output += u.OutputTokens
		tot.ReasoningOutput += u.ReasoningOutputTokens
		tot.Total += u.TotalTokens
	}
	t.usage.Last = agent.TokenUsage{Input: est, Total: est}
	t.usage.ModelContextWindow = window
	snapshot := *t.usage
	t.mu.Unlock()
	tr.emit(agent.TokenCount{Info: snapshot})
}

// submitSpecial queues a compaction or review turn, interrupting the running
// turn first as Codex does (mu held). It returns the new turn's id.
func (t *thread) submitSpecial(kind string, setup func(*turn)) string {
	if tr := t.current(); tr != nil {
		tr.interrupt()
	}
	tr := t.newTurn(t.settings, nil)
	tr.kind = kind
	if setup != nil {
		setup(tr)
	}
	t.queue = append(t.queue, tr)
	t.signal()
	return tr.id
}
