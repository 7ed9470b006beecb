package appserver

import (
	"fmt"
	"testing"

	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
)

func init() {
	responseSchema[appproto.MethodThreadItemsList] = "v2/ThreadItemsListResponse"
}

// TestThreadItemsList: the items of a thread in order, the user's message
// first in its turn; backwards, within one turn, and paged; and Codex
// 0.169's errors.
func TestThreadItemsList(t *testing.T) {
	e := newEnv(t, agenttest.Options{}, Config{})
	c := e.dial("a")
	c.initialize(nil)
	thread := c.startThread(nil)
	if e := c.callErr(appproto.MethodThreadItemsList, map[string]any{"threadId": thread}); e.Code != -32601 || e.Message != "thread/items/list is not supported yet" {
		t.Fatalf("before the first turn: %d %s", e.Code, e.Message)
	}
	var turns []string
	for _, text := range []string{"one", "two"} {
		turns = append(turns, c.startTurn(thread, text))
		c.note("turn/completed")
	}
	// describe lists a page as turn:type pairs, and the user's texts.
	describe := func(m *wmsg) string {
		var out string
		for i := 0; ; i++ {
			typ, ok := resultStr(m, fmt.Sprintf("/data/%d/item/type", i))
			if !ok {
				return out
			}
			turn := m.str(t, fmt.Sprintf("/data/%d/turnId", i))
			for j, id := range turns {
				if id == turn {
					turn = fmt.Sprint(j)
				}
			}
			out += " " + turn + ":" + typ
			if typ == "userMessage" {
				out += "(" + m.str(t, fmt.Sprintf("/data/%d/item/content/0/text", i)) + ")"
			}
		}
	}
	list := func(params map[string]any) *wmsg {
		params["threadId"] = thread
		return c.call(appproto.MethodThreadItemsList, params)
	}
	all := describe(list(map[string]any{}))
	if want := " 0:userMessage(one) 0:agentMessage 1:userMessage(two) 1:agentMessage"; all != want {
		t.Fatalf("all items:%s\nwant%s", all, want)
	}
	// What the TUI's Esc Esc asks.
	if got, want := describe(list(map[string]any{"turnId": nil, "cursor": nil, "limit": 100, "sortDirection": "desc"})), " 1:agentMessage 1:userMessage(two) 0:agentMessage 0:userMessage(one)"; got != want {
		t.Fatalf("desc:%s\nwant%s", got, want)
	}
	if got, want := describe(list(map[string]any{"turnId": turns[0]})), " 0:userMessage(one) 0:agentMessage"; got != want {
		t.Fatalf("one turn:%s\nwant%s", got, want)
	}
	if got := describe(list(map[string]any{"turnId": "bogus"})); got != "" {
		t.Fatalf("unknown turn:%s", got)
	}
	first := list(map[string]any{"limit": 1})
	next := first.str(t, "/nextCursor")
	second := list(map[string]any{"limit": 2, "cursor": next})
	third := list(map[string]any{"limit": 2, "cursor": second.str(t, "/nextCursor")})
	if got := describe(first) + describe(second) + describe(third); got != all {
		t.Fatalf("paged:%s\nwant%s", got, all)
	}
	if next, _ := resultStr(third, "/nextCursor"); next != "" {
		t.Fatalf("a next cursor after the last page: %s", third)
	}
	if e := c.callErr(appproto.MethodThreadItemsList, map[string]any{"threadId": thread, "cursor": "not-a-cursor"}); e.Code != -32600 || e.Message != "invalid cursor: not-a-cursor" {
		t.Fatalf("bad cursor: %d %s", e.Code, e.Message)
	}
	if e := c.callErr(appproto.MethodThreadItemsList, map[string]any{"threadId": "01a236f8-33cc-7bd1-ac0c-22322c765906"}); e.Code != -32601 {
		t.Fatalf("unknown thread: %d %s", e.Code, e.Message)
	}
}

// resultStr returns the string at path in m's result, and whether it is
// there ("" for null).
func resultStr(m *wmsg, path string) (string, bool) {
	var s string
	err := pointer(m.Result, path, &s)
	return s, err == nil
}
