package appserver

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/codexd/codexd/appproto"
)

// Every message the server sends in these tests (to JSON clients and, once
// encoded, to in-process clients) is checked against Codex 0.169's JSON
// Schema: testdata/schema holds the definitions the checks need, taken
// unchanged from the schema Codex generates (see testdata/schema/README).

// --- Schema validation of everything the server sends. ---

var schemaOnce struct {
	sync.Once
	c   *jsonschema.Compiler
	err error
	mu  sync.Mutex
	m   map[string]*jsonschema.Schema
}

const schemaFile = "testdata/schema/codex-0.169-app-server.schema.json"

func schemaFor(ref string) (*jsonschema.Schema, error) {
	schemaOnce.Do(func() {
		f, err := os.Open(schemaFile)
		if err != nil {
			schemaOnce.err = err
			return
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			schemaOnce.err = err
			return
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("codex.json", doc); err != nil {
			schemaOnce.err = err
			return
		}
		schemaOnce.c = c
		schemaOnce.m = make(map[string]*jsonschema.Schema)
	})
	if schemaOnce.err != nil {
		return nil, schemaOnce.err
	}
	schemaOnce.mu.Lock()
	defer schemaOnce.mu.Unlock()
	if s := schemaOnce.m[ref]; s != nil {
		return s, nil
	}
	if strings.HasPrefix(ref, "testdata/") {
		// A schema of its own (Codex's file for one message) for what the
		// bundle lacks.
		abs, err := filepath.Abs(ref)
		if err != nil {
			return nil, err
		}
		s, err := jsonschema.NewCompiler().Compile(abs)
		if err != nil {
			return nil, err
		}
		schemaOnce.m[ref] = s
		return s, nil
	}
	s, err := schemaOnce.c.Compile("codex.json#/definitions/" + ref)
	if err != nil {
		return nil, err
	}
	schemaOnce.m[ref] = s
	return s, nil
}

// branches maps a method to its branch of the ServerNotification or
// ServerRequest union: the message must match that branch (method and
// params), which is what the union's oneOf demands, as the methods of the
// branches are distinct. Validating against the branch rather than the
// whole union keeps a stream of thousands of deltas cheap to check.
var branches struct {
	sync.Once
	m map[string]string
}

func branch(t testing.TB, union, method string) string {
	branches.Do(func() {
		branches.m = map[string]string{}
		raw, err := os.ReadFile(schemaFile)
		if err != nil {
			return
		}
		var doc struct {
			Definitions map[string]struct {
				OneOf []struct {
					Properties struct {
						Method struct {
							Enum []string `json:"enum"`
						} `json:"method"`
					} `json:"properties"`
				} `json:"oneOf"`
			} `json:"definitions"`
		}
		if err := json.Unmarshal(raw, &doc, json.RejectUnknownMembers(false)); err != nil {
			return
		}
		for _, u := range []string{"ServerNotification", "ServerRequest"} {
			for i, b := range doc.Definitions[u].OneOf {
				for _, name := range b.Properties.Method.Enum {
					branches.m[u+" "+name] = fmt.Sprintf("%s/oneOf/%d", u, i)
				}
			}
		}
	})
	ref, ok := branches.m[union+" "+method]
	if !ok {
		t.Errorf("%s is not a method of Codex's %s", method, union)
		return union
	}
	return ref
}

// responseSchema names the schema of each method's result.
var responseSchema = map[string]string{
	appproto.MethodInitialize:                         "InitializeResponse",
	appproto.MethodThreadStart:                        "v2/ThreadStartResponse",
	appproto.MethodThreadResume:                       "v2/ThreadResumeResponse",
	appproto.MethodThreadFork:                         "v2/ThreadForkResponse",
	appproto.MethodThreadRead:                         "v2/ThreadReadResponse",
	appproto.MethodThreadReadStateUpdate:              "v2/ThreadReadStateUpdateResponse",
	appproto.MethodThreadList:                         "v2/ThreadListResponse",
	appproto.MethodThreadLoadedList:                   "v2/ThreadLoadedListResponse",
	appproto.MethodThreadTurnsList:                    "v2/ThreadTurnsListResponse",
	appproto.MethodThreadUnsubscribe:                  "v2/ThreadUnsubscribeResponse",
	appproto.MethodThreadArchive:                      "v2/ThreadArchiveResponse",
	appproto.MethodThreadUnarchive:                    "v2/ThreadUnarchiveResponse",
	appproto.MethodThreadNameSet:                      "v2/ThreadSetNameResponse",
	appproto.MethodThreadSettingsUpdate:               "v2/ThreadSettingsUpdateResponse",
	appproto.MethodTurnStart:                          "v2/TurnStartResponse",
	appproto.MethodTurnSteer:                          "v2/TurnSteerResponse",
	appproto.MethodTurnInterrupt:                      "v2/TurnInterruptResponse",
	appproto.MethodThreadCompactStart:                 "v2/ThreadCompactStartResponse",
	appproto.MethodThreadShellCommand:                 "v2/ThreadShellCommandResponse",
	appproto.MethodThreadBackgroundTerminalsList:      "v2/ThreadBackgroundTerminalsListResponse",
	appproto.MethodThreadBackgroundTerminalsClean:     "v2/ThreadBackgroundTerminalsCleanResponse",
	appproto.MethodThreadBackgroundTerminalsTerminate: "v2/ThreadBackgroundTerminalsTerminateResponse",
	appproto.MethodReviewStart:                        "v2/ReviewStartResponse",
	appproto.MethodModelList:                          "v2/ModelListResponse",
	appproto.MethodAccountRead:                        "v2/GetAccountResponse",
	appproto.MethodConfigRead:                         "v2/ConfigReadResponse",
	appproto.MethodConfigRequirementsRead:             "v2/ConfigRequirementsReadResponse",
	appproto.MethodSkillsList:                         "v2/SkillsListResponse",
	appproto.MethodFuzzyFileSearch:                    "FuzzyFileSearchResponse",
	appproto.MethodFuzzyFileSearchSessionStart:        "FuzzyFileSearchSessionStartResponse",
	appproto.MethodFuzzyFileSearchSessionUpdate:       "FuzzyFileSearchSessionUpdateResponse",
	appproto.MethodFuzzyFileSearchSessionStop:         "FuzzyFileSearchSessionStopResponse",
	appproto.MethodPermissionProfileList:              "v2/PermissionProfileListResponse",
	appproto.MethodCollaborationModeList:              "v2/CollaborationModeListResponse",
	appproto.MethodCommandExec:                        "v2/CommandExecResponse",
	appproto.MethodCommandExecWrite:                   "v2/CommandExecWriteResponse",
	appproto.MethodCommandExecTerminate:               "v2/CommandExecTerminateResponse",
	appproto.MethodCommandExecResize:                  "v2/CommandExecResizeResponse",
	appproto.MethodFsReadFile:                         "v2/FsReadFileResponse",
	appproto.MethodFsWriteFile:                        "v2/FsWriteFileResponse",
	appproto.MethodFsCreateDirectory:                  "v2/FsCreateDirectoryResponse",
	appproto.MethodFsGetMetadata:                      "v2/FsGetMetadataResponse",
	appproto.MethodFsReadDirectory:                    "v2/FsReadDirectoryResponse",
	appproto.MethodFsRemove:                           "v2/FsRemoveResponse",
	appproto.MethodFsCopy:                             "v2/FsCopyResponse",
	appproto.MethodEnvironmentAdd:                     "v2/EnvironmentAddResponse",
	appproto.MethodEnvironmentStatus:                  "v2/EnvironmentStatusResponse",
	appproto.MethodEnvironmentInfo:                    "v2/EnvironmentInfoResponse",
}

// validated counts the messages checked against the schema, by kind.
var validated struct {
	sync.Mutex
	n map[string]int
}

// checkSchema validates one message the server sent. method is the
// method of the request a response answers ("" when unknown).
func checkSchema(t testing.TB, m *wmsg, method string) {
	t.Helper()
	var ref string
	var v jsontext.Value
	switch {
	case m.Error != nil:
		ref, v = "JSONRPCErrorError", m.rawError
	case m.Method != "" && m.ID != nil:
		ref, v = branch(t, "ServerRequest", m.Method), m.raw
	case m.Method != "":
		if m.EmittedAtMs == nil {
			t.Errorf("notification %s has no top-level emittedAtMs: %s", m.Method, m.raw)
		}
		ref, v = branch(t, "ServerNotification", m.Method), m.raw
	default:
		ref = responseSchema[method]
		if ref == "" {
			t.Errorf("no schema for the response to %q: %s", method, m.raw)
			return
		}
		v = m.Result
	}
	s, err := schemaFor(ref)
	if err != nil {
		t.Fatalf("schema %s: %v", ref, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(v))
	if err != nil {
		t.Errorf("message is not JSON: %v: %s", err, v)
		return
	}
	if err := s.Validate(doc); err != nil {
		t.Errorf("message does not match Codex's schema %s: %v\n%s", ref, err, m.raw)
	}
	validated.Lock()
	if validated.n == nil {
		validated.n = map[string]int{}
	}
	validated.n[ref]++
	validated.Unlock()
}
