package mockmodel

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// The event sequence of a message, as the real API and the recorded mock
// of app-server-observed.md stream it.
var messageEvents = []string{
	"response.created", "response.in_progress",
	"response.output_item.added", "response.content_part.added",
	"response.output_text.delta", "response.output_text.delta", "response.output_text.delta",
	"response.output_text.done", "response.content_part.done", "response.output_item.done",
	"response.completed",
}

func TestHelloStreamShape(t *testing.T) {
	s, url := start(t, nil)
	r := post(t, url, body("mock-model", nil, user("Say hello MOCK:hello")))
	if r.status != 200 || r.err != nil {
		t.Fatalf("status %d, %v", r.status, r.err)
	}
	if !reflect.DeepEqual(r.names(), messageEvents) {
		t.Fatalf("events %q", r.names())
	}
	for i, e := range r.events {
		if e.data["type"] != e.name || e.data["sequence_number"] != float64(i) {
			t.Fatalf("event %d: type %v seq %v", i, e.data["type"], e.data["sequence_number"])
		}
	}
	if r.text() != HelloText || r.events[4].data["delta"] != "Hello fro" {
		t.Fatalf("text %q, first delta %v", r.text(), r.events[4].data["delta"])
	}
	item := r.items()[0]
	if item["id"] != "msg_mock_1" || item["role"] != "assistant" || item["status"] != "completed" {
		t.Fatalf("item %v", item)
	}
	resp := r.events[len(r.events)-1].data["response"].(map[string]any)
	usage := resp["usage"].(map[string]any)
	for _, k := range []string{"input_tokens", "input_tokens_details", "output_tokens", "output_tokens_details", "total_tokens"} {
		if _, ok := usage[k]; !ok {
			t.Fatalf("usage lacks %s: %v", k, usage)
		}
	}
	if resp["model"] != "mock-model" || resp["status"] != "completed" || len(resp["output"].([]any)) != 1 {
		t.Fatalf("response %v", resp)
	}
	if r.header.Get("X-Request-Id") != "req_mock_1" {
		t.Fatalf("header %v", r.header)
	}
	ex := s.Requests()[0]
	if ex.Answer != "MOCK:hello" || ex.Status != 200 || ex.EventsSent() != len(messageEvents) || ex.ClientGone() {
		t.Fatalf("exchange %+v", ex)
	}
}

// TestDefaultScript: a command first, then an answer quoting its output.
func TestDefaultScript(t *testing.T) {
	s, url := start(t, nil)
	tools := []string{"exec_command", "write_stdin", "update_plan"}
	r := post(t, url, body("m", tools, user("what is in this directory?")))
	name, args, callID := r.call(t)
	if name != "exec_command" || args["cmd"] != DefaultCommand || callID != "call_mock_1" {
		t.Fatalf("call %s %v %s", name, args, callID)
	}
	names := r.names()
	if names[3] != "response.function_call_arguments.delta" || names[4] != "response.function_call_arguments.done" {
		t.Fatalf("events %q", names)
	}
	out := "Chunk ID: 7\nWall time: 0.0012 seconds\nProcess exited with code 0\nOriginal token count: 9\nOutput:\nhello from the mock\nREADME.md\n"
	r = post(t, url, body("m", tools, user("what is in this directory?"),
		fcall(callID, "exec_command", `{"cmd":"echo hello from the mock; ls"}`), fout(callID, out)))
	want := "I ran `echo hello from the mock; ls`. It printed:\n\n```\nhello from the mock\nREADME.md\n```"
	if r.text() != want {
		t.Fatalf("answer %q", r.text())
	}
	// Without exec_command among the tools, a plain answer.
	r = post(t, url, body("m", []string{"view_image"}, user("hi there")))
	if r.text() != HelloText+" You said: hi there" {
		t.Fatalf("text answer %q", r.text())
	}
	var answers []string
	for _, ex := range s.Requests() {
		answers = append(answers, ex.Answer)
	}
	if !reflect.DeepEqual(answers, []string{"default:exec", "default:answer", "default:text"}) {
		t.Fatalf("answers %q", answers)
	}
}

func TestMarkers(t *testing.T) {
	_, url := start(t, nil)
	tools := []string{"exec_command", "write_stdin", "apply_patch", "update_plan"}

	_, args, _ := post(t, url, body("m", tools, user("run it\nMOCK:exec git status --short\nthanks"))).call(t)
	if args["cmd"] != "git status --short" {
		t.Fatalf("exec args %v", args)
	}
	name, args, callID := post(t, url, body("m", tools, user("MOCK:escalate"))).call(t)
	if name != "exec_command" || args["sandbox_permissions"] != "require_escalated" || args["justification"] == "" || args["cmd"] != "echo approved by the user" {
		t.Fatalf("escalate %s %v", name, args)
	}
	r := post(t, url, body("m", tools, user("MOCK:escalate"), fcall(callID, "exec_command", `{"cmd":"echo approved by the user"}`), fout(callID, "Output:\napproved by the user\n")))
	if !strings.Contains(r.text(), "approved by the user") {
		t.Fatalf("escalate answer %q", r.text())
	}

	// MOCK:stdin: exec on a tty, write_stdin to its session, then quote.
	_, args, c1 := post(t, url, body("m", tools, user("MOCK:stdin"))).call(t)
	if args["cmd"] != "cat" || args["tty"] != true {
		t.Fatalf("stdin step 1 %v", args)
	}
	name, args, c2 := post(t, url, body("m", tools, user("MOCK:stdin"), fcall(c1, "exec_command", `{"cmd":"cat"}`), fout(c1, "Process running with session ID 12\nOutput:\n"))).call(t)
	if name != "write_stdin" || args["session_id"] != float64(12) || args["chars"] != "hello from write_stdin\n" {
		t.Fatalf("stdin step 2 %s %v", name, args)
	}
	r = post(t, url, body("m", tools, user("MOCK:stdin"), fcall(c1, "exec_command", `{}`), fout(c1, "session ID 12"), fcall(c2, "write_stdin", `{}`), fout(c2, "Output:\nhello from write_stdin\n")))
	if !strings.Contains(r.text(), "hello from write_stdin") {
		t.Fatalf("stdin answer %q", r.text())
	}

	patch := "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch"
	name, args, _ = post(t, url, body("m", tools, user("please MOCK:patch\n"+patch))).call(t)
	if name != "apply_patch" || args["input"] != patch {
		t.Fatalf("patch %s %q", name, args["input"])
	}
	_, args, c3 := post(t, url, body("m", tools, user("MOCK:bulk=2000 turn 7"))).call(t)
	if args["cmd"] != "yes '"+bulkLine+"' | head -n 200" || len(bulkLine)+1 != 40 {
		t.Fatalf("bulk %v", args)
	}
	r = post(t, url, body("m", tools, user("MOCK:bulk=2000 turn 7"), fcall(c3, "exec_command", `{}`), fout(c3, "Output:\n"+strings.Repeat(bulkLine+"\n", 200))))
	if r.text() != "Read about 2000 tokens of output. turn 7" {
		t.Fatalf("bulk answer %q", r.text())
	}
	name, args, _ = post(t, url, body("m", tools, user("MOCK:plan"))).call(t)
	if plan, _ := args["plan"].([]any); name != "update_plan" || len(plan) != 3 {
		t.Fatalf("plan %s %v", name, args)
	}

	r = post(t, url, body("m", nil, user("MOCK:reason")))
	if r.names()[2] != "response.output_item.added" || r.items()[0]["type"] != "reasoning" || r.text() != HelloText {
		t.Fatalf("reason %q", r.names())
	}
	if enc, _ := r.items()[0]["encrypted_content"].(string); enc == "" {
		t.Fatal("reasoning item without encrypted_content")
	}

	r = post(t, url, body("m", nil, user("MOCK:fail")))
	last := r.events[len(r.events)-1]
	if last.name != "response.failed" || last.data["response"].(map[string]any)["error"].(map[string]any)["code"] != "server_error" {
		t.Fatalf("fail %q", r.names())
	}
}

// TestMarkerScope: a steer inherits the marker of the turn it steers; a
// marker from an earlier turn (before an assistant message) does not.
func TestMarkerScope(t *testing.T) {
	s, url := start(t, nil)
	post(t, url, body("m", nil, user("MOCK:hello"), user("and also this")))
	post(t, url, body("m", []string{"exec_command"}, user("MOCK:hello"), assistant(HelloText), user("now what?")))
	post(t, url, body("m", nil, user("MOCK:slow=0"), user("MOCK:hello")))
	got := []string{s.Requests()[0].Answer, s.Requests()[1].Answer, s.Requests()[2].Answer}
	if !reflect.DeepEqual(got, []string{"MOCK:hello", "default:exec", "MOCK:hello"}) {
		t.Fatalf("answers %q", got)
	}
}

func TestHTTPErrors(t *testing.T) {
	_, url := start(t, mustScript(t, `{"rules":[{"when":{"userContains":"ms"},"respond":{"status":503,"retryAfterMs":1500,"error":{"message":"busy"}}}]}`))
	r := post(t, url, body("m", nil, user("MOCK:error")))
	if r.status != 500 || !strings.Contains(r.body, `"code":"server_error"`) {
		t.Fatalf("%d %s", r.status, r.body)
	}
	r = post(t, url, body("m", nil, user("MOCK:error=401")))
	if r.status != 401 || !strings.Contains(r.body, "invalid_api_key") {
		t.Fatalf("%d %s", r.status, r.body)
	}
	r = post(t, url, body("m", nil, user("MOCK:429=7")))
	var e struct {
		Error struct {
			Message, Type string
			Code          *string
			Param         any
		}
	}
	if err := json.Unmarshal([]byte(r.body), &e); err != nil {
		t.Fatal(err)
	}
	if r.status != 429 || r.header.Get("Retry-After") != "7" || e.Error.Code == nil || *e.Error.Code != "rate_limit_exceeded" ||
		!strings.Contains(e.Error.Message, "try again in 7s") {
		t.Fatalf("%d %v %s", r.status, r.header, r.body)
	}
	// The retry of the same request is answered.
	if r := post(t, url, body("m", nil, user("MOCK:429=7"))); r.status != 200 || r.text() != HelloText {
		t.Fatalf("retry after 429: %d %q", r.status, r.text())
	}
	r = post(t, url, body("m", nil, user("ms please")))
	if r.status != 503 || r.header.Get("Retry-After-Ms") != "1500" || !strings.Contains(r.body, `"message":"busy"`) {
		t.Fatalf("%d %v %s", r.status, r.header, r.body)
	}
}

func TestBadRequests(t *testing.T) {
	s, url := start(t, nil)
	if r := post(t, url, "{not json"); r.status != 400 || !strings.Contains(r.body, "invalid_request_error") {
		t.Fatalf("%d %s", r.status, r.body)
	}
	res, err := httpClient.Get(strings.TrimSuffix(url, "/v1") + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 404 {
		t.Fatalf("GET /v1/models: %d", res.StatusCode)
	}
	res, err = httpClient.Get(url + "/responses")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 405 || res.Header.Get("Allow") != "POST" {
		t.Fatalf("GET /v1/responses: %d", res.StatusCode)
	}
	// The path without /v1 is served too.
	res, err = httpClient.Post(strings.TrimSuffix(url, "/v1")+"/responses", "application/json", strings.NewReader(body("m", nil, user("MOCK:hello"))))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("/responses: %d", res.StatusCode)
	}
	if n := len(s.Requests()); n != 4 {
		t.Fatalf("%d requests recorded", n)
	}
	httpClient.CloseIdleConnections()
}

// TestCut: the connection is closed in the middle, without the final
// chunk, so the client sees a broken stream.
func TestCut(t *testing.T) {
	s, url := start(t, nil)
	r := post(t, url, body("m", nil, user("MOCK:cut")))
	if r.err == nil || len(r.events) != 6 || r.events[5].name != "response.output_text.delta" {
		t.Fatalf("read error %v after %q", r.err, r.names())
	}
	ex := s.Requests()[0]
	<-ex.Done()
	if ex.ClientGone() || ex.EventsSent() != 6 {
		t.Fatalf("gone %v, sent %d", ex.ClientGone(), ex.EventsSent())
	}
}

// TestStallUntilClientLeaves: a stalled stream holds the connection until
// the client goes, and the exchange records that it went.
func TestStallUntilClientLeaves(t *testing.T) {
	s, url := start(t, nil)
	ctx, cancel := context.WithCancel(testCtx(t))
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/responses", strings.NewReader(body("m", nil, user("MOCK:stall"))))
	res, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := s.WaitRequest(testCtx(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	// Read the events sent before the stall.
	buf := make([]byte, 64<<10)
	var got strings.Builder
	for strings.Count(got.String(), "\n\n") < 5 {
		n, err := res.Body.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			t.Fatalf("read: %v after %q", err, got.String())
		}
	}
	select {
	case <-ex.Done():
		t.Fatal("the stream ended instead of stalling")
	default:
	}
	cancel()
	res.Body.Close()
	select {
	case <-ex.Gone():
	case <-testCtx(t).Done():
		t.Fatal("the mock never saw the client leave")
	}
	<-ex.Done()
	if ex.EventsSent() != 5 {
		t.Fatalf("sent %d", ex.EventsSent())
	}
	httpClient.CloseIdleConnections()
}

// TestCloseEndsStalledStreams: Close does not wait for stalled clients.
func TestCloseEndsStalledStreams(t *testing.T) {
	s := New(Options{})
	url, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	res, err := httpClient.Post(url+"/responses", "application/json", strings.NewReader(body("m", nil, user("MOCK:stall"))))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if _, err := s.WaitRequest(testCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := io.ReadAll(res.Body); err == nil {
		// A clean end is fine too; what matters is that Close returned.
		t.Log("stream ended cleanly on Close")
	}
	<-s.Requests()[0].Done()
	httpClient.CloseIdleConnections()
	if r := func() int {
		rec := &statusRecorder{header: http.Header{}}
		s.ServeHTTP(rec, httpRequest(t, body("m", nil, user("hi"))))
		return rec.status
	}(); r != http.StatusServiceUnavailable {
		t.Fatalf("request after Close: %d", r)
	}
}

type statusRecorder struct {
	header http.Header
	status int
}

func (r *statusRecorder) Header() http.Header         { return r.header }
func (r *statusRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *statusRecorder) WriteHeader(s int)           { r.status = s }

func httpRequest(t *testing.T, b string) *http.Request {
	req, err := http.NewRequest("POST", "http://mock/v1/responses", strings.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestSlowDisconnect: a client that leaves during a slow stream is seen.
func TestSlowDisconnect(t *testing.T) {
	s, url := start(t, nil)
	ctx, cancel := context.WithCancel(testCtx(t))
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/responses", strings.NewReader(body("m", nil, user("MOCK:slow=60000"))))
	res, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	var got strings.Builder
	for !strings.Contains(got.String(), "output_text.delta") {
		n, err := res.Body.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	res.Body.Close()
	ex := s.Requests()[0]
	select {
	case <-ex.Gone():
	case <-testCtx(t).Done():
		t.Fatal("not seen")
	}
	<-ex.Done()
	if ex.EventsSent() != 5 {
		t.Fatalf("sent %d events (the first delta is not delayed, the second waits a minute)", ex.EventsSent())
	}
	httpClient.CloseIdleConnections()
}

func TestRecording(t *testing.T) {
	s, url := start(t, nil)
	req, _ := http.NewRequest("POST", url+"/responses", strings.NewReader(body("m", nil, user("MOCK:hello"))))
	req.Header.Set("Authorization", "Bearer k")
	req.Header.Set("Session_id", "s1")
	res, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	ex, err := s.WaitRequest(testCtx(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	<-ex.Done()
	m, err := ex.JSON()
	if err != nil || m["model"] != "m" || ex.Header.Get("Authorization") != "Bearer k" || ex.Header.Get("Session_id") != "s1" ||
		ex.Method != "POST" || ex.Path != "/v1/responses" || ex.N != 1 {
		t.Fatalf("%+v %v %v", ex, m, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.WaitRequest(ctx, 2); !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitRequest: %v", err)
	}
	httpClient.CloseIdleConnections()
}
