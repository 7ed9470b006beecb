package store

import (
	"testing"

	"github.com/codexd/codexd/agent"
)

// Thread.TurnModel is the model of the settings the last turn recorded
// (Codex's previous turn settings): settings recorded outside a turn, as a
// resume's overrides are, change Settings but not it; a turn context
// without a turn id counts for the turn it falls in.
func TestTurnModelIsTheLastTurns(t *testing.T) {
	e := newEnv(t)
	id := testID(1)
	w, err := e.s.Create(bg, meta(id, 0))
	if err != nil {
		t.Fatal(err)
	}
	settings := func(n int, turn, model string) Record {
		return Record{Time: at(n), TurnID: turn, Event: agent.SettingsUpdated{Settings: agent.Settings{Model: model, Cwd: "/w"}}}
	}
	check := func(what, settingsModel, turnModel string) {
		t.Helper()
		th, err := e.s.Read(bg, id)
		if err != nil {
			t.Fatal(err)
		}
		if th.Settings.Model != settingsModel || th.TurnModel != turnModel {
			t.Fatalf("%s: settings' model %q, turn model %q; want %q, %q", what, th.Settings.Model, th.TurnModel, settingsModel, turnModel)
		}
	}
	t1 := turnRecords("t1", 10, "one")
	mustAppend(t, w, t1[0], t1[1], settings(11, "t1", "m1"))
	mustAppend(t, w, t1[2:]...)
	check("after a turn", "m1", "m1")
	mustAppend(t, w, settings(20, "", "m2"))
	check("after settings outside a turn", "m2", "m1")
	t2 := turnRecords("t2", 30, "two")
	mustAppend(t, w, t2[0], settings(30, "", "m3"))
	mustAppend(t, w, t2[1:]...)
	check("after a turn context without a turn id", "m3", "m3")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st, w2, err := e.s.Resume(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if st.TurnModel != "m3" {
		t.Fatalf("Resume: turn model %q, want m3", st.TurnModel)
	}
}
