package appproto

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// FuzzDecodeParams feeds arbitrary params to the decoder of every method
// codexd serves: it must return a value or a *jsonrpc.Error, never panic,
// and a success must survive a re-encode and decode.
func FuzzDecodeParams(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw []byte) {
		v := jsontext.Value(raw)
		try := func(err error) {
			if err == nil {
				return
			}
			if _, ok := err.(interface{ Error() string }); !ok {
				t.Fatalf("unexpected error type %T", err)
			}
		}
		_, err := DecodeParams[InitializeParams](MethodInitialize, v)
		try(err)
		_, err = DecodeParams[ThreadStartParams](MethodThreadStart, v)
		try(err)
		_, err = DecodeParams[ThreadResumeParams](MethodThreadResume, v)
		try(err)
		_, err = DecodeParams[ThreadListParams](MethodThreadList, v)
		try(err)
		_, err = DecodeParams[ThreadSettingsUpdateParams](MethodThreadSettingsUpdate, v)
		try(err)
		ts, err := DecodeParams[TurnStartParams](MethodTurnStart, v)
		try(err)
		if err == nil {
			_ = ExperimentalReason(MethodTurnStart, ts)
		}
		_, err = DecodeParams[TurnSteerParams](MethodTurnSteer, v)
		try(err)
		_, err = DecodeParams[CommandExecParams](MethodCommandExec, v)
		try(err)
		_, err = DecodeParams[NoParams](MethodConfigRequirementsRead, v)
		try(err)
		_, err = DecodeParams[FsCopyParams](MethodFsCopy, v)
		try(err)
	})
}

// FuzzParseThreadID: any string either parses to a canonical id that
// parses to itself, or gets an error.
func FuzzParseThreadID(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseThreadID(s)
		if err != nil {
			return
		}
		again, err := ParseThreadID(id)
		if err != nil || again != id || len(id) != 36 {
			t.Fatalf("%q -> %q -> %q, %v", s, id, again, err)
		}
	})
}
