package appserver

import (
	"testing"

	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
)

func init() {
	responseSchema[appproto.MethodExperimentalFeatureList] = "v2/ExperimentalFeatureListResponse"
	responseSchema[appproto.MethodExperimentalFeatureEnablementSet] = "v2/ExperimentalFeatureEnablementSetResponse"
}

func TestExperimentalFeatureList(t *testing.T) {
	e := newEnv(t, agenttest.Options{}, Config{})
	c := e.dial("f")
	c.initialize(nil)
	page := func(params map[string]any) (names []string, next string) {
		t.Helper()
		var r appproto.ExperimentalFeatureListResponse
		m := c.call(appproto.MethodExperimentalFeatureList, params)
		if err := pointer(m.Result, "", &r); err != nil {
			t.Fatal(err)
		}
		for _, f := range r.Data {
			names = append(names, f.Name)
		}
		if r.NextCursor != nil {
			next = *r.NextCursor
		}
		return names, next
	}
	all, next := page(map[string]any{})
	if len(all) != len(implementedFeatures) || all[0] != "shell_tool" || next != "" {
		t.Fatalf("all: %v next %q", all, next)
	}
	if got, next := page(map[string]any{"limit": 2}); len(got) != 2 || next != "2" {
		t.Fatalf("limit 2: %v %q", got, next)
	}
	if got, next := page(map[string]any{"limit": 2, "cursor": "2"}); len(got) != 2 || got[0] != all[2] || next != "" {
		t.Fatalf("second page: %v %q", got, next)
	}
	if got, next := page(map[string]any{"limit": 0}); len(got) != 1 || next != "1" {
		t.Fatalf("limit 0 (a page holds at least one, as in Codex): %v %q", got, next)
	}
	if got, next := page(map[string]any{"cursor": "4"}); len(got) != 0 || next != "" {
		t.Fatalf("at the end: %v %q", got, next)
	}
	for cursor, msg := range map[string]string{"bogus": "invalid cursor: bogus", "-1": "invalid cursor: -1",
		"5": "cursor 5 exceeds total feature flags 4"} {
		if e := c.callErr(appproto.MethodExperimentalFeatureList, map[string]any{"cursor": cursor}); e.Code != -32600 || e.Message != msg {
			t.Errorf("cursor %s: %d %s", cursor, e.Code, e.Message)
		}
	}
	unknown := "01a236f8-33cc-7bd1-ac0c-22322c765906"
	if e := c.callErr(appproto.MethodExperimentalFeatureList, map[string]any{"threadId": unknown}); e.Message != "thread not found: "+unknown {
		t.Errorf("unknown thread: %s", e.Message)
	}
}

func TestExperimentalFeatureEnablementSet(t *testing.T) {
	e := newEnv(t, agenttest.Options{}, Config{})
	c := e.dial("f")
	c.initialize(nil)
	for _, en := range []map[string]any{{}, {"shell_tool": false, "bogus": true}} {
		m := c.call(appproto.MethodExperimentalFeatureEnablementSet, map[string]any{"enablement": en})
		if string(m.Result) != `{"enablement":{}}` {
			t.Fatalf("%v: %s", en, m.Result)
		}
	}
	if e := c.callErr(appproto.MethodExperimentalFeatureEnablementSet, map[string]any{}); e.Message != "Invalid request: missing field `enablement`" {
		t.Fatalf("missing: %s", e.Message)
	}
}
