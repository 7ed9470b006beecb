package appserver

import (
	"context"
	"errors"

	"github.com/go-json-experiment/json"

	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/jsonrpc"
)

func registerThreadItemsList(s *Server) {
	register(s, appproto.ThreadItemsList, s.threadItemsList)
	threadScoped(s, appproto.MethodThreadItemsList)
}

// errItemsUnsupported is Codex 0.169's answer for a thread whose items it
// cannot page: one that is not found, or has no turn recorded yet.
var errItemsUnsupported = newError(-32601, "thread/items/list is not supported yet")

// threadItemsList pages a thread's items in the order they were recorded
// (the user's message first in its turn), or backwards with sortDirection
// "desc", across the thread or within turnId (an unknown turn has none).
// The cursor is the offset into that order, as thread/turns/list's is;
// codexd gives no backwards cursor (README [backwards-cursors]).
func (s *Server) threadItemsList(ctx context.Context, c *call, p appproto.ThreadItemsListParams) (appproto.ThreadItemsListResponse, error) {
	var none appproto.ThreadItemsListResponse
	id, err := appproto.ParseThreadID(p.ThreadID)
	if err != nil {
		return none, threadIDError(err)
	}
	turns, err := s.historyTurns(ctx, id, appproto.ItemsFull)
	var je *jsonrpc.Error
	if errors.Is(err, errNotMaterialized) || errors.As(err, &je) && je.Code == jsonrpc.CodeInvalidRequest {
		return none, errItemsUnsupported
	} else if err != nil {
		return none, err
	}
	var entries []appproto.ThreadItemEntry
	for _, t := range turns {
		if p.TurnID != nil && t.ID != *p.TurnID {
			continue
		}
		for _, it := range t.Items {
			entries = append(entries, appproto.ThreadItemEntry{TurnID: t.ID, Item: it, ItemTimes: itemTimes(it)})
		}
	}
	if deref(p.SortDirection) == "desc" {
		for i, j := 0, len(entries)-1; i < j; i, j = i+1, j-1 {
			entries[i], entries[j] = entries[j], entries[i]
		}
	}
	start, end, next, err := page(len(entries), p.Cursor, p.Limit)
	if err != nil {
		return none, err
	}
	return appproto.ThreadItemsListResponse{Data: append([]appproto.ThreadItemEntry{}, entries[start:end]...), NextCursor: next}, nil
}

// itemTimes reads an item's own start and completion times, which its
// entry repeats.
func itemTimes(it appproto.ThreadItem) appproto.ItemTimes {
	var t appproto.ItemTimes
	if b, err := json.Marshal(it); err == nil {
		_ = json.Unmarshal(b, &t, json.RejectUnknownMembers(false))
	}
	return t
}
