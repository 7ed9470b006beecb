package core

import (
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
)

// TestWebSearchItem: the query line as Codex 0.169 words it for each kind
// of action, and an action that does not parse shown as "other".
func TestWebSearchItem(t *testing.T) {
	for _, tc := range []struct{ raw, typ, query string }{
		{`{"type":"web_search_call","action":{"type":"search","query":"golang generics"}}`, "search", "golang generics"},
		{`{"action":{"type":"search","queries":["a","b"]}}`, "search", "a ..."},
		{`{"action":{"type":"search","queries":["only"]}}`, "search", "only"},
		{`{"action":{"type":"search","query":"","queries":["q1","q2"]}}`, "search", "q1 ..."},
		{`{"action":{"type":"open_page","url":"https://go.dev"}}`, "open_page", "https://go.dev"},
		{`{"action":{"type":"find_in_page","url":"https://go.dev","pattern":"any"}}`, "find_in_page", "'any' in https://go.dev"},
		{`{"action":{"type":"find_in_page","pattern":"any"}}`, "find_in_page", "'any'"},
		{`{"action":{"type":"teleport"}}`, "other", ""},
		{`{"action":7}`, "other", ""},
		{`not json`, "other", ""},
		{`{}`, "other", ""},
	} {
		it := webSearchItem("ws_1", []byte(tc.raw))
		if it.ID != "ws_1" || it.Action == nil || it.Action.Type != tc.typ || it.Query != tc.query {
			t.Errorf("%s: %+v %+v, want %s %q", tc.raw, it, it.Action, tc.typ, tc.query)
		}
	}
}

func FuzzWebSearchItem(f *testing.F) {
	f.Add([]byte(`{"action":{"type":"search","query":"q","queries":["a","b"]}}`))
	f.Add([]byte(`{"action":{"type":"find_in_page","url":"u","pattern":"p"}}`))
	f.Add([]byte(`{"action":null}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		it := webSearchItem("id", raw)
		if it == nil || it.Action == nil || it.ID != "id" {
			t.Fatalf("%+v", it)
		}
	})
}

// TestWebSearchCallIsAnItem: a web_search_call in the model's answer is a
// webSearch item, started then completed with its action, and goes back to
// the model in the history as it came.
func TestWebSearchCallIsAnItem(t *testing.T) {
	raw := []byte(`{"id":"ws_1","type":"web_search_call","status":"completed","action":{"type":"search","query":"go"}}`)
	added := prompt.Item{Type: prompt.TypeWebSearchCall, ID: "ws_1", Raw: []byte(`{"id":"ws_1","type":"web_search_call","status":"in_progress"}`)}
	done := prompt.Item{Type: prompt.TypeWebSearchCall, ID: "ws_1", Raw: raw}
	evs := []prompt.Event{{Kind: prompt.Created}, {Kind: prompt.ItemAdded, Item: &added}, {Kind: prompt.ItemDone, Item: &done}}
	evs = append(evs, textEvents("msg_1", "found it")[1:]...)
	m := newFakeModel(fakeResponse{events: append(evs, completed(10, 5))}, textResponse("msg_2", "ok"))
	h := newHarness(t, m, func(c *Config) { c.NoSkills = true })
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("search")})
	got := until(t, th, isTurnCompleted)
	m.request(t)
	var started, finished []*agent.WebSearch
	for _, ev := range got {
		switch x := ev.Msg.(type) {
		case agent.ItemStarted:
			if w, ok := x.Item.(*agent.WebSearch); ok {
				started = append(started, w)
			}
		case agent.ItemCompleted:
			if w, ok := x.Item.(*agent.WebSearch); ok {
				finished = append(finished, w)
			}
		}
	}
	if len(started) != 1 || started[0].Query != "" || started[0].Action.Type != "other" {
		t.Fatalf("started: %+v", started)
	}
	if len(finished) != 1 || finished[0].Query != "go" || finished[0].Action.Type != "search" || finished[0].Action.Query != "go" {
		t.Fatalf("completed: %+v", finished)
	}
	h.submit(th, agent.UserInput{Input: text("again")})
	until(t, th, isTurnCompleted)
	back := false
	for _, it := range m.request(t).Input {
		if it.Type == prompt.TypeWebSearchCall && string(it.Raw) == string(raw) {
			back = true
		}
	}
	if !back {
		t.Fatal("the web_search_call did not go back to the model as it came")
	}
}
