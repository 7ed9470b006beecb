package appserver

import (
	"strings"
	"testing"

	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/jsonrpc"
)

// Two clients both use id 1 (and then 2): each answer goes to the
// connection that asked, as in Codex's two-WebSocket capture.
func TestRequestIDsScopedPerConnection(t *testing.T) {
	e := newEnv(t, agenttest.Options{}, Config{})
	a, b := e.dial("client_a"), e.dial("client_b")
	a.requestID("1", appproto.MethodInitialize, map[string]any{"clientInfo": map[string]any{"name": "client_a", "version": "1"}})
	b.requestID("1", appproto.MethodInitialize, map[string]any{"clientInfo": map[string]any{"name": "client_b", "version": "1"}})
	ra, rb := a.response("1"), b.response("1")
	if ra.Error != nil || rb.Error != nil {
		t.Fatalf("initialize: %s / %s", ra, rb)
	}
	// Codex's originator is process-wide: the first client's name heads
	// both user agents, each ending with its own client.
	ua, ub := ra.str(t, "/userAgent"), rb.str(t, "/userAgent")
	if !strings.HasSuffix(ua, "(client_a; 1)") || !strings.HasSuffix(ub, "(client_b; 1)") ||
		strings.SplitN(ua, "/", 2)[0] != strings.SplitN(ub, "/", 2)[0] {
		t.Fatalf("user agents %q and %q", ua, ub)
	}
	a.requestID("2", appproto.MethodThreadStart, map[string]any{})
	b.requestID("2", appproto.MethodThreadLoadedList, map[string]any{})
	threadResp := a.response("2")
	loaded := b.response("2")
	if threadResp.Error != nil || loaded.Error != nil {
		t.Fatalf("%s / %s", threadResp, loaded)
	}
	if threadResp.str(t, "/thread/id") == "" {
		t.Fatalf("A got %s", threadResp)
	}
	if string(loaded.Result) == string(threadResp.Result) || strings.Contains(string(loaded.Result), `"thread"`) {
		t.Fatalf("B got A's answer: %s", loaded)
	}
	// The same id in flight on both connections at once.
	a.requestID("7", appproto.MethodModelList, map[string]any{})
	b.requestID("7", appproto.MethodAccountRead, map[string]any{})
	if m := a.response("7"); !strings.Contains(string(m.Result), `"data"`) {
		t.Fatalf("A's 7: %s", m)
	}
	if m := b.response("7"); !strings.Contains(string(m.Result), `"requiresOpenaiAuth"`) {
		t.Fatalf("B's 7: %s", m)
	}
	// Ids keep their type: "5" and 5 are different requests.
	a.requestID(`"5"`, appproto.MethodThreadLoadedList, map[string]any{})
	a.requestID(`5`, appproto.MethodThreadLoadedList, map[string]any{})
	a.response(`"5"`)
	a.response(`5`)
}

// A line that is not a message is logged and skipped: no answer, and the
// connection goes on (Codex answers nothing either).
func TestMalformedLineSkipped(t *testing.T) {
	e := newEnv(t, agenttest.Options{}, Config{})
	c := e.dial("malformed")
	c.initialize(nil)
	for _, line := range []string{"not json", "{", "   ", `[{"method":"thread/list","id":1,"params":{}}]`,
		`{"method":"thread/list","id":21.5,"params":{}}`, `{"method":"thread/list","id":null,"params":{}}`,
		`{"id":1,"method":"thread/list","params":{},"id":2}`} {
		c.send(line)
	}
	c.barrier()
	for _, m := range c.logged() {
		if m.Method == "" && (string(m.ID) == "null" || string(m.ID) == "-1" || m.ID == nil) {
			t.Fatalf("answered a malformed line: %s", m)
		}
	}
	// The connection still serves.
	c.startThread(nil)
}

// Requests before initialize get "Not initialized"; initialize twice gets
// "Already initialized"; notifications from the client are ignored.
func TestInitializeRules(t *testing.T) {
	e := newEnv(t, agenttest.Options{}, Config{})
	c := e.dial("rules")
	c.send(`{"method":"initialized"}`) // before initialize: ignored
	if err := c.callErr(appproto.MethodThreadList, map[string]any{}); err.Code != -32600 || err.Message != "Not initialized" {
		t.Fatalf("before initialize: %+v", err)
	}
	if err := c.callErr(appproto.MethodInitialize, map[string]any{"clientInfo": map[string]any{"name": "x"}}); err.Message != "Invalid request: missing field `version`" {
		t.Fatalf("missing version: %+v", err)
	}
	if err := c.callErr(appproto.MethodInitialize, map[string]any{}); err.Message != "Invalid request: missing field `clientInfo`" {
		t.Fatalf("empty initialize: %+v", err)
	}
	if err := c.callErr(appproto.MethodInitialize, map[string]any{"clientInfo": map[string]any{"name": "bad\r\nname", "version": "1"}}); err.Message !=
		"Invalid clientInfo.name: 'bad\r\nname'. Must be a valid HTTP header value." {
		t.Fatalf("bad name: %+v", err)
	}
	init := c.initialize(map[string]any{"experimentalApi": false})
	if init.str(t, "/platformFamily") != "unix" || init.str(t, "/platformOs") != "linux" {
		t.Fatalf("initialize: %s", init)
	}
	c.send(`{"method":"initialized"}`)
	c.send(`{"method":"some/unknownNotification","params":{}}`)
	if err := c.callErr(appproto.MethodInitialize, map[string]any{"clientInfo": map[string]any{"name": "rules", "version": "1"}}); err.Message != "Already initialized" {
		t.Fatalf("second initialize: %+v", err)
	}
	// Unknown methods get Codex's message, with the whole list.
	err := c.callErr("foo/bar", map[string]any{})
	if err.Code != -32600 || !strings.HasPrefix(err.Message, "Invalid request: unknown variant `foo/bar`, expected one of `initialize`, `server/diagnostics`, ") {
		t.Fatalf("unknown method: %+v", err)
	}
	// Experimental methods and fields need the capability.
	if err := c.callErr("thread/memoryMode/set", map[string]any{"threadId": "x", "mode": "enabled"}); err.Message != "thread/memoryMode/set requires experimentalApi capability" {
		t.Fatalf("experimental method: %+v", err)
	}
	if err := c.callErr(appproto.MethodThreadStart, map[string]any{"dynamicTools": []any{}}); err.Message != "thread/start.dynamicTools requires experimentalApi capability" {
		t.Fatalf("experimental field: %+v", err)
	}
	if err := c.callErr(appproto.MethodThreadSettingsUpdate, map[string]any{"threadId": "x"}); err.Message != "thread/settings/update requires experimentalApi capability" {
		t.Fatalf("experimental thread/settings/update: %+v", err)
	}
	if err := c.callErr(appproto.MethodThreadStart, map[string]any{"approvalPolicy": map[string]any{"granular": map[string]any{"rules": true}}}); err.Message != "askForApproval.granular requires experimentalApi capability" {
		t.Fatalf("granular approval: %+v", err)
	}
	// A method of Codex's that codexd does not implement: a clear -32601.
	if err := c.callErr("hooks/list", map[string]any{}); err.Code != -32601 || err.Message != "`hooks/list` is not supported by codexd" {
		t.Fatalf("unimplemented: %+v", err)
	}
	// Decoding errors, in Codex's words.
	if err := c.callErr(appproto.MethodThreadStart, map[string]any{"approvalPolicy": 5}); err.Message != "Invalid request: invalid type: integer `5`, expected string or map" {
		t.Fatalf("bad approval: %+v", err)
	}
	if err := c.callErr(appproto.MethodTurnStart, map[string]any{"input": []any{}}); err.Message != "Invalid request: missing field `threadId`" {
		t.Fatalf("turn/start without threadId: %+v", err)
	}
	if err := c.callErr(appproto.MethodThreadRead, nil); err.Message != "Invalid request: missing field `params`" {
		t.Fatalf("thread/read without params: %+v", err)
	}
	if err := c.callErr(appproto.MethodTurnStart, map[string]any{"threadId": "nope", "input": text("x")}); err.Message !=
		"invalid thread id: invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `n` at 1" {
		t.Fatalf("bad thread id: %+v", err)
	}
	if err := c.callErr(appproto.MethodThreadRead, map[string]any{"threadId": "00000000-0000-0000-0000-000000000000"}); err.Message != "thread not loaded: 00000000-0000-0000-0000-000000000000" {
		t.Fatalf("thread/read unknown: %+v", err)
	}
}

// Past the inbound limit a request gets -32001 at once, and the
// connection recovers when the requests in flight end.
func TestOverloaded(t *testing.T) {
	core := newGatedCore(agenttest.Options{})
	gate := agenttest.NewGate()
	core.startGate = gate
	e := newEnvWith(t, core, Config{MaxInbound: 2})
	c := e.dial("busy")
	c.initialize(nil)
	first := c.request(appproto.MethodThreadStart, map[string]any{})
	second := c.request(appproto.MethodThreadStart, map[string]any{})
	<-core.started
	<-core.started // both handlers are in the core, holding their slots
	if err := c.callErr(appproto.MethodThreadLoadedList, map[string]any{}); err.Code != jsonrpc.CodeOverloaded || err.Message != "Server overloaded; retry later." {
		t.Fatalf("third request: %+v", err)
	}
	gate.Open()
	c.response(first)
	c.response(second)
	c.barrier()
}

// The in-process client is overloaded the same way.
func TestOverloadedInProcess(t *testing.T) {
	core := newGatedCore(agenttest.Options{})
	gate := agenttest.NewGate()
	core.startGate = gate
	e := newEnvWith(t, core, Config{MaxInbound: 1})
	c := e.inproc("busy")
	c.initialize()
	done := make(chan error, 1)
	go func() {
		_, err := Call(bg, c.c, appproto.ThreadStart, appproto.ThreadStartParams{})
		done <- err
	}()
	<-core.started
	_, err := Call(bg, c.c, appproto.ThreadLoadedList, appproto.ThreadLoadedListParams{})
	if we, ok := err.(*jsonrpc.Error); !ok || we.Code != jsonrpc.CodeOverloaded {
		t.Fatalf("second call: %v", err)
	}
	gate.Open()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Every method of Codex's schema that codexd does not serve gets a clear
// -32601 that names it: no crash, no silence, whatever the params.
func TestEveryUnsupportedMethodAnswers(t *testing.T) {
	e := newEnv(t, agenttest.Options{}, Config{})
	c := e.dial("all-methods")
	c.initialize(map[string]any{"experimentalApi": true})
	n := 0
	for _, m := range appproto.ClientMethods {
		if e.srv.handlers[m] != nil {
			continue
		}
		n++
		for _, params := range []any{map[string]any{}, nil, []any{1}} {
			id := c.request(m, params)
			r := c.response(id)
			if r.Error == nil || r.Error.Code != jsonrpc.CodeMethodNotFound || r.Error.Message != "`"+m+"` is not supported by codexd" {
				t.Errorf("%s %v: %s", m, params, r)
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d unsupported methods: the list is wrong", n)
	}
	c.barrier()
}
