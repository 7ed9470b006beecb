package appserver

import (
	"encoding/json"
	"testing"

	"github.com/codexd/codexd/agent"
)

// An imageView item goes out in Codex 0.169's shape.
func TestImageViewItem(t *testing.T) {
	b, err := json.Marshal(wireItem(&agent.ImageView{ID: "call_1", Path: "/w/a.png"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"type":"imageView","id":"call_1","path":"/w/a.png","startedAtMs":null,"completedAtMs":null}`; string(b) != want {
		t.Fatalf("got %s\nwant %s", b, want)
	}
}
