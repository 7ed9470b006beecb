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

// TestOutputDeltaRuleTakesAgentDeltas: Codex 0.169 streams an agent
// command's output deltas for some commands and not for others (a CI run
// at b6a2235 saw none for `echo plain` and one for the `rm -r` after it,
// and failed exec-granular); codexd streams them for each. The deltas of
// the agent's commands are no defect either way; a user shell's deltas
// are still compared.
func TestOutputDeltaRuleTakesAgentDeltas(t *testing.T) {
	command := func(id, source string, deltas bool) []string {
		l := []string{`{"method":"item/started","params":{"threadId":"thread-1","item":{"type":"commandExecution","id":"` + id + `","source":"` + source + `"}}}`}
		if deltas {
			l = append(l, `{"method":"item/commandExecution/outputDelta","params":{"threadId":"thread-1","itemId":"`+id+`","delta":"out"}}`)
		}
		return append(l, `{"method":"item/completed","params":{"threadId":"thread-1","item":{"type":"commandExecution","id":"`+id+`","source":"`+source+`","aggregatedOutput":"out"}}}`)
	}
	obs := func(notes ...[]string) *appObservation {
		var l []map[string]any
		for _, n := range notes {
			for _, s := range n {
				l = append(l, decodeObs(t, s))
			}
		}
		return &appObservation{notes: map[string][]map[string]any{"A": l}, conns: []string{"A"}, vars: map[string]string{"T": "thread-1"}}
	}
	codex := obs(command("call_mock_1", "unifiedExecStartup", false), command("call_mock_2", "agent", true))
	codexd := obs(command("call_mock_1", "unifiedExecStartup", true), command("call_mock_2", "agent", true))
	for _, d := range appCompare(&appSession{name: "t"}, codex, codexd) {
		if d.defect {
			t.Errorf("agent deltas: %s is a defect after the rules: codex %s, codexd %s", d.item.where, canon(d.left.codex), canon(d.left.codexd))
		}
	}
	// A user shell's deltas that only one side sends still differ.
	codex = obs(command("shell-1", "userShell", true))
	codexd = obs(command("shell-1", "userShell", false))
	defects := 0
	for _, d := range appCompare(&appSession{name: "t"}, codex, codexd) {
		if d.defect {
			defects++
		}
	}
	if defects != 1 {
		t.Errorf("a user shell's missing deltas gave %d defects, want 1", defects)
	}
}

// TestRevertedPaths: [revert-reload] takes Codex's rollout generation
// (`…_<uuid>.jsonl`, a reverted thread's path) as codexd's path of the
// same rollout, wherever it is, and nothing else.
func TestRevertedPaths(t *testing.T) {
	gen := "<$H>/sessions/<day>/rollout-<time>-<$R>_<uuid>.jsonl"
	plain := "<$H>/sessions/<day>/rollout-<time>-<$R>.jsonl"
	other := "<$H>/sessions/<day>/rollout-<time>-<$F>.jsonl"
	codex := map[string]any{"result": map[string]any{"thread": map[string]any{"path": gen},
		"data": []any{map[string]any{"path": gen}, map[string]any{"path": gen}}}}
	codexd := map[string]any{"result": map[string]any{"thread": map[string]any{"path": plain},
		"data": []any{map[string]any{"path": plain}, map[string]any{"path": other}}}}
	got := canon(revertedPaths(codex, codexd))
	want := canon(map[string]any{"result": map[string]any{"thread": map[string]any{"path": plain},
		"data": []any{map[string]any{"path": plain}, map[string]any{"path": gen}}}})
	if got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}
