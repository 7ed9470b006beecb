package execproto

import (
	"reflect"
	"testing"

	"github.com/go-json-experiment/json"
)

// The expected texts are what Codex 0.169 sent, byte for byte, as observed
// on the binary (see docs/reference/exec-server-process.md).
func TestProcessEncodingMatchesCodex(t *testing.T) {
	code := int32(3)
	for _, c := range []struct {
		v    any
		want string
	}{
		{ProcessStartResponse{ProcessID: "p1", SandboxType: SandboxTypeNone},
			`{"processId":"p1","sandboxType":"none"}`},
		{ProcessReadResponse{
			Chunks:   []ProcessOutputChunk{{Seq: 1, Stream: StreamStderr, Chunk: []byte("err\n")}, {Seq: 2, Stream: StreamStdout, Chunk: []byte("hi\n")}},
			NextSeq:  5,
			Exited:   true,
			ExitCode: &code,
			Closed:   true,
		}, `{"chunks":[{"seq":1,"stream":"stderr","chunk":"ZXJyCg=="},{"seq":2,"stream":"stdout","chunk":"aGkK"}],"nextSeq":5,"exited":true,"exitCode":3,"closed":true,"failure":null,"sandboxDenied":false}`},
		{ProcessReadResponse{NextSeq: 1},
			`{"chunks":[],"nextSeq":1,"exited":false,"exitCode":null,"closed":false,"failure":null,"sandboxDenied":false}`},
		{ProcessWriteResponse{Status: WriteStdinClosed}, `{"status":"stdinClosed"}`},
		{ProcessWriteResponse{Status: WriteUnknownProcess}, `{"status":"unknownProcess"}`},
		{ProcessSignalResponse{}, `{}`},
		{ProcessTerminateResponse{Running: false}, `{"running":false}`},
		{ProcessOutputNotification{ProcessID: "p1", Seq: 1, Stream: StreamPty, Chunk: []byte("24 80\r\n")},
			`{"processId":"p1","seq":1,"stream":"pty","chunk":"MjQgODANCg=="}`},
		{ProcessExitedNotification{ProcessID: "p1", Seq: 3, ExitCode: 3},
			`{"processId":"p1","seq":3,"exitCode":3,"sandboxDenied":false}`},
		{ProcessClosedNotification{ProcessID: "p1", Seq: 4}, `{"processId":"p1","seq":4}`},
	} {
		got, err := json.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("%T:\n got %s\nwant %s", c.v, got, c.want)
		}
	}
}

func TestProcessDecoding(t *testing.T) {
	var start ProcessStartParams
	in := `{"processId":"p","argv":["sh","-c","x"],"cwd":"file:///tmp","env":{"A":"1"},"tty":true,"pipeStdin":true,"arg0":"n","bogus":1}`
	if err := json.Unmarshal([]byte(in), &start); err != nil {
		t.Fatal(err)
	}
	arg0 := "n"
	want := ProcessStartParams{ProcessID: "p", Argv: []string{"sh", "-c", "x"}, Cwd: "file:///tmp", Env: map[string]string{"A": "1"}, Tty: true, PipeStdin: true, Arg0: &arg0}
	if !reflect.DeepEqual(start, want) {
		t.Errorf("start: %+v", start)
	}

	var read ProcessReadParams
	if err := json.Unmarshal([]byte(`{"processId":"p","afterSeq":null,"maxBytes":0,"waitMs":10}`), &read); err != nil {
		t.Fatal(err)
	}
	if read.AfterSeq != nil || read.MaxBytes == nil || *read.MaxBytes != 0 || *read.WaitMs != 10 {
		t.Errorf("read: %+v", read)
	}

	var write ProcessWriteParams
	if err := json.Unmarshal([]byte(`{"processId":"p","chunk":"aGkK","writeId":"w1"}`), &write); err != nil {
		t.Fatal(err)
	}
	if string(write.Chunk) != "hi\n" || write.WriteID != "w1" {
		t.Errorf("write: %+v", write)
	}
	if err := json.Unmarshal([]byte(`{"processId":"p","chunk":"!!!","writeId":"w1"}`), &write); err == nil {
		t.Error("bad base64 accepted")
	}

	var sig ProcessSignalParams
	if err := json.Unmarshal([]byte(`{"processId":"p","signal":"interrupt"}`), &sig); err != nil || sig.Signal != SignalInterrupt {
		t.Errorf("signal: %+v %v", sig, err)
	}
}
