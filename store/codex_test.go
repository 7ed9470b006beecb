package store

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/codexd/codexd/agent"
)

// Rollouts that Codex 0.169 wrote (testdata/codex-0.169, from `codex
// app-server` on the mock model, paths replaced by /work/project).
const (
	codexExecID  = "01a23639-2640-7b12-a377-4af894d0a8a2" // exec, hello, hello
	codexMixedID = "01a2363b-1dad-7841-bb3d-30275cca7bf2" // reason, patch, plan, fail, interrupt
)

// installCodexRollouts copies the Codex rollouts into home's sessions.
func installCodexRollouts(t *testing.T, home string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir("testdata/codex-0.169")
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{}
	for _, ent := range ents {
		b, err := os.ReadFile(filepath.Join("testdata/codex-0.169", ent.Name()))
		if err != nil {
			t.Fatal(err)
		}
		_, id, ok := parseRolloutName(ent.Name())
		if !ok {
			t.Fatalf("bad testdata name %s", ent.Name())
		}
		dir := filepath.Join(home, sessionsDir, "2026", "12", "02")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		paths[id] = filepath.Join(dir, ent.Name())
		if err := os.WriteFile(paths[id], b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return paths
}

func TestCodexRolloutsAreListedAndRead(t *testing.T) {
	e := newEnv(t)
	installCodexRollouts(t, e.home)
	e.reopen()
	p, err := e.s.List(bg, agent.ThreadQuery{})
	if err != nil || len(p.Threads) != 2 {
		t.Fatalf("listed %+v, %v", p.Threads, err)
	}
	th, err := e.s.Read(bg, codexExecID)
	if err != nil {
		t.Fatal(err)
	}
	in := th.Info
	if in.Preview != "MOCK:exec echo hi" || in.Model != "gpt-5.5" || in.ModelProvider != "mockhttp" ||
		in.Cwd != "/work/project/work" || in.Source != "vscode" || in.CliVersion != "0.169.0" || in.Originator != "reqdiff" {
		t.Fatalf("info %+v", in)
	}
	// The third turn ran read-only (the latest turn_context).
	if th.Settings.Approval != agent.ApprovalNever || th.Settings.Sandbox.Mode != agent.SandboxReadOnly || th.Settings.ModelProvider != "mockhttp" {
		t.Fatalf("settings %+v", th.Settings)
	}
	if th.Meta.BaseInstructions == nil || !strings.HasPrefix(*th.Meta.BaseInstructions, "You are Codex") {
		t.Fatalf("base instructions %v", th.Meta.BaseInstructions)
	}
	if len(th.Turns) != 3 || th.Skipped != 0 {
		t.Fatalf("%d turns, %d skipped", len(th.Turns), th.Skipped)
	}
	t1 := th.Turns[0]
	if t1.Status != agent.TurnStatusCompleted || len(t1.Items) != 3 {
		t.Fatalf("turn 1: %s %d items", t1.Status, len(t1.Items))
	}
	ce, ok := t1.Items[1].(*agent.CommandExecution)
	if !ok || ce.Command != "/bin/bash -lc 'echo hi'" || ce.Cwd != "/work/project/work" || ce.Output == nil || *ce.Output != "hi\n" ||
		ce.ExitCode == nil || *ce.ExitCode != 0 || ce.Source != "unifiedExecStartup" || ce.Status != agent.ItemStatusCompleted ||
		len(ce.Actions) != 1 || ce.Actions[0].Type != "unknown" || ce.Duration.Milliseconds() != 234 {
		t.Fatalf("command %#v", t1.Items[1])
	}
	if am, ok := t1.Items[2].(*agent.AgentMessage); !ok || !strings.HasPrefix(am.Text, "I ran `echo hi`") {
		t.Fatalf("answer %#v", t1.Items[2])
	}
	if tm := t1.ItemTimes[ce.ID]; tm.Started.UnixMilli() != 1796206045407 || tm.Completed.UnixMilli() != 1796206045642 {
		t.Fatalf("item times %+v", tm)
	}
	if len(th.History) != 12 || th.Usage == nil || th.Usage.Total.Total == 0 {
		t.Fatalf("%d history items, usage %+v", len(th.History), th.Usage)
	}

	th, err = e.s.Read(bg, codexMixedID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tu := range th.Turns {
		kinds := string(tu.Status) + ":"
		for _, it := range tu.Items {
			kinds += strings.TrimPrefix(strings.TrimPrefix(typeName(it), "*agent."), "agent.") + ","
		}
		got = append(got, kinds)
	}
	want := []string{
		"completed:UserMessage,Reasoning,AgentMessage,", "completed:UserMessage,AgentMessage,",
		"completed:UserMessage,AgentMessage,", "failed:UserMessage,", "interrupted:UserMessage,",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("turns\n got %v\nwant %v", got, want)
	}
	if f := th.Turns[3].Error; f == nil || !strings.Contains(f.Message, "failed on purpose") || f.Info != "other" {
		t.Fatalf("failed turn's error %+v", f)
	}
	if r := th.Turns[0].Items[1].(*agent.Reasoning); len(r.Summary) != 2 {
		t.Fatalf("reasoning %+v", r)
	}
}

// TestCodexRolloutsResumeAndContinue: a Codex rollout resumed by codexd
// takes codexd's appends in Codex's format, numbered on from Codex's last
// ordinal, and reads back whole.
func TestCodexRolloutsResumeAndContinue(t *testing.T) {
	e := newEnv(t)
	paths := installCodexRollouts(t, e.home)
	e.reopen()
	th, w, err := e.s.Resume(bg, codexExecID)
	if err != nil {
		t.Fatal(err)
	}
	if len(th.Turns) != 3 {
		t.Fatalf("%d turns", len(th.Turns))
	}
	if err := w.Append(turnRecords("t4", 200, "fourth")...); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(paths[codexExecID])
	if err != nil {
		t.Fatal(err)
	}
	ls := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	var last entry
	for i, l := range ls {
		en, err := decodeLine([]byte(l))
		if err != nil && i > 0 {
			continue
		}
		if en.Ordinal != int64(i) {
			t.Fatalf("line %d has ordinal %d: %s", i, en.Ordinal, l)
		}
		last = en
	}
	if last.Legacy {
		t.Fatal("appended in the legacy format")
	}
	e.reopen()
	th, err = e.s.Read(bg, codexExecID)
	if err != nil || len(th.Turns) != 4 || th.Turns[3].ID != "t4" || th.Turns[3].Status != agent.TurnStatusCompleted {
		t.Fatalf("after the append: %v %+v", err, th)
	}
}

func typeName(it agent.Item) string { return reflect.TypeOf(it).String() }

// TestTurnLinesFeedCodexProjection: Codex 0.169's history projection
// (thread_history_1.sqlite) takes a turn's startedAt from task_complete's
// started_at and its rootTurnId from root_turn_id; codexd's lines once
// carried neither, and Codex showed codexd's turns without a start or a
// root. A turn read back keeps the duration its task_complete recorded
// (Codex's times are whole seconds, its duration_ms is not).
func TestTurnLinesFeedCodexProjection(t *testing.T) {
	m := meta(testID(1), 0)
	recs := turnRecords("t1", 1000, "hi")
	recs[4].Event = agent.TurnCompleted{Status: agent.TurnStatusCompleted, CompletedAt: at(1004), Duration: 1500 * time.Millisecond}
	ls := lines(t, m, recs...)
	var started, complete map[string]any
	for _, l := range ls {
		var v struct {
			Payload map[string]any `json:"payload"`
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatal(err)
		}
		switch v.Payload["type"] {
		case "task_started":
			started = v.Payload
		case "task_complete":
			complete = v.Payload
		}
	}
	if started["root_turn_id"] != "t1" || complete["root_turn_id"] != "t1" {
		t.Errorf("root_turn_id: task_started %v, task_complete %v", started["root_turn_id"], complete["root_turn_id"])
	}
	if want := float64(at(1004).Add(-1500 * time.Millisecond).Unix()); complete["started_at"] != want || complete["duration_ms"] != 1500.0 {
		t.Errorf("task_complete started_at %v duration_ms %v, want %v and 1500", complete["started_at"], complete["duration_ms"], want)
	}

	e := newEnv(t)
	installCodexRollouts(t, e.home)
	e.reopen()
	th, err := e.s.Read(bg, codexExecID)
	if err != nil {
		t.Fatal(err)
	}
	if d := th.Turns[0].Duration; d <= 0 || d%time.Millisecond != 0 {
		t.Errorf("Codex's first turn read back with duration %v, want its duration_ms", d)
	}
}
