package appserver

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/jsonrpc"
)

// scenarioClient is what the equivalence scenario needs of a client.
type scenarioClient interface {
	do(method string, params any) (result jsontext.Value, err *wireErr)
	waitNote(method string) *wmsg
	waitRequest(method string) *wmsg
	answer(id jsontext.Value, result any)
	messages() []*wmsg
}

type jsonScenario struct{ c *jclient }

func (s jsonScenario) do(method string, params any) (jsontext.Value, *wireErr) {
	m := s.c.response(s.c.request(method, params))
	return m.Result, m.Error
}
func (s jsonScenario) waitNote(method string) *wmsg    { return s.c.note(method) }
func (s jsonScenario) waitRequest(method string) *wmsg { return s.c.serverRequest(method) }
func (s jsonScenario) answer(id jsontext.Value, result any) {
	b, _ := json.Marshal(result)
	s.c.send(`{"id":` + string(id) + `,"result":` + string(b) + `}`)
}
func (s jsonScenario) messages() []*wmsg { return s.c.logged() }

type inprocScenario struct{ c *iclient }

func (s inprocScenario) do(method string, params any) (jsontext.Value, *wireErr) {
	res, err := s.c.c.CallRaw(bg, method, params)
	if err != nil {
		var we *jsonrpc.Error
		if !errors.As(err, &we) {
			return nil, &wireErr{Code: 0, Message: err.Error()}
		}
		return nil, &wireErr{Code: we.Code, Message: we.Message, Data: we.Data}
	}
	b, jerr := json.Marshal(res)
	if jerr != nil {
		return nil, &wireErr{Message: jerr.Error()}
	}
	return b, nil
}
func (s inprocScenario) waitNote(method string) *wmsg    { return s.c.note(method) }
func (s inprocScenario) waitRequest(method string) *wmsg { return s.c.serverRequest(method) }
func (s inprocScenario) answer(id jsontext.Value, result any) {
	var rid jsonrpc.ID
	_ = json.Unmarshal(id, &rid)
	s.c.c.Respond(rid, result)
}
func (s inprocScenario) messages() []*wmsg { return s.c.logged() }

// scenario drives a client through most of the protocol and returns what
// it saw: every result or error, in order.
func scenario(t *testing.T, c scenarioClient) []string {
	var out []string
	rec := func(label string, res jsontext.Value, err *wireErr) {
		if err != nil {
			out = append(out, fmt.Sprintf("%s -> error %d %s %s", label, err.Code, err.Message, err.Data))
			return
		}
		if res == nil {
			t.Fatalf("%s: no result and no error", label)
		}
		out = append(out, label+" -> "+normalize(t, res))
	}
	do := func(label, method string, params any) jsontext.Value {
		res, err := c.do(method, params)
		rec(label, res, err)
		return res
	}
	do("initialize", appproto.MethodInitialize, appproto.InitializeParams{ClientInfo: appproto.ClientInfo{Name: "same", Version: "1"},
		Capabilities: &appproto.InitializeCapabilities{ExperimentalAPI: true}})
	started := do("thread/start", appproto.MethodThreadStart, appproto.ThreadStartParams{})
	var thread string
	_ = pointer(started, "/thread/id", &thread)
	c.waitNote("thread/started")
	do("turn/start", appproto.MethodTurnStart, appproto.TurnStartParams{ThreadID: thread, Input: []appproto.UserInput{appproto.TextInput("hello")}})
	c.waitNote("turn/completed")
	do("turn/start both", appproto.MethodTurnStart, appproto.TurnStartParams{ThreadID: thread, Input: []appproto.UserInput{appproto.TextInput("x")},
		Permissions: ptr(":workspace"), SandboxPolicy: &appproto.SandboxPolicy{Type: "readOnly"}})
	do("turn/steer idle", appproto.MethodTurnSteer, appproto.TurnSteerParams{ThreadID: thread, ExpectedTurnID: "x", Input: []appproto.UserInput{appproto.TextInput("y")}})
	do("thread/read", appproto.MethodThreadRead, appproto.ThreadReadParams{ThreadID: thread, IncludeTurns: true})
	do("thread/read bad id", appproto.MethodThreadRead, appproto.ThreadReadParams{ThreadID: "nope"})
	do("thread/list", appproto.MethodThreadList, appproto.ThreadListParams{})
	do("thread/loaded/list", appproto.MethodThreadLoadedList, appproto.ThreadLoadedListParams{})
	do("thread/turns/list", appproto.MethodThreadTurnsList, appproto.ThreadTurnsListParams{ThreadID: thread})
	do("thread/name/set", appproto.MethodThreadNameSet, appproto.ThreadSetNameParams{ThreadID: thread, Name: "named"})
	c.waitNote("thread/name/updated")
	do("model/list", appproto.MethodModelList, appproto.ModelListParams{})
	do("account/read", appproto.MethodAccountRead, appproto.GetAccountParams{})
	do("config/read", appproto.MethodConfigRead, appproto.ConfigReadParams{})
	do("configRequirements/read", appproto.MethodConfigRequirementsRead, appproto.NoParams{})
	do("skills/list", appproto.MethodSkillsList, appproto.SkillsListParams{Cwds: []string{"/w"}})
	do("permissionProfile/list", appproto.MethodPermissionProfileList, appproto.PermissionProfileListParams{})
	do("collaborationMode/list", appproto.MethodCollaborationModeList, appproto.CollaborationModeListParams{})
	do("unknown", "foo/bar", appproto.NoParams{})
	do("settings", appproto.MethodThreadSettingsUpdate, appproto.ThreadSettingsUpdateParams{ThreadID: thread, Model: ptr("other-model")})
	c.waitNote("thread/settings/updated")
	// An approval, answered.
	do("turn/start exec", appproto.MethodTurnStart, appproto.TurnStartParams{ThreadID: thread, Input: []appproto.UserInput{appproto.TextInput("run")}})
	req := c.waitRequest(approvalMethod)
	out = append(out, "request "+normalize(t, req.Params))
	c.answer(req.ID, appproto.CommandExecutionRequestApprovalResponse{Decision: appproto.CommandApprovalDecision{Decision: "accept"}})
	c.waitNote("serverRequest/resolved")
	c.waitNote("turn/completed")
	do("thread/unsubscribe", appproto.MethodThreadUnsubscribe, appproto.ThreadIDParams{ThreadID: thread})
	// Every notification, in order.
	for _, m := range c.messages() {
		if m.Method != "" {
			out = append(out, "message "+m.Method+" "+normalize(t, m.Params))
		}
	}
	return out
}

// timeKeys are the members whose values are clock readings (or, as the
// cursors and read-state revisions, made fresh each run).
var timeKeys = map[string]bool{"createdAt": true, "updatedAt": true, "recencyAt": true, "startedAt": true,
	"completedAt": true, "durationMs": true, "startedAtMs": true, "completedAtMs": true, "emittedAtMs": true,
	"backwardsCursor": true, "nextCursor": true, "revision": true}

func normalize(t *testing.T, v jsontext.Value) string {
	var x any
	if err := json.Unmarshal(v, &x); err != nil {
		t.Fatalf("normalize: %v: %q", err, v)
	}
	var walk func(any) any
	walk = func(x any) any {
		switch y := x.(type) {
		case map[string]any:
			for k, v := range y {
				if timeKeys[k] && v != nil {
					y[k] = "T"
				} else {
					y[k] = walk(v)
				}
			}
		case []any:
			for i := range y {
				y[i] = walk(y[i])
			}
		}
		return x
	}
	b, _ := json.Marshal(walk(x), json.Deterministic(true))
	return string(b)
}

// The in-process client and a JSON client get identical results and
// notifications from identical requests.
func TestInProcessMatchesJSON(t *testing.T) {
	run := func(inproc bool) []string {
		// One installation for both runs (remoteControl/status/changed).
		e := newEnv(t, agenttest.Options{}, Config{InstallationID: "0c0a8e8e-3f5e-4c39-9a4e-1f2d3c4b5a69"})
		first := true
		e.core.SetTurn(func(tn *agenttest.Turn) {
			if first {
				first = false
				agenttest.DefaultTurn(tn)
				return
			}
			agenttest.ExecScript("call_1", "echo hi")(tn)
		})
		if inproc {
			return scenario(t, inprocScenario{e.inproc("same")})
		}
		return scenario(t, jsonScenario{e.dial("same")})
	}
	viaJSON, viaGo := run(false), run(true)
	if !reflect.DeepEqual(viaJSON, viaGo) {
		for i := 0; i < max(len(viaJSON), len(viaGo)); i++ {
			var a, b string
			if i < len(viaJSON) {
				a = viaJSON[i]
			}
			if i < len(viaGo) {
				b = viaGo[i]
			}
			if a != b {
				t.Fatalf("first difference at %d:\n json: %s\n   go: %s", i, a, b)
			}
		}
	}
	if len(viaJSON) < 40 {
		t.Fatalf("scenario too short: %d entries", len(viaJSON))
	}
}
