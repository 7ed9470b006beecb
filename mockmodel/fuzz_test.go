package mockmodel

import (
	"encoding/json"
	"testing"
)

// FuzzRespond feeds an arbitrary script and request body through rule
// matching, the built-in behaviour and the event builder: nothing may
// panic, every event must be JSON whose type is the event's name, and an
// error body must be JSON too.
func FuzzRespond(f *testing.F) {
	f.Add([]byte(`{"rules":[{"when":{"request":1},"respond":{"status":429}}]}`), []byte(`{"input":[]}`))
	f.Add([]byte(`{}`), []byte(`{"input":[{"type":"message","role":"user","content":"Context checkpoint: summarise"}]}`))
	f.Add([]byte(`{}`), []byte(`{"instructions":"overall_correctness","input":[{"type":"message","role":"user","content":"MOCK:window=1 review"}]}`))
	f.Fuzz(func(t *testing.T, script, body []byte) {
		sc, err := ParseScript(script)
		if err != nil {
			sc = nil
		}
		s := New(Options{Script: sc})
		req := parseRequest(1, body)
		resp, answer := s.choose(req)
		if answer == "" {
			t.Fatal("no answer label")
		}
		if resp.Status != 0 && resp.Status != 200 {
			var e map[string]any
			if err := json.Unmarshal(errorBody(resp.Status, resp.Error, resp.RetryAfter), &e); err != nil {
				t.Fatalf("error body: %v", err)
			}
			return
		}
		for i, ev := range build(req, resp, "m", "resp_1", s) {
			data, err := json.Marshal(ev.data)
			if err != nil {
				t.Fatalf("event %d (%s): %v", i, ev.name, err)
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil || m["type"] != ev.name {
				t.Fatalf("event %d: %s (%v)", i, data, err)
			}
		}
	})
}
