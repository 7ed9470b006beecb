package fsops

import (
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/codexd/codexd/execproto"
)

// The results must encode exactly as Codex 0.169 sent them in captures,
// with the JSON library the server layer uses.
func TestWireShapes(t *testing.T) {
	e := newEnv(t)
	e.write("d/a.txt", "hello\n")
	c := e.svc.NewConnState(nil)
	defer c.Close()

	enc := func(v any) string {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	check := func(got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("\n got %s\nwant %s", got, want)
		}
	}

	var rp execproto.FsReadFileParams
	ok(t, json.Unmarshal([]byte(`{"path":"`+e.uri("d/a.txt")+`","sandbox":null}`), &rp))
	rf, err := e.svc.ReadFile(ctx, rp)
	ok(t, err)
	check(enc(rf), `{"dataBase64":"aGVsbG8K"}`)

	var op execproto.FsOpenParams
	ok(t, json.Unmarshal([]byte(`{"handleId":"h1","path":"`+e.uri("d/a.txt")+`"}`), &op))
	or, err := e.svc.Open(ctx, c, op)
	ok(t, err)
	check(enc(or), `{"handleId":"h1"}`)
	rb, err := e.svc.ReadBlock(ctx, c, execproto.FsReadBlockParams{HandleID: "h1", Offset: 3, Len: 100})
	ok(t, err)
	check(enc(rb), `{"chunk":"bG8K","eof":true}`)
	rb, err = e.svc.ReadBlock(ctx, c, execproto.FsReadBlockParams{HandleID: "h1", Offset: 100, Len: 5})
	ok(t, err)
	check(enc(rb), `{"chunk":"","eof":true}`)
	cl, err := e.svc.Close(ctx, c, execproto.FsCloseParams{HandleID: "h1"})
	ok(t, err)
	check(enc(cl), `{}`)

	var wp execproto.FsWalkParams
	ok(t, json.Unmarshal([]byte(`{"path":"`+e.uri("d")+`","options":{"maxDepth":5,"maxEntries":100,"maxDirectories":100,"followDirectorySymlinks":false}}`), &wp))
	wr, err := e.svc.Walk(ctx, wp)
	ok(t, err)
	check(enc(wr), `{"entries":[{"path":"`+e.uri("d/a.txt")+`","kind":"file"}],"errors":[],"truncated":false}`)

	md, err := e.svc.GetMetadata(ctx, execproto.FsGetMetadataParams{Path: e.uri("d/a.txt")})
	ok(t, err)
	md.CreatedAtMs, md.ModifiedAtMs = 0, 1
	check(enc(md), `{"isDirectory":false,"isFile":true,"isSymlink":false,"size":6,"createdAtMs":0,"modifiedAtMs":1}`)

	rd, err := e.svc.ReadDirectory(ctx, execproto.FsReadDirectoryParams{Path: e.uri("d")})
	ok(t, err)
	check(enc(rd), `{"entries":[{"fileName":"a.txt","isDirectory":false,"isFile":true}]}`)

	check(enc(execproto.FsWatchMissingResponse{Watching: true}), `{"watching":true}`)
	check(enc(execproto.FsMissingChangedNotification{WatchID: 7}), `{"watchId":7}`)
	check(enc(execproto.HTTPRequestBodyDeltaNotification{RequestID: "r4", Seq: 2, Delta: []byte{}, Done: true}),
		`{"requestId":"r4","seq":2,"deltaBase64":"","done":true,"error":null}`)
	check(enc(execproto.HTTPRequestResponse{Status: 200, Headers: []execproto.HTTPHeader{{Name: "a", Value: "b"}}, Body: []byte{}}),
		`{"status":200,"headers":[{"name":"a","value":"b"}],"bodyBase64":""}`)

	// Optional members stay off the wire when unset.
	check(enc(execproto.FsRemoveParams{Path: "file:///x"}), `{"path":"file:///x"}`)
	check(enc(execproto.HTTPRequestParams{Method: "GET", URL: "http://x/", RequestID: "r"}),
		`{"method":"GET","url":"http://x/","requestId":"r"}`)

	var wb execproto.FsWriteBlockParams
	ok(t, json.Unmarshal([]byte(`{"handleId":"w","offset":0,"chunk":"aGVsbG8="}`), &wb))
	if string(wb.Chunk) != "hello" {
		t.Errorf("chunk %q", wb.Chunk)
	}
	if json.Unmarshal([]byte(`{"handleId":"w","offset":0,"chunk":"!!"}`), &wb) == nil {
		t.Error("bad base64 chunk accepted")
	}
	var wm execproto.FsWatchMissingParams
	if json.Unmarshal([]byte(`{"watchId":"w1","missing":[]}`), &wm) == nil {
		t.Error("string watchId accepted")
	}
	var hp execproto.HTTPRequestParams
	ok(t, json.Unmarshal([]byte(`{"method":"GET","url":"http://x/","requestId":"r","timeoutMs":null,"bodyBase64":"aGk="}`), &hp))
	if hp.TimeoutMs != nil || string(hp.Body) != "hi" {
		t.Errorf("http params %+v", hp)
	}
}
