package appproto

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/jsonrpc"
)

// Messages recorded from Codex 0.169 (see app-server-observed.md and the
// captures the tests were written from).
func TestParseThreadIDMatchesCodex(t *testing.T) {
	cases := []struct{ in, want, err string }{
		{"nope", "", "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `n` at 1"},
		{"abc", "", "invalid length: expected length 32 for simple format, found 3"},
		{"", "", "invalid length: expected length 32 for simple format, found 0"},
		{"00000000-0000-0000-0000-00000000000", "", "invalid group length in group 4: expected 12, found 11"},
		{"000000000000000000000000000000000", "", "invalid length: expected length 32 for simple format, found 33"},
		{"00000000-0000-0000-0000-0000000000000", "", "invalid group length in group 4: expected 12, found 13"},
		{"urn:uuid:00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000", ""},
		{"00000000000000000000000000000000", "00000000-0000-0000-0000-000000000000", ""},
		{"00000000-00000-000-0000-000000000000", "", "invalid group length in group 1: expected 4, found 5"},
		{"{00000000-0000-0000-0000-000000000000}", "00000000-0000-0000-0000-000000000000", ""},
		{"0000000g-0000-0000-0000-000000000000", "", "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `g` at 8"},
		{"00000000-0000-0000-0000-00000000000g", "", "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `g` at 36"},
		{"0000000-00000-0000-0000-000000000000", "", "invalid group length in group 0: expected 8, found 7"},
		{"ABCDEF00-0000-0000-0000-000000000000", "abcdef00-0000-0000-0000-000000000000", ""},
		{"00000000_0000-0000-0000-000000000000", "", "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `_` at 9"},
		{"é", "", "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `é` at 1"},
		{"$THREAD", "", "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `$` at 1"},
	}
	for _, c := range cases {
		got, err := ParseThreadID(c.in)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("ParseThreadID(%q) error = %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseThreadID(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func decodeErr[P any](t *testing.T, method, raw string) *jsonrpc.Error {
	t.Helper()
	var r jsontext.Value
	if raw != "" {
		r = jsontext.Value(raw)
	}
	_, err := DecodeParams[P](method, r)
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		t.Fatalf("%s %s: error %v is not a *jsonrpc.Error", method, raw, err)
	}
	return we
}

func TestDecodeParamsErrorsMatchCodex(t *testing.T) {
	cases := []struct {
		name string
		got  *jsonrpc.Error
		code int64
		msg  string
	}{
		{"no params", decodeErr[ThreadListParams](t, MethodThreadList, ""), -32600, "Invalid request: missing field `params`"},
		{"null params", decodeErr[ThreadReadParams](t, MethodThreadRead, "null"), -32600, "Invalid request: missing field `params`"},
		{"missing threadId", decodeErr[TurnStartParams](t, MethodTurnStart, `{"input":[]}`), -32600, "Invalid request: missing field `threadId`"},
		{"nested missing text", decodeErr[TurnStartParams](t, MethodTurnStart, `{"threadId":"x","input":[{"type":"text"}]}`), -32600, "Invalid request: missing field `text`"},
		{"unknown input", decodeErr[TurnStartParams](t, MethodTurnStart, `{"threadId":"x","input":[{"type":"bogus"}]}`), -32600,
			"Invalid request: unknown variant `bogus`, expected one of `text`, `image`, `localImage`, `audio`, `localAudio`, `skill`, `mention`"},
		{"approval integer", decodeErr[ThreadStartParams](t, MethodThreadStart, `{"approvalPolicy":5}`), -32600, "Invalid request: invalid type: integer `5`, expected string or map"},
		{"approval on-failure", decodeErr[ThreadStartParams](t, MethodThreadStart, `{"approvalPolicy":"on-failure"}`), -32600,
			"Invalid request: unknown variant `on-failure`, expected one of `untrusted`, `on-request`, `granular`, `never`"},
		{"threadId integer", decodeErr[ThreadReadParams](t, MethodThreadRead, `{"threadId":5}`), -32600, "Invalid request: invalid type: integer `5`, expected a string"},
		{"string params", decodeErr[ThreadStartParams](t, MethodThreadStart, `"x"`), -32600, `Invalid request: invalid type: string "x", expected struct ThreadStartParams`},
		{"unit with members", decodeErr[NoParams](t, MethodConfigRequirementsRead, `{"x":1}`), -32600, "Invalid request: invalid type: map, expected unit"},
		{"initialize missing version", decodeErr[InitializeParams](t, MethodInitialize, `{"clientInfo":{"name":"x"}}`), -32600, "Invalid request: missing field `version`"},
		{"initialize empty", decodeErr[InitializeParams](t, MethodInitialize, `{}`), -32600, "Invalid request: missing field `clientInfo`"},
		{"permissionProfile", decodeErr[TurnStartParams](t, MethodTurnStart, `{"threadId":"x","input":[],"permissionProfile":"x"}`), -32602,
			"`permissionProfile` is no longer supported for `turn/start`; use `permissions` with a named profile id instead"},
	}
	for _, c := range cases {
		if c.got.Code != c.code || c.got.Message != c.msg {
			t.Errorf("%s: got %d %q, want %d %q", c.name, c.got.Code, c.got.Message, c.code, c.msg)
		}
	}
	if _, err := DecodeParams[NoParams](MethodConfigRequirementsRead, nil); err != nil {
		t.Errorf("no params for a unit method: %v", err)
	}
	if _, err := DecodeParams[NoParams](MethodConfigRequirementsRead, jsontext.Value("{ }")); err != nil {
		t.Errorf("{} for a unit method: %v", err)
	}
	p, err := DecodeParams[ThreadListParams](MethodThreadList, jsontext.Value(`{"unknownMember":1}`))
	if err != nil || p.Cursor != nil {
		t.Errorf("unknown members must be ignored: %+v %v", p, err)
	}
}

func TestUnknownMethodMessage(t *testing.T) {
	msg := UnknownMethodMessage("foo/bar")
	if !strings.HasPrefix(msg, "unknown variant `foo/bar`, expected one of `initialize`, `server/diagnostics`, ") ||
		!strings.HasSuffix(msg, "`fuzzyFileSearch/sessionUpdate`, `fuzzyFileSearch/sessionStop`") {
		t.Fatalf("message: %s", msg)
	}
	if len(ClientMethods) != 187 {
		t.Fatalf("Codex 0.169 names 187 methods, have %d", len(ClientMethods))
	}
}

func TestExperimentalReason(t *testing.T) {
	cases := []struct {
		method string
		params any
		want   string
	}{
		{"thread/memoryMode/set", nil, "thread/memoryMode/set"},
		{"collaborationMode/list", CollaborationModeListParams{}, "collaborationMode/list"},
		{MethodThreadStart, ThreadStartParams{DynamicTools: jsontext.Value("[]")}, "thread/start.dynamicTools"},
		{MethodThreadStart, ThreadStartParams{DynamicTools: jsontext.Value("null")}, ""},
		{MethodThreadStart, &ThreadStartParams{ApprovalPolicy: &AskForApproval{Granular: jsontext.Value("{}")}}, "askForApproval.granular"},
		{MethodTurnStart, TurnStartParams{CollaborationMode: &CollaborationMode{}}, "turn/start.collaborationMode"},
		{MethodTurnStart, TurnStartParams{}, ""},
	}
	for _, c := range cases {
		if got := ExperimentalReason(c.method, c.params); got != c.want {
			t.Errorf("%s %+v: got %q, want %q", c.method, c.params, got, c.want)
		}
	}
}

// The union types encode as Codex writes them and decode back.
func TestUnionsRoundTrip(t *testing.T) {
	cases := []struct {
		v    any
		want string
	}{
		{ThreadStatus{Type: StatusActive}, `{"type":"active","activeFlags":[]}`},
		{ThreadStatus{Type: StatusIdle}, `{"type":"idle"}`},
		{SandboxPolicy{Type: SandboxWorkspaceWrite}, `{"type":"workspaceWrite","writableRoots":[],"networkAccess":false,"excludeTmpdirEnvVar":false,"excludeSlashTmp":false}`},
		{SandboxPolicy{Type: SandboxReadOnly}, `{"type":"readOnly","networkAccess":false}`},
		{TextInput("hi"), `{"type":"text","text":"hi","text_elements":[]}`},
		{CommandApprovalDecision{Decision: DecisionAcceptWithAmendment, Amendment: []string{"echo", "created"}}, `{"acceptWithExecpolicyAmendment":{"execpolicy_amendment":["echo","created"]}}`},
		{CommandApprovalDecision{Decision: DecisionAccept}, `"accept"`},
		{CommandAction{Type: "unknown", Command: "echo created"}, `{"type":"unknown","command":"echo created"}`},
		{Approval(ApprovalNever), `"never"`},
	}
	for _, c := range cases {
		b, err := json.Marshal(c.v)
		if err != nil || string(b) != c.want {
			t.Errorf("marshal %+v = %s, %v; want %s", c.v, b, err, c.want)
		}
	}
	item := ThreadItem{AgentMessage: &AgentMessageItem{Type: "agentMessage", ID: "msg_1", Text: "hi"}}
	b, _ := json.Marshal(item)
	want := `{"type":"agentMessage","moderation":null,"id":"msg_1","text":"hi","phase":null,"memoryCitation":null,"delivery":null,"questions":null,"startedAtMs":null,"completedAtMs":null}`
	if string(b) != want {
		t.Fatalf("agent message item:\n got %s\nwant %s", b, want)
	}
	var back ThreadItem
	if err := json.Unmarshal(b, &back); err != nil || back.AgentMessage == nil || back.AgentMessage.Text != "hi" {
		t.Fatalf("round trip: %+v %v", back, err)
	}
}

// Every notification, server request and method codexd defines is one the
// schema has.
func TestDefinitionsAreInTheSchema(t *testing.T) {
	in := func(list []string, name string) bool {
		for _, m := range list {
			if m == name {
				return true
			}
		}
		return false
	}
	for _, n := range []string{ThreadStarted.Name(), ThreadStatusChanged.Name(), ThreadArchived.Name(), ThreadUnarchived.Name(),
		ThreadClosed.Name(), ThreadNameUpdated.Name(), ThreadSettingsUpdated.Name(), ThreadTokenUsageUpdated.Name(),
		TurnStarted.Name(), TurnCompletedN.Name(), ItemStarted.Name(), ItemCompleted.Name(), AgentMessageDelta.Name(),
		CommandOutputDelta.Name(), ReasoningSummaryTextDelta.Name(), ReasoningSummaryPartAdded.Name(), ReasoningTextDelta.Name(),
		TurnPlanUpdated.Name(), TurnDiffUpdated.Name(), Error.Name(), Warning.Name(), ServerRequestResolved.Name(),
		CommandExecOutputDelta.Name()} {
		if !in(ServerNotificationMethods, n) {
			t.Errorf("notification %s is not in the schema", n)
		}
	}
	for _, n := range []string{CommandExecutionRequestApproval.Name(), FileChangeRequestApproval.Name(), ToolRequestUserInput.Name()} {
		if !in(ServerRequestMethods, n) {
			t.Errorf("server request %s is not in the schema", n)
		}
	}
	for _, n := range []string{MethodInitialize, MethodThreadStart, MethodThreadResume, MethodThreadFork, MethodThreadRead,
		MethodThreadList, MethodThreadLoadedList, MethodThreadTurnsList, MethodThreadUnsubscribe, MethodThreadArchive,
		MethodThreadUnarchive, MethodThreadNameSet, MethodThreadSettingsUpdate, MethodTurnStart, MethodTurnSteer,
		MethodTurnInterrupt, MethodModelList, MethodAccountRead, MethodConfigRead, MethodConfigRequirementsRead,
		MethodSkillsList, MethodPermissionProfileList, MethodCollaborationModeList, MethodCommandExec, MethodCommandExecWrite,
		MethodCommandExecTerminate, MethodCommandExecResize, MethodFsReadFile, MethodFsWriteFile, MethodFsCreateDirectory,
		MethodFsGetMetadata, MethodFsReadDirectory, MethodFsRemove, MethodFsCopy} {
		if !IsClientMethod(n) {
			t.Errorf("method %s is not Codex's", n)
		}
	}
	if !in(ClientNotificationMethods, MethodInitialized) {
		t.Error("initialized")
	}
}
