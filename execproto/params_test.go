package execproto

import (
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The accepted and refused params below are what Codex 0.169's
// exec-server accepted and refused when probed (see
// integration/testdata/differential for the same cases run side by side).

func TestCheckParamsCanonical(t *testing.T) {
	for _, c := range []struct{ method, in, want string }{
		// Objects of plain values pass unchanged: Go decodes them alike.
		{MethodInitialize, `{"clientName":"p","extra":1}`, `{"clientName":"p","extra":1}`},
		{MethodInitialize, ` {"clientName":"p","resumeSessionId":null} `, `{"clientName":"p","resumeSessionId":null}`},
		{MethodInitialize, `["probe"]`, `{"clientName":"probe"}`},
		{MethodInitialize, `["probe",null]`, `{"clientName":"probe"}`},
		{MethodInitialize, `["probe","sid"]`, `{"clientName":"probe","resumeSessionId":"sid"}`},
		{MethodProcessRead, `{"processId":"p","afterSeq":-0,"maxBytes":null}`, `{"processId":"p","afterSeq":0}`},
		{MethodProcessRead, `["p",1,null,18446744073709551615]`, `{"processId":"p","afterSeq":1,"waitMs":18446744073709551615}`},
		{MethodProcessSignal, `{"processId":"p","signal":{"interrupt":null}}`, `{"processId":"p","signal":"interrupt"}`},
		{MethodProcessSignal, `["p","interrupt"]`, `{"processId":"p","signal":"interrupt"}`},
		{MethodProcessStart, `["p",null,["echo"],"file:///",null,null,{"A":"1"},false,false,null,null,false,null,null]`,
			`{"processId":"p","argv":["echo"],"cwd":"file:///","env":{"A":"1"},"tty":false,"pipeStdin":false,"enforceManagedNetwork":false}`},
		{MethodProcessStart, `{"processId":"p","argv":[],"cwd":"c","env":{},"tty":true,"envPolicy":["none",false,[],{"S":"x"},[]],"metadata":{},"sandbox":{"a":[1]}}`,
			`{"processId":"p","metadata":{},"argv":[],"cwd":"c","envPolicy":{"inherit":"none","ignoreDefaultExcludes":false,"exclude":[],"set":{"S":"x"},"includeOnly":[]},"env":{},"tty":true,"sandbox":{"a":[1]}}`},
		{MethodFsOpen, `{"handleId":"h","path":"file:///x","mode":{"replace":null}}`, `{"handleId":"h","path":"file:///x","mode":"replace"}`},
		{MethodFsOpen, `["h","file:///x","read",null]`, `{"handleId":"h","path":"file:///x","mode":"read"}`},
		{MethodFsReadFile, `["file:///x",null,null]`, `{"path":"file:///x"}`},
		{MethodFsWalk, `{"path":"file:///","options":[1,2,3,false]}`,
			`{"path":"file:///","options":{"maxDepth":1,"maxDirectories":2,"maxEntries":3,"followDirectorySymlinks":false}}`},
		{MethodFsWatchMissing, `[1,[],"file:///"]`, `{"watchId":1,"missing":[]}`},
		{MethodFsWatchMissing, `{"watchId":1,"missing":[],"sandbox":5}`, `{"watchId":1,"missing":[],"sandbox":5}`},
		// What Go would read otherwise is rewritten.
		{MethodFsReadBlock, `{"handleId":"h","offset":-0,"len":1,"x":null}`, `{"handleId":"h","offset":0,"len":1}`},
		{MethodHTTPRequest, `["GET","http://x/",[["A","b"]],null,null,"stop","r",true]`,
			`{"method":"GET","url":"http://x/","headers":[{"name":"A","value":"b"}],"redirectPolicy":"stop","requestId":"r","streamResponse":true}`},
		{MethodProcessWrite, `{"processId":"p","chunk":"aGk=","writeId":"w"}`, `{"processId":"p","chunk":"aGk=","writeId":"w"}`},
	} {
		got, err := CheckParams(c.method, jsontext.Value(c.in))
		if err != nil {
			t.Errorf("%s %s: %v", c.method, c.in, err)
			continue
		}
		if string(got) != c.want {
			t.Errorf("%s %s:\n got %s\nwant %s", c.method, c.in, got, c.want)
		}
	}
}

func TestCheckParamsErrors(t *testing.T) {
	for _, c := range []struct{ method, in, want string }{
		// Whole params: Codex's words.
		{MethodInitialize, ``, "invalid type: null, expected struct InitializeParams"},
		{MethodInitialize, `null`, "invalid type: null, expected struct InitializeParams"},
		{MethodInitialize, `"probe"`, `invalid type: string "probe", expected struct InitializeParams`},
		{MethodInitialize, `true`, "invalid type: boolean `true`, expected struct InitializeParams"},
		{MethodInitialize, `7`, "invalid type: number, expected struct InitializeParams"},
		{MethodInitialize, `[]`, "invalid length 0, expected struct InitializeParams with 2 elements"},
		{MethodInitialize, `["a","b","c"]`, "invalid length 3, expected fewer elements in array"},
		{MethodProcessTerminate, `[]`, "invalid length 0, expected struct TerminateParams with 1 element"},
		{MethodProcessRead, `["p",null,null]`, "invalid length 3, expected struct ReadParams with 4 elements"},
		{MethodEnvironmentInfo, `{"x":1}`, "invalid type: map, expected unit"},
		{MethodEnvironmentInfo, `[]`, "invalid type: sequence, expected unit"},
		{MethodEnvironmentInfo, `5`, "invalid type: number, expected unit"},
		{MethodInitialize, `{}`, "missing field `clientName`"},
		{MethodProcessStart, `{"processId":"p"}`, "missing field `argv`"},
		{MethodFsWalk, `{"path":"file:///","options":{}}`, "missing field `maxDepth`"},
		{MethodHTTPRequest, `{"method":"GET","url":"u","requestId":"r","headers":[{"name":"a"}]}`, "missing field `value`"},
		{MethodProcessStart, `{"processId":"p","argv":[],"cwd":"c","env":{},"tty":false,"envPolicy":{}}`, "missing field `inherit`"},
		{MethodProcessSignal, `{"processId":"p","signal":"kill"}`, "unknown variant `kill`, expected `interrupt`"},
		{MethodFsOpen, `{"handleId":"h","path":"p","mode":"bogus"}`, "unknown variant `bogus`, expected `read` or `replace`"},
		{MethodProcessStart, `{"processId":"p","argv":[],"cwd":"c","env":{},"tty":false,"envPolicy":{"inherit":"x","ignoreDefaultExcludes":false,"exclude":[],"set":{},"includeOnly":[]}}`,
			"unknown variant `x`, expected one of `core`, `all`, `none`"},
		// Members: the client's terms.
		{MethodFsReadBlock, `{"handleId":"h","offset":-1,"len":1}`, "offset: expected a non-negative integer, got -1"},
		{MethodFsReadBlock, `{"handleId":"h","offset":0.5,"len":1}`, "offset: expected a non-negative integer, got 0.5"},
		{MethodFsReadBlock, `{"handleId":"h","offset":null,"len":1}`, "offset: expected a non-negative integer, got null"},
		{MethodProcessRead, `{"processId":"p","afterSeq":18446744073709551616}`, "afterSeq: expected an integer no larger than 18446744073709551615, got 18446744073709551616"},
		{MethodProcessRead, `{"processId":null}`, "processId: expected a string, got null"},
		{MethodInitialize, `{"clientName":5}`, "clientName: expected a string, got 5"},
		{MethodProcessStart, `{"processId":"p","argv":[1],"cwd":"c","env":{},"tty":false}`, "argv[0]: expected a string, got 1"},
		{MethodProcessStart, `{"processId":"p","argv":[],"cwd":"c","env":{"A":null},"tty":false}`, "env.A: expected a string, got null"},
		{MethodProcessStart, `{"processId":"p","argv":[],"cwd":"c","env":{},"tty":false,"pipeStdin":null}`, "pipeStdin: expected a boolean, got null"},
		{MethodProcessStart, `{"processId":"p","argv":[],"cwd":"c","env":{},"tty":false,"sandbox":5}`, "sandbox: expected an object, got 5"},
		{MethodProcessSignal, `{"processId":"p","signal":{"interrupt":1}}`, `signal: expected "interrupt", got an object`},
		{MethodProcessStart, `{"processId":"p","argv":[],"cwd":"c","env":{},"tty":false,"envPolicy":{"inherit":5,"ignoreDefaultExcludes":false,"exclude":[],"set":{},"includeOnly":[]}}`,
			`envPolicy.inherit: expected one of "core", "all", "none", got 5`},
		{MethodFsOpen, `{"handleId":"h","path":"p","mode":null}`, `mode: expected "read" or "replace", got null`},
		{MethodFsWalk, `{"path":"p","options":[1,1,1]}`, "options: expected at least 4 elements (maxDepth, maxDirectories, maxEntries, followDirectorySymlinks, pruneHiddenDirectories), got 3"},
		{MethodFsWalk, `{"path":"p","options":{"maxDepth":1,"maxDirectories":1,"maxEntries":1,"followDirectorySymlinks":false,"pruneHiddenDirectories":null}}`,
			"options.pruneHiddenDirectories: expected a boolean, got null"},
		{MethodHTTPRequest, `{"method":"GET","url":"u","requestId":"r","headers":null}`, "headers: expected an array, got null"},
		{MethodHTTPRequest, `{"method":"GET","url":"u","requestId":"r","headers":[{"name":"a","value":5}]}`, "headers[0].value: expected a string, got 5"},
		{MethodProcessWrite, `{"processId":"p","chunk":"!!!","writeId":"w"}`, `chunk: expected a base64 string, got "!!!": invalid character '!' at offset 0`},
		{MethodProcessWrite, `{"processId":"p","chunk":"aGk","writeId":"w"}`, `chunk: expected a base64 string, got "aGk": its length 3 is not a multiple of 4`},
		// Sandbox members have no default: an array must hold them.
		{MethodFsReadFile, `["file:///x"]`, "invalid length 2, expected struct WireFsReadFileParams with 3 elements"},
		{MethodProcessWrite, `{"processId":"p","chunk":"aGl=","writeId":"w"}`, `chunk: expected a base64 string, got "aGl=": the last character 'l' at offset 2 has bits set past the end of the data`},
		{MethodProcessWrite, `{"processId":"p","chunk":"aGk=aGk=","writeId":"w"}`, `chunk: expected a base64 string, got "aGk=aGk=": padding before the end, at offset 3`},
		{MethodProcessWrite, `{"processId":"p","chunk":"aG-k","writeId":"w"}`, `chunk: expected a base64 string, got "aG-k": invalid character '-' at offset 2`},
		// A member's type is checked before a missing one is reported, as
		// serde does.
		{MethodProcessStart, `{"processId":"p","argv":5}`, "argv: expected an array, got 5"},
	} {
		_, err := CheckParams(c.method, jsontext.Value(c.in))
		if err == nil {
			t.Errorf("%s %s: accepted, want %q", c.method, c.in, c.want)
			continue
		}
		if err.Error() != c.want {
			t.Errorf("%s %s:\n got %q\nwant %q", c.method, c.in, err, c.want)
		}
	}
}

// goWords are words of Go's own decoders that must never reach a client.
var goWords = regexp.MustCompile(`\bGo\b|execproto|jsontext|\bjson: |uint64|int64|\[\]byte|\[\]uint8|map\[|unmarshal`)

// Every shape's canonical output decodes into its Go type, so that the
// decoder behind the check never speaks.
func TestCanonicalParamsDecode(t *testing.T) {
	for _, c := range []struct {
		method string
		in     string
		into   any
	}{
		{MethodProcessStart, `["p",{},["a"],"file:///",["all",true,["X"],{"K":"v"},["Y"]],null,{"A":"1"},true,true,"zero",{},true,{},{}]`, &ProcessStartParams{}},
		{MethodProcessRead, `["p",1,2,3]`, &ProcessReadParams{}},
		{MethodProcessWrite, `["p","aGk=","w"]`, &ProcessWriteParams{}},
		{MethodFsOpen, `["h","file:///x",{"read":null},{}]`, &FsOpenParams{}},
		{MethodFsWalk, `["file:///",[1,1,1,true,true],{}]`, &FsWalkParams{}},
		{MethodFsRemove, `["file:///x",true,false,true,{}]`, &FsRemoveParams{}},
		{MethodHTTPRequest, `["GET","http://x/",[["a","b","HOME"]],"aGk=",5,{"stop":null},"r",true]`, &HTTPRequestParams{}},
	} {
		out, err := CheckParams(c.method, jsontext.Value(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.method, err)
		}
		if err := json.Unmarshal(out, c.into); err != nil {
			t.Errorf("%s: canonical %s does not decode: %v", c.method, out, err)
		}
	}
	var start ProcessStartParams
	out, _ := CheckParams(MethodProcessStart, jsontext.Value(`["p",{},["a"],"file:///",["all",true,["X"],{"K":"v"},["Y"]],null,{"A":"1"},true,true,"zero",{},true,{},{}]`))
	if err := json.Unmarshal(out, &start); err != nil || start.EnvPolicy == nil || start.EnvPolicy.Inherit != "all" || !start.PipeStdin || *start.Arg0 != "zero" {
		t.Errorf("positional process/start decoded as %+v (%v)", start, err)
	}
}

// A large chunk is checked in place: no copy of it is made.
func TestCheckParamsLargeChunkAllocations(t *testing.T) {
	chunk := strings.Repeat("QUJD", 1<<16) // 256 KiB of base64
	raw := jsontext.Value(`{"processId":"p","chunk":"` + chunk + `","writeId":"w"}`)
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := CheckParams(MethodProcessWrite, raw); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 30 {
		t.Errorf("%v allocations to check a 256 KiB write", allocs)
	}
	var ms runtimeMem
	ms.measure(func() { _, _ = CheckParams(MethodProcessWrite, raw) })
	if ms.bytes > 64<<10 {
		t.Errorf("checking a 256 KiB write allocated %d bytes", ms.bytes)
	}
}

func BenchmarkCheckParamsLargeWrite(b *testing.B) {
	chunk := strings.Repeat("QUJD", 1<<14) // 64 KiB of base64
	raw := jsontext.Value(`{"processId":"p","chunk":"` + chunk + `","writeId":"w"}`)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := CheckParams(MethodProcessWrite, raw); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzCheckParams(f *testing.F) {
	for _, seed := range []string{
		`{"processId":"p","argv":["a"],"cwd":"file:///","env":{},"tty":false}`,
		`["p",null,["a"],"c",null,null,{},false]`,
		`{"handleId":"h","offset":-0,"len":18446744073709551615}`,
		`{"processId":"p","chunk":"aGk=","writeId":"w"}`,
		`{"method":"GET","url":"u","requestId":"r","headers":[["a","b"]],"redirectPolicy":{"stop":null}}`,
		`null`, `[]`, `{}`, `"x"`, `[[[[]]]]`, `{"options":{"maxDepth":[1]}}`,
	} {
		f.Add(seed)
	}
	methods := make([]string, 0, len(ParamsShapes))
	for m := range ParamsShapes {
		methods = append(methods, m)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if !jsontext.Value(in).IsValid() {
			// The engine never passes these on; the scanner must still
			// refuse them without panicking, or read them as something.
			for _, m := range methods {
				_, _ = CheckParams(m, jsontext.Value(in))
			}
			return
		}
		for _, m := range methods {
			out, err := CheckParams(m, jsontext.Value(in))
			if err != nil {
				if goWords.MatchString(err.Error()) {
					t.Fatalf("%s %s: message speaks Go: %v", m, in, err)
				}
				continue
			}
			if ParamsShapes[m].kind == kindUnit {
				continue
			}
			if !out.IsValid() {
				t.Fatalf("%s %s: invalid canonical output %s", m, in, out)
			}
			// Canonical output is accepted again, unchanged.
			again, err := CheckParams(m, out)
			if err != nil || string(again) != string(out) {
				t.Fatalf("%s %s: canonical %s is not stable: %s %v", m, in, out, again, err)
			}
			if strings.Contains(string(out), "null") && !strings.Contains(in, "null") {
				t.Fatalf("%s %s: null appeared in %s", m, in, out)
			}
		}
	})
}

// runtimeMem measures the bytes a function allocates.
type runtimeMem struct{ bytes uint64 }

func (m *runtimeMem) measure(f func()) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	m.bytes = after.TotalAlloc - before.TotalAlloc
}
