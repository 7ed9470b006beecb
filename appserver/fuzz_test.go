package appserver

import (
	"errors"
	"sort"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/jsonrpc"
)

// FuzzDecodeRequest feeds arbitrary params to the decoder of every method
// the server registers, as a JSON connection's handler does: each either
// decodes into the method's params or is refused with a *jsonrpc.Error,
// and gating never panics on what decoded.
func FuzzDecodeRequest(f *testing.F) {
	srv, err := New(Config{Core: agenttest.New(agenttest.Options{})})
	if err != nil {
		f.Fatal(err)
	}
	defer srv.Close()
	methods := make([]string, 0, len(srv.handlers))
	for m := range srv.handlers {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	f.Fuzz(func(t *testing.T, pick uint8, raw []byte) {
		method := methods[int(pick)%len(methods)]
		params, err := srv.decode(method, jsontext.Value(raw))
		if err != nil {
			var we *jsonrpc.Error
			if !errors.As(err, &we) || (we.Code != jsonrpc.CodeInvalidRequest && we.Code != jsonrpc.CodeInvalidParams) {
				t.Fatalf("%s: error %v is not a request error", method, err)
			}
			return
		}
		_ = appproto.ExperimentalReason(method, params)
		if h := srv.handlers[method]; h.threadOf != nil {
			_ = h.threadOf(jsontext.Value(raw))
		}
		_ = peekProcessID(jsontext.Value(raw))
	})
}

// FuzzServerRequestAnswer feeds arbitrary client answers to the decoding
// of approvals and questions: any answer maps to exactly one decision.
func FuzzServerRequestAnswer(f *testing.F) {
	f.Fuzz(func(t *testing.T, kind uint8, raw []byte) {
		r := &serverRequest{kind: requestKind(kind % 5), callID: "c"}
		switch op := decision(r, jsontext.Value(raw), nil).(type) {
		case agent.ExecDecision:
			if op.CallID != "c" || op.Decision == "" {
				t.Fatalf("%+v", op)
			}
		case agent.PatchDecision:
			if op.CallID != "c" || op.Decision == "" {
				t.Fatalf("%+v", op)
			}
		case agent.UserInputAnswer:
			if op.CallID != "c" || op.Answers == nil {
				t.Fatalf("%+v", op)
			}
		case agent.MCPElicitationAnswer:
			switch op.Result.Action {
			case "accept", "decline", "cancel":
			default:
				t.Fatalf("%+v", op)
			}
			if op.Result.Action != "accept" && op.Result.Content != nil {
				t.Fatalf("content without accept: %+v", op)
			}
		case agent.MCPToolApprovalDecision:
			switch op.Decision {
			case agent.Accept, agent.AcceptForSession, agent.Decline, agent.Cancel:
			default:
				t.Fatalf("%+v", op)
			}
		default:
			t.Fatalf("decision %T", op)
		}
	})
}

// The schema check is not vacuous: it refuses messages Codex's schema
// does not allow.
func TestSchemaCatchesBadMessages(t *testing.T) {
	bad := []*wmsg{
		{raw: []byte(`{"method":"turn/completed","params":{"threadId":"t","turn":{"id":"x","items":[],"status":"bogus"}},"emittedAtMs":1}`)},
		{raw: []byte(`{"method":"thread/status/changed","params":{"threadId":"t","status":{"type":"active"}},"emittedAtMs":1}`)},
		{raw: []byte(`{"method":"item/started","params":{"threadId":"t","turnId":"u","startedAtMs":1,"item":{"type":"agentMessage","id":"m"}},"emittedAtMs":1}`)},
	}
	for _, m := range bad {
		if err := jsonUnmarshalLoose(m.raw, m); err != nil {
			t.Fatal(err)
		}
		rec := &recordingTB{TB: t}
		checkSchema(rec, m, "")
		if !rec.failed {
			t.Errorf("the schema accepted %s", m.raw)
		}
	}
}

// recordingTB notes failures instead of failing the test.
type recordingTB struct {
	testing.TB
	failed bool
}

func (r *recordingTB) Errorf(format string, args ...any) { r.failed = true }
func (r *recordingTB) Fatalf(format string, args ...any) { r.failed = true }
func (r *recordingTB) Helper()                           {}
