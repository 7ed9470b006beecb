package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
)

// sampleResult is one complete model response.
type sampleResult struct {
	items []prompt.Item // what goes into history, in output order
	calls []prompt.Item // the tool calls among them
	usage *prompt.Usage
}

// sample sends the history to the model (req, or the request built now
// when nil) and receives one response,
// retrying a stream that goes idle or is cut up to the provider's
// stream_max_retries. It returns errSteered when new input arrived
// meanwhile: the partial response is dropped and the caller asks again.
func (tr *turn) sample(req *prompt.Request) (sampleResult, error) {
	t := tr.t
	prov, err := t.core.provider(tr.settings)
	if err != nil {
		return sampleResult{}, err
	}
	if req == nil {
		req = tr.buildRequest()
	}
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithCancel(tr.ctx)
		t.mu.Lock()
		if len(tr.inputs) > 0 {
			t.mu.Unlock()
			cancel()
			return sampleResult{}, errSteered
		}
		tr.streamCancel = cancel
		t.mu.Unlock()

		res, err := tr.streamOnce(ctx, prov, req)

		t.mu.Lock()
		tr.streamCancel = nil
		t.mu.Unlock()
		steered := ctx.Err() != nil && tr.ctx.Err() == nil
		cancel()
		switch {
		case err == nil:
			return res, nil
		case tr.ctx.Err() != nil:
			return sampleResult{}, tr.ctx.Err()
		case steered:
			return sampleResult{}, errSteered
		}
		pe := prompt.AsError(err)
		if !pe.Stream || attempt >= prov.StreamMaxRetries {
			if pe.Stream && prov.StreamMaxRetries > 0 {
				return sampleResult{}, &prompt.Error{
					Message: fmt.Sprintf("stream disconnected before completion after %d retries: %s", prov.StreamMaxRetries, pe.Error()),
					Info:    "responseStreamDisconnected", HTTPStatus: pe.HTTPStatus, Stream: true, Err: err,
				}
			}
			return sampleResult{}, err
		}
		tr.emit(agent.Error{WillRetry: true, Err: agent.TurnError{
			Message:           fmt.Sprintf("Reconnecting... %d/%d", attempt+1, prov.StreamMaxRetries),
			Info:              "responseStreamDisconnected",
			HTTPStatus:        pe.HTTPStatus,
			AdditionalDetails: pe.Error(),
		}})
		select {
		case <-time.After(streamBackoff(attempt)):
		case <-tr.ctx.Done():
			return sampleResult{}, tr.ctx.Err()
		}
	}
}

// streamBackoff is the wait before stream retry n (from 0): 200ms doubling,
// at most 10s.
func streamBackoff(n int) time.Duration {
	return min(200*time.Millisecond<<min(n, 6), 10*time.Second)
}

// streamOnce receives one response, turning its events into items and
// deltas.
func (tr *turn) streamOnce(ctx context.Context, prov *providerClient, req *prompt.Request) (sampleResult, error) {
	var res sampleResult
	onRetry := func(ev prompt.Event) {
		msg := "request failed; retrying"
		if ev.Err != nil {
			msg = ev.Err.Error()
		}
		te := turnError(ev.Err)
		if ev.Err == nil {
			te = &agent.TurnError{Info: "other"}
		}
		te.AdditionalDetails = msg
		te.Message = fmt.Sprintf("Reconnecting... %d/%d", ev.Attempt, prov.RequestMaxRetries)
		tr.emit(agent.Error{WillRetry: true, Err: *te})
	}
	s, err := prov.Client.Stream(ctx, req, onRetry)
	if err != nil {
		return res, err
	}
	defer s.Close()

	// Items shown to the user while they stream, by output item id, and
	// the text their deltas brought (builders: a long message comes in
	// tens of thousands of deltas, and += would cost quadratic time).
	started := map[string]agent.Item{}
	texts := map[string]*strings.Builder{}
	kept := 0 // bytes of text and items kept, within maxResponseBytes
	for {
		ev, err := nextEvent(s)
		if err != nil {
			return res, err
		}
		switch ev.Kind {
		case prompt.ItemAdded:
			if ev.Item == nil {
				continue
			}
			switch ev.Item.Type {
			case prompt.TypeMessage, prompt.TypeReasoning, prompt.TypeWebSearchCall:
				if _, ok := started[ev.Item.ID]; !ok && len(started)+len(res.items) >= maxResponseItems {
					return res, errTooManyItems()
				}
				kept += len(ev.Item.ID)
				if kept > maxResponseBytes {
					return res, errResponseTooLarge()
				}
			}
			switch ev.Item.Type {
			case prompt.TypeMessage:
				it := &agent.AgentMessage{ID: ev.Item.ID, Phase: ev.Item.Phase}
				started[ev.Item.ID] = it
				tr.emit(agent.ItemStarted{Item: it})
			case prompt.TypeReasoning:
				it := &agent.Reasoning{ID: ev.Item.ID}
				started[ev.Item.ID] = it
				tr.emit(agent.ItemStarted{Item: it})
			case prompt.TypeWebSearchCall:
				// As Codex shows a search that has begun: no query yet,
				// an action of type "other".
				it := &agent.WebSearch{ID: ev.Item.ID, Action: &agent.WebSearchAction{Type: "other"}}
				started[ev.Item.ID] = it
				tr.emit(agent.ItemStarted{Item: it})
			}
		case prompt.TextDelta:
			if _, ok := started[ev.ItemID]; ok {
				if kept += len(ev.Delta); kept > maxResponseBytes {
					return res, errResponseTooLarge()
				}
				b := texts[ev.ItemID]
				if b == nil {
					b = &strings.Builder{}
					texts[ev.ItemID] = b
				}
				b.WriteString(ev.Delta)
				if tr.planMode() {
					tr.planFeed(ev.ItemID, ev.Delta)
				} else {
					tr.emitStream(agent.AgentMessageDelta{ItemID: ev.ItemID, Delta: ev.Delta})
				}
			}
		case prompt.ReasoningSummaryPartAdded:
			if _, ok := started[ev.ItemID]; ok && partIndex(ev.SummaryIndex) {
				tr.emitStream(agent.ReasoningSummaryPartAdded{ItemID: ev.ItemID, SummaryIndex: ev.SummaryIndex})
			}
		case prompt.ReasoningSummaryDelta:
			if _, ok := started[ev.ItemID]; ok && partIndex(ev.SummaryIndex) {
				tr.emitStream(agent.ReasoningSummaryDelta{ItemID: ev.ItemID, SummaryIndex: ev.SummaryIndex, Delta: ev.Delta})
			}
		case prompt.ReasoningTextDelta:
			if _, ok := started[ev.ItemID]; ok && partIndex(ev.ContentIndex) {
				tr.emitStream(agent.ReasoningTextDelta{ItemID: ev.ItemID, ContentIndex: ev.ContentIndex, Delta: ev.Delta})
			}
		case prompt.ItemDone:
			if ev.Item == nil {
				continue
			}
			item := *ev.Item
			if kept += itemBytes(&item); kept > maxResponseBytes {
				return res, errResponseTooLarge()
			}
			if _, ok := started[item.ID]; !ok && len(started)+len(res.items) >= maxResponseItems {
				return res, errTooManyItems()
			}
			switch item.Type {
			case prompt.TypeMessage:
				if item.Role != "" && item.Role != "assistant" {
					continue
				}
				if item.ID == "" {
					item.ID = "msg_" + newUUIDv7()
				}
				text := item.Text()
				if b := texts[item.ID]; text == "" && b != nil {
					text = b.String()
				}
				if _, ok := started[item.ID]; !ok {
					tr.emit(agent.ItemStarted{Item: &agent.AgentMessage{ID: item.ID, Phase: item.Phase}})
				}
				// Done: later deltas of it are strays, and its text is
				// the item's now.
				delete(started, item.ID)
				delete(texts, item.ID)
				if tr.planMode() {
					text = tr.planFinish(item.ID, text)
				}
				tr.emit(agent.ItemCompleted{Item: &agent.AgentMessage{ID: item.ID, Text: text, Phase: item.Phase}})
				tr.lastMessage, tr.lastMessageID = text, item.ID
				res.items = append(res.items, item)
			case prompt.TypeReasoning:
				r := &agent.Reasoning{ID: item.ID}
				for _, s := range item.Summary {
					r.Summary = append(r.Summary, s.Text)
				}
				for _, c := range item.Content {
					r.Content = append(r.Content, c.Text)
				}
				if _, ok := started[item.ID]; !ok {
					tr.emit(agent.ItemStarted{Item: &agent.Reasoning{ID: item.ID}})
				}
				delete(started, item.ID)
				tr.emit(agent.ItemCompleted{Item: r})
				res.items = append(res.items, item)
			case prompt.TypeFunctionCall, prompt.TypeCustomToolCall:
				res.items = append(res.items, item)
				res.calls = append(res.calls, item)
			case prompt.TypeWebSearchCall:
				if item.ID == "" {
					item.ID = "ws_" + newUUIDv7()
				}
				if _, ok := started[item.ID]; !ok {
					tr.emit(agent.ItemStarted{Item: &agent.WebSearch{ID: item.ID, Action: &agent.WebSearchAction{Type: "other"}}})
				}
				delete(started, item.ID)
				tr.emit(agent.ItemCompleted{Item: webSearchItem(item.ID, item.Raw)})
				res.items = append(res.items, item)
			default:
				res.items = append(res.items, item)
			}
		case prompt.Completed:
			res.usage = ev.Usage
			return res, nil
		}
	}
}

// nextEvent is s's next event; a stream that ends before
// response.completed is the disconnection Codex reports for it.
func nextEvent(s prompt.Stream) (prompt.Event, error) {
	ev, err := s.Next()
	if errors.Is(err, io.EOF) {
		return ev, &prompt.Error{Message: "stream closed before response.completed", Info: "responseStreamDisconnected", Stream: true}
	}
	return ev, err
}
