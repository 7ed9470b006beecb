//go:build linux

package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/codexd/codexd/mockmodel"
)

// TestRulesThatLast: "always allow" outlives the thread, and Codex's rules
// hold in codexd, on one CODEX_HOME with the real Codex 0.169.
//
//  1. In codexd, the model asks to run a command outside the sandbox; the
//     user accepts it with an exec-policy amendment. The rule goes to
//     rules/default.rules in Codex's syntax.
//  2. The same command, in a new thread of the same codexd, in a new codexd
//     process, and in Codex, runs without asking.
//  3. A rule a Codex user wrote that forbids a command: codexd refuses it
//     and tells the model exactly what Codex tells it.
func TestRulesThatLast(t *testing.T) {
	codex, codexd, ok := oneHomeBins(t, "TestRulesThatLast")
	if !ok {
		return
	}
	model := mockmodel.New(mockmodel.Options{})
	url, err := model.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { model.Close() })
	home, work := t.TempDir(), t.TempDir()
	config := strings.Replace(twoWayConfig(url), `approval_policy = "never"`, `approval_policy = "on-request"`, 1)
	config = strings.Replace(config, `sandbox_mode = "danger-full-access"`, `sandbox_mode = "workspace-write"`, 1)
	writeFile(t, filepath.Join(home, "config.toml"), config)
	mkdir(t, home, "rules")
	writeFile(t, filepath.Join(home, "rules", "mine.rules"),
		"# written by a Codex user\nprefix_rule(pattern=[\"touch\", \"forbidden-file\"], decision=\"forbidden\", justification=\"not that file\")\n"+
			"prefix_rule(pattern=[\"touch\", \"blocked-file\"], decision=\"forbidden\")\n"+
			"prefix_rule(pattern=[\"touch\", \"asked-file\"], decision=\"prompt\")\n")

	prefix := []string{"touch", "amended-file"}
	run := func(n int) string { return fmt.Sprintf("MOCK:escalate touch amended-file run%d", n) }

	// 1. codexd asks once; the answer carries the amendment.
	var mu sync.Mutex
	var asked []map[string]any
	answer := func(m map[string]any) any {
		mu.Lock()
		asked = append(asked, m)
		mu.Unlock()
		return map[string]any{"decision": map[string]any{
			"acceptWithExecpolicyAmendment": map[string]any{"execpolicy_amendment": prefix},
		}}
	}
	app := startTwoWayApp(t, "codexd", codexd, home, work)
	app.onRequest = answer
	newThread := func(a *twoWayApp) string {
		res := a.call(t, "thread/start", map[string]any{"cwd": work})
		id, _ := lookupPath(res, "thread.id")
		s, _ := id.(string)
		return s
	}
	app.runPrompt(t, newThread(app), run(1))
	mu.Lock()
	if len(asked) != 1 {
		t.Fatalf("codexd asked %d times for the first run, want once: %v", len(asked), asked)
	}
	if am, _ := lookupPath(asked[0], "params.proposedExecpolicyAmendment"); am == nil {
		t.Errorf("codexd's approval request proposed no amendment: %v", asked[0])
	}
	asked = nil
	mu.Unlock()
	b, err := os.ReadFile(filepath.Join(home, "rules", "default.rules"))
	if want := `prefix_rule(pattern=["touch", "amended-file"], decision="allow")`; err != nil || !strings.Contains(string(b), want+"\n") {
		t.Fatalf("rules/default.rules is %q (%v), want the line %s", b, err, want)
	}

	// 2. No more asking: a new thread, a new codexd, and Codex.
	never := func(who string) func(m map[string]any) any {
		return func(m map[string]any) any {
			t.Errorf("%s asked again, for an allowed command: %v", who, m)
			return map[string]any{"decision": "decline"}
		}
	}
	app.onRequest = never("codexd (a new thread)")
	app.runPrompt(t, newThread(app), run(2))
	app.stop(t)
	app = startTwoWayApp(t, "codexd", codexd, home, work)
	app.onRequest = never("codexd (after a restart)")
	app.runPrompt(t, newThread(app), run(3))
	app.stop(t)
	cx := startTwoWayApp(t, "codex", codex, home, work)
	cx.onRequest = never("Codex")
	cx.runPrompt(t, newThread(cx), run(4))
	for n := 1; n <= 4; n++ {
		if _, err := os.Stat(filepath.Join(work, fmt.Sprintf("run%d", n))); err != nil {
			t.Errorf("run %d of the allowed command did not run: %v", n, err)
		}
	}

	// 3. Forbidden, in Codex and in codexd: the same refusal.
	forbidden := []string{"MOCK:exec touch forbidden-file", "MOCK:exec touch blocked-file"}
	var outs [2][]string
	for i, side := range []*twoWayApp{cx, nil} {
		if side == nil {
			side = startTwoWayApp(t, "codexd", codexd, home, work)
			side.onRequest = never("codexd (forbidden)")
		}
		for _, p := range forbidden {
			before := len(model.Requests())
			side.runPrompt(t, newThread(side), p)
			outs[i] = append(outs[i], lastToolOutput(t, model, before))
		}
		side.stop(t)
	}

	// 4. A rule that asks: both sides ask alike (Codex's reason, no
	// amendment to offer), and a declined command does not run.
	var asks [2]map[string]any
	for i, side := range []struct{ name, bin string }{{"codex", codex}, {"codexd", codexd}} {
		app := startTwoWayApp(t, side.name, side.bin, home, work)
		app.onRequest = func(m map[string]any) any {
			p, _ := m["params"].(map[string]any)
			asks[i] = map[string]any{"method": m["method"], "reason": p["reason"], "command": p["command"],
				"amendment": p["proposedExecpolicyAmendment"], "decisions": p["availableDecisions"]}
			return map[string]any{"decision": "decline"}
		}
		app.runPrompt(t, newThread(app), "MOCK:exec touch asked-file")
		app.stop(t)
	}
	t.Logf("a prompt rule's approval request: %v", asks[0])
	if a, b := fmt.Sprint(asks[0]), fmt.Sprint(asks[1]); asks[0] == nil || a != b {
		t.Errorf("a prompt rule's approval request:\n Codex  %s\n codexd %s", a, b)
	}
	if _, err := os.Stat(filepath.Join(work, "asked-file")); err == nil {
		t.Error("the declined command ran")
	}

	for i, p := range forbidden {
		if outs[0][i] != outs[1][i] || !strings.Contains(outs[1][i], "rejected: ") {
			t.Errorf("%q: codexd told the model\n  %q\nCodex told it\n  %q", p, outs[1][i], outs[0][i])
		}
	}
	for _, f := range []string{"forbidden-file", "blocked-file"} {
		if _, err := os.Stat(filepath.Join(work, f)); err == nil {
			t.Errorf("the forbidden command ran: %s exists", f)
		}
	}
}

// lastToolOutput is the last function_call_output the model got in the
// requests after the first `before`.
func lastToolOutput(t *testing.T, model *mockmodel.Server, before int) string {
	t.Helper()
	out := ""
	for _, ex := range model.Requests()[before:] {
		var req struct {
			Input []struct {
				Type   string          `json:"type"`
				Output json.RawMessage `json:"output"`
			} `json:"input"`
		}
		if json.Unmarshal(ex.Body, &req) != nil {
			continue
		}
		for _, it := range req.Input {
			if it.Type == "function_call_output" {
				var s string
				if json.Unmarshal(it.Output, &s) != nil {
					s = string(it.Output)
				}
				out = s
			}
		}
	}
	if out == "" {
		t.Errorf("the model got no tool output after request %d", before)
	}
	return out
}
