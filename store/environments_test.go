package store

import (
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/codexd/codexd/agent"
)

// TestEnvironmentRootsKept: an environment's runtime workspace roots come
// back from the rollout as they went in: none ([]) stays none, and roots
// never given (nil, the cwd) stay nil.
func TestEnvironmentRootsKept(t *testing.T) {
	s := agent.Settings{Model: "m", Cwd: "/w", Environments: []agent.Environment{
		{ID: "a", Cwd: "/a", RuntimeWorkspaceRoots: []string{}},
		{ID: "b", Cwd: "/b"},
		{ID: "c", Cwd: "/c/d", RuntimeWorkspaceRoots: []string{"/c", "/e"}},
	}}
	b, err := jsonv2.Marshal(encodeSettings(s))
	if err != nil {
		t.Fatal(err)
	}
	var x settingsV1
	if err := jsonv2.Unmarshal(b, &x, jsonOpts); err != nil {
		t.Fatal(err)
	}
	back := decodeSettings(x).Environments
	if len(back) != 3 {
		t.Fatalf("environments after a round trip: %+v", back)
	}
	if r := back[0].RuntimeWorkspaceRoots; r == nil || len(r) != 0 {
		t.Errorf("[] roots came back as %#v", r)
	}
	if r := back[1].RuntimeWorkspaceRoots; r != nil {
		t.Errorf("nil roots came back as %#v", r)
	}
	if r := back[2].RuntimeWorkspaceRoots; len(r) != 2 || r[0] != "/c" || r[1] != "/e" {
		t.Errorf("roots came back as %#v", r)
	}
}
