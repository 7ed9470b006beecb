package store

import (
	"reflect"
	"testing"

	"github.com/codexd/codexd/agent"
)

// TestWebSearchItemRoundTrip: a webSearch item is kept in Codex 0.169's
// rollout form ({"type":"WebSearch","id","query","action":{"type":"search",
// "query"}}, absent fields left out) and read back whole.
func TestWebSearchItemRoundTrip(t *testing.T) {
	it := &agent.WebSearch{ID: "ws_1", Query: "golang generics", Action: &agent.WebSearchAction{Type: "search", Query: "golang generics"}}
	b, err := encodeTurnItem(it)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"type":"WebSearch","id":"ws_1","query":"golang generics","action":{"type":"search","query":"golang generics"}}`; string(b) != want {
		t.Fatalf("encoded %s\nwant    %s", b, want)
	}
	for _, in := range []*agent.WebSearch{it,
		{ID: "ws_2", Query: "'p' in u", Action: &agent.WebSearchAction{Type: "find_in_page", URL: "u", Pattern: "p"}},
		{ID: "ws_3", Query: "a ...", Action: &agent.WebSearchAction{Type: "search", Queries: []string{"a", "b"}}},
		{ID: "ws_4", Action: &agent.WebSearchAction{Type: "other"}},
	} {
		b, err := encodeTurnItem(in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := decodeTurnItem(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(out, in) {
			t.Errorf("%s read back as %+v %+v", b, out, out.(*agent.WebSearch).Action)
		}
	}
	// Codex's own line, as its rollout holds it.
	out, err := decodeTurnItem([]byte(`{"type":"WebSearch","id":"ws_mock_1","query":"golang generics","action":{"type":"search","query":"golang generics"}}`))
	if w, ok := out.(*agent.WebSearch); err != nil || !ok || w.Query != "golang generics" || w.Action.Query != "golang generics" {
		t.Fatalf("Codex's line: %+v %v", out, err)
	}
}
