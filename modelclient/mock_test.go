package modelclient

import (
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/codexd/codexd/mockmodel"
)

var record = flag.Bool("record", false, "record testdata/streams/mock-*.sse from the mock model")

func startMock(t *testing.T, sc *mockmodel.Script) (*mockmodel.Server, string) {
	t.Helper()
	m := mockmodel.New(mockmodel.Options{Script: sc})
	url, err := m.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, strings.TrimSuffix(url, "/v1")
}

func userTurn(text string, tools ...string) Request {
	req := Request{Model: "mock-model", Input: []Item{Message("user", text)}, ParallelToolCalls: true}
	for _, name := range tools {
		req.Tools = append(req.Tools, json.RawMessage(`{"type":"function","name":"`+name+`","parameters":{"type":"object"}}`))
	}
	return req
}

// TestRecordMockStreams keeps recorded mock streams in testdata (run with
// -record to refresh them; TestRecordedStreams replays them).
func TestRecordMockStreams(t *testing.T) {
	if !*record {
		t.Skip("run with -record to refresh testdata/streams/mock-*.sse")
	}
	_, url := startMock(t, nil)
	bodies := map[string]Request{
		"mock-exec":      userTurn("list the files", "exec_command"),
		"mock-reasoning": userTurn("MOCK:reason"),
		"mock-plan":      userTurn("MOCK:plan", "update_plan"),
	}
	answer := userTurn("list the files", "exec_command")
	answer.Input = append(answer.Input,
		Item{Type: ItemFunctionCall, Name: "exec_command", CallID: "call_mock_9", Arguments: `{"cmd":"ls"}`},
		FunctionCallOutput("call_mock_9", "Chunk ID: 1\nWall time: 0.0 seconds\nProcess exited with code 0\nOutput:\na.txt\nb.txt\n"))
	bodies["mock-answer"] = answer
	for name, req := range bodies {
		body, err := req.Body()
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.Post(url+"/v1/responses", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("testdata/streams/"+name+".sse", data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	http.DefaultClient.CloseIdleConnections()
}

// TestMockDefaultScript runs the mock's default two-request exchange: a
// command, then an answer quoting the command's output.
func TestMockDefaultScript(t *testing.T) {
	m, url := startMock(t, nil)
	c := client(t, provider(url), Options{})
	ctx := testCtx(t)

	req := userTurn("what is here?", "exec_command", "write_stdin")
	s, err := c.Stream(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	evs, end := collect(s)
	if end != io.EOF {
		t.Fatalf("end %v", end)
	}
	var call Item
	var argDeltas strings.Builder
	for _, ev := range evs {
		switch e := ev.(type) {
		case OutputItemDone:
			call = e.Item
		case FunctionCallArgumentsDelta:
			argDeltas.WriteString(e.Delta)
		}
	}
	if call.Type != ItemFunctionCall || call.Name != "exec_command" || call.CallID == "" || argDeltas.String() != call.Arguments {
		t.Fatalf("call %+v (deltas %q)", call, argDeltas.String())
	}
	var args struct {
		Cmd string `json:"cmd"`
	}
	if err := json.Unmarshal([]byte(call.Arguments), &args); err != nil || args.Cmd != mockmodel.DefaultCommand {
		t.Fatalf("arguments %s: %v", call.Arguments, err)
	}

	req.Input = append(req.Input, call, FunctionCallOutput(call.CallID, "Process exited with code 0\nOutput:\nhello from the mock\nREADME.md\n"))
	s, err = c.Stream(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	evs, end = collect(s)
	if end != io.EOF {
		t.Fatalf("end %v", end)
	}
	var text strings.Builder
	var final Item
	var usage *Usage
	for _, ev := range evs {
		switch e := ev.(type) {
		case OutputTextDelta:
			text.WriteString(e.Delta)
		case OutputItemDone:
			final = e.Item
		case Completed:
			usage = e.Usage
		}
	}
	if !strings.Contains(text.String(), "hello from the mock\nREADME.md") || Text(final.Content) != text.String() || final.Role != "assistant" {
		t.Fatalf("answer %q, item %+v", text.String(), final)
	}
	if usage == nil || usage.TotalTokens != usage.InputTokens+usage.OutputTokens || usage.InputTokens == 0 {
		t.Fatalf("usage %+v", usage)
	}

	// The mock saw what the client sent: the call went back with its id
	// (Codex 0.169 sends the ids back), the output with its call id.
	ex := m.Requests()[1]
	var body struct {
		Input []map[string]any `json:"input"`
	}
	if err := json.Unmarshal(ex.Body, &body); err != nil {
		t.Fatal(err)
	}
	fc, out := body.Input[1], body.Input[2]
	if fc["type"] != "function_call" || fc["call_id"] != call.CallID || fc["id"] != call.ID || out["call_id"] != call.CallID {
		t.Fatalf("history sent: %v", body.Input)
	}
}

// TestMockMarkers drives the failure markers through the client.
func TestMockMarkers(t *testing.T) {
	m, url := startMock(t, nil)
	p := provider(url)
	c := client(t, p, Options{})
	ctx := testCtx(t)

	_, err := c.Stream(ctx, userTurn("MOCK:error"))
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 500 || ae.Code != "server_error" {
		t.Fatalf("MOCK:error: %v", err)
	}

	// MOCK:429 refuses once; the retry, after the Retry-After, gets through.
	p429 := p
	p429.RequestMaxRetries = 1
	var retries []Retry
	c429 := client(t, p429, Options{OnRetry: func(r Retry) { retries = append(retries, r) }})
	s, err := c429.Stream(ctx, userTurn("MOCK:429=3"))
	if err != nil || len(retries) != 1 || retries[0].Delay != 3_000_000_000 {
		t.Fatalf("MOCK:429: %v, retries %+v", err, retries)
	}
	if _, end := collect(s); end != io.EOF {
		t.Fatalf("MOCK:429 retry: %v", end)
	}

	s, err = c.Stream(ctx, userTurn("MOCK:fail"))
	if err != nil {
		t.Fatal(err)
	}
	var re *ResponseError
	if _, end := collect(s); !errors.As(end, &re) || re.Code != "server_error" {
		t.Fatalf("MOCK:fail: %v", end)
	}

	s, err = c.Stream(ctx, userTurn("MOCK:cut"))
	if err != nil {
		t.Fatal(err)
	}
	evs, end := collect(s)
	if !errors.Is(end, ErrStreamCut) {
		t.Fatalf("MOCK:cut: %v", end)
	}
	if d, ok := evs[len(evs)-1].(OutputTextDelta); !ok || d.Delta == "" {
		t.Fatalf("MOCK:cut ended after %T", evs[len(evs)-1])
	}

	// A stalled stream goes idle; the mock sees the client leave.
	p.StreamIdleTimeout = 100_000_000 // 100ms
	idle := client(t, p, Options{})
	s, err = idle.Stream(ctx, userTurn("MOCK:stall"))
	if err != nil {
		t.Fatal(err)
	}
	if _, end := collect(s); !errors.Is(end, ErrStreamIdle) {
		t.Fatalf("MOCK:stall: %v", end)
	}
	ex := m.Requests()[len(m.Requests())-1]
	select {
	case <-ex.Gone():
	case <-ctx.Done():
		t.Fatal("the mock never saw the idle client leave")
	}
}

// TestMockSlowInterrupt: closing a slow stream mid-way is seen by the
// mock as the client leaving, after the deltas it had sent.
func TestMockSlowInterrupt(t *testing.T) {
	m, url := startMock(t, nil)
	c := client(t, provider(url), Options{})
	ctx := testCtx(t)
	s, err := c.Stream(ctx, userTurn("MOCK:slow=200"))
	if err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := ev.(OutputTextDelta); ok {
			break
		}
	}
	s.Close()
	ex, err := m.WaitRequest(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-ex.Gone():
	case <-ctx.Done():
		t.Fatal("the mock never saw the client leave")
	}
	<-ex.Done()
	if n := ex.EventsSent(); n < 5 || n > 6 {
		t.Fatalf("the mock sent %d events before the client left (created, in_progress, added, part, 1-2 deltas)", n)
	}
}

// TestMockRetryAfter: a scripted 429 with Retry-After is retried after
// the delay the mock asked for.
func TestMockRetryAfter(t *testing.T) {
	sc, err := mockmodel.ParseScript([]byte(`{"rules":[
		{"when":{"request":1},"respond":{"status":429,"retryAfter":"2"}},
		{"when":{"request":2},"respond":{"status":503,"retryAfterMs":1500}},
		{"respond":{"output":[{"type":"message","text":"third time lucky"}]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, url := startMock(t, sc)
	p := provider(url)
	p.RequestMaxRetries = 2
	var retries []Retry
	c := client(t, p, Options{OnRetry: func(r Retry) { retries = append(retries, r) }})
	s, err := c.Stream(testCtx(t), userTurn("hi"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(retries) != 2 || retries[0].Delay != 2_000_000_000 || retries[1].Delay != 1_500_000_000 {
		t.Fatalf("retries %+v", retries)
	}
	evs, end := collect(s)
	if end != io.EOF || len(evs) == 0 {
		t.Fatalf("%v %v", evs, end)
	}
}
