package appproto

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/jsonrpc"
)

// MethodThreadItemsList is thread/items/list: a thread's items, paged,
// across its turns or within one. The TUI's Esc Esc reads the user's
// earlier prompts with it before it sends thread/revert.
const MethodThreadItemsList = "thread/items/list"

// ThreadItemsList is its typed definition.
var ThreadItemsList = jsonrpc.Method[ThreadItemsListParams, ThreadItemsListResponse](MethodThreadItemsList)

// ThreadItemsListParams select the thread, optionally one of its turns,
// and the page. Cursor is the string a previous page returned (the
// schema's item-anchor form is not taken). DeferOutput is accepted and
// has no effect: codexd never defers an item's output.
type ThreadItemsListParams struct {
	ThreadID      string         `json:"threadId"`
	TurnID        *string        `json:"turnId,omitzero"`
	Cursor        *string        `json:"cursor,omitzero"`
	Limit         *uint32        `json:"limit,omitzero"`
	SortDirection *string        `json:"sortDirection,omitzero"`
	DeferOutput   jsontext.Value `json:"deferOutput,omitzero"`
}

// ThreadItemsListResponse is one page of items.
type ThreadItemsListResponse struct {
	Data            []ThreadItemEntry `json:"data"`
	NextCursor      *string           `json:"nextCursor"`
	BackwardsCursor *string           `json:"backwardsCursor"`
}

// ThreadItemEntry is one item with the turn that holds it and its times.
type ThreadItemEntry struct {
	TurnID string     `json:"turnId"`
	Item   ThreadItem `json:"item"`
	ItemTimes
}
