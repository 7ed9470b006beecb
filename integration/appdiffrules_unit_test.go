//go:build linux

package integration

import (
	"bytes"
	"encoding/json"
	"testing"
)

// decodeObs decodes a JSON text as the runner does (numbers kept exact).
func decodeObs(t *testing.T, text string) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader([]byte(text)))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestEmptyTurnRuleTakesCodexsTurn: Codex answers a turn/start of an empty
// input with a turn, and whether that turn's start (and end) reach the
// client before the session ends is a matter of timing: a CI run at
// 7cafeba saw them and failed turn-hello. codexd refuses the input, which
// [empty-turn-input] accounts for, so Codex's notifications of that turn,
// bound as $EMPTY, are no defect whenever they come.
func TestEmptyTurnRuleTakesCodexsTurn(t *testing.T) {
	const thread, turn = "thread-1", "turn-empty"
	ask := `{"id":11,"method":"turn/start","params":{"threadId":"thread-1","input":[]}}`
	notes := func(extra ...string) []map[string]any {
		l := []map[string]any{decodeObs(t, `{"method":"thread/started","params":{"thread":{"id":"thread-1"}}}`)}
		for _, e := range extra {
			l = append(l, decodeObs(t, e))
		}
		return l
	}
	started := []string{
		`{"method":"thread/status/changed","params":{"threadId":"thread-1","status":{"type":"active","activeFlags":[]}}}`,
		`{"method":"turn/started","params":{"threadId":"thread-1","turn":{"id":"turn-empty","status":"inProgress"}}}`,
	}
	completed := append(started,
		`{"method":"thread/status/changed","params":{"threadId":"thread-1","status":{"type":"idle"}}}`,
		`{"method":"turn/completed","params":{"threadId":"thread-1","turn":{"id":"turn-empty","status":"completed"}}}`)
	for name, codexNotes := range map[string][]map[string]any{
		"not yet shown": notes(),
		"started":       notes(started...),
		"completed":     notes(completed...),
	} {
		codex := &appObservation{
			steps: []appStepObs{{line: 13, conn: "A", desc: ask, method: "turn/start",
				msgs: []any{decodeObs(t, `{"id":11,"result":{"turn":{"id":"turn-empty","status":"inProgress"}}}`)}}},
			notes: map[string][]map[string]any{"A": codexNotes},
			conns: []string{"A"},
			vars:  map[string]string{"T": thread, "EMPTY": turn},
		}
		codexd := &appObservation{
			steps: []appStepObs{{line: 13, conn: "A", desc: ask, method: "turn/start",
				msgs: []any{decodeObs(t, `{"id":11,"error":{"code":-32603,"message":"failed to submit turn input: EmptyInput"}}`)}}},
			notes: map[string][]map[string]any{"A": notes()},
			conns: []string{"A"},
			vars:  map[string]string{"T": thread},
		}
		for _, d := range appCompare(&appSession{name: "t"}, codex, codexd) {
			if d.defect {
				t.Errorf("%s: %s is a defect after the rules: codex %s, codexd %s", name, d.item.where, canon(d.left.codex), canon(d.left.codexd))
			}
		}
	}
}
