package mockmodel

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestScriptRules(t *testing.T) {
	sc := mustScript(t, `{"rules": [
	  {"name": "first", "when": {"request": 1}, "respond": {"output": [{"type": "message", "text": "one"}]}},
	  {"name": "deploy", "when": {"userContains": "deploy", "step": 0, "tool": "exec_command"},
	   "respond": {"output": [{"type": "function_call", "name": "exec_command", "callId": "call_deploy",
	                           "arguments": {"cmd": "make deploy # {{prompt}}"}}]}},
	  {"when": {"callId": "call_deploy", "outputContains": "ok"}, "times": 1,
	   "respond": {"output": [{"type": "message", "text": "Deployed ({{callId}}, request {{n}}): {{output}}", "deltas": 2, "phase": "final_answer"}]}},
	  {"when": {"lastInput": "function_call_output"},
	   "respond": {"output": [{"type": "function_call", "name": "write_stdin", "arguments": "{\"chars\":\"{{rawOutput}}\"}"}]}},
	  {"when": {"hasSchema": true}, "respond": {"output": [{"type": "message", "text": "{\"title\":\"scripted\"}"}]}},
	  {"when": {"userContains": "custom"}, "respond": {"output": [{"type": "custom_tool_call", "name": "apply_patch", "input": "patch for {{prompt}}", "deltas": 3}]}}
	]}`)
	s, url := start(t, sc)

	if r := post(t, url, body("m", nil, user("deploy"))); r.text() != "one" {
		t.Fatalf("request 1: %q", r.text())
	}
	_, args, callID := post(t, url, body("m", []string{"exec_command"}, user("please deploy"))).call(t)
	if callID != "call_deploy" || args["cmd"] != "make deploy # please deploy" {
		t.Fatalf("deploy: %s %v", callID, args)
	}
	hist := []any{user("please deploy"), fcall("call_deploy", "exec_command", "{}"), fout("call_deploy", "Output:\nall ok\n")}
	r := post(t, url, body("m", []string{"exec_command"}, hist...))
	if r.text() != "Deployed (call_deploy, request 3): all ok" || r.items()[0]["phase"] != "final_answer" {
		t.Fatalf("answer %q %v", r.text(), r.items())
	}
	// times: 1 is spent; the next rule answers.
	name, args, _ := post(t, url, body("m", []string{"exec_command"}, hist...)).call(t)
	if name != "write_stdin" || args["chars"] != "Output:\nall ok\n" {
		t.Fatalf("after times: %s %v", name, args)
	}
	var schema map[string]any
	json.Unmarshal([]byte(`{"model":"m","input":[],"text":{"format":{"type":"json_schema","name":"x","schema":{"type":"object"}}}}`), &schema)
	sb, _ := json.Marshal(schema)
	if r := post(t, url, string(sb)); r.text() != `{"title":"scripted"}` {
		t.Fatalf("schema rule %q", r.text())
	}
	r = post(t, url, body("m", nil, user("custom")))
	var deltas []string
	for _, e := range r.events {
		if e.name == "response.custom_tool_call_input.delta" {
			deltas = append(deltas, e.data["delta"].(string))
		}
	}
	item := r.items()[0]
	if item["type"] != "custom_tool_call" || item["input"] != "patch for custom" || strings.Join(deltas, "") != "patch for custom" || len(deltas) != 3 {
		t.Fatalf("custom %v %q", item, deltas)
	}
	// No rule matches: the built-in behaviour answers.
	post(t, url, body("m", nil, user("MOCK:hello")))
	var answers []string
	for _, ex := range s.Requests() {
		answers = append(answers, ex.Answer)
	}
	want := []string{"rule 1 (first)", "rule 2 (deploy)", "rule 3", "rule 4", "rule 5", "rule 6", "MOCK:hello"}
	if !reflect.DeepEqual(answers, want) {
		t.Fatalf("answers %q", answers)
	}
}

func TestScriptStreamControls(t *testing.T) {
	sc := mustScript(t, `{"rules": [
	  {"when": {"userContains": "fail"}, "respond": {"output": [{"type": "message", "text": "partial"}], "fail": {"code": "rate_limit_exceeded", "message": "Please try again in 2s."}}},
	  {"when": {"userContains": "incomplete"}, "respond": {"output": [{"type": "message", "text": "partial"}], "incomplete": "max_output_tokens"}},
	  {"when": {"userContains": "usage"}, "respond": {"output": [{"type": "message", "text": "x"}], "usage": {"input_tokens": 10, "cached_tokens": 4, "output_tokens": 2, "reasoning_tokens": 1, "total_tokens": 12}, "headers": {"X-Extra": "1"}}},
	  {"when": {"userContains": "reasoning"}, "respond": {"output": [{"type": "reasoning", "summary": ["a", "b"], "text": "raw"}], "delayMs": 1}}
	]}`)
	_, url := start(t, sc)
	r := post(t, url, body("m", nil, user("fail")))
	last := r.events[len(r.events)-1]
	if last.name != "response.failed" || !strings.Contains(last.data["response"].(map[string]any)["error"].(map[string]any)["message"].(string), "2s") {
		t.Fatalf("fail: %v", last)
	}
	r = post(t, url, body("m", nil, user("incomplete")))
	last = r.events[len(r.events)-1]
	if last.name != "response.incomplete" || last.data["response"].(map[string]any)["incomplete_details"].(map[string]any)["reason"] != "max_output_tokens" {
		t.Fatalf("incomplete: %v", last)
	}
	r = post(t, url, body("m", nil, user("usage")))
	usage := r.events[len(r.events)-1].data["response"].(map[string]any)["usage"].(map[string]any)
	if usage["total_tokens"] != float64(12) || usage["input_tokens_details"].(map[string]any)["cached_tokens"] != float64(4) || r.header.Get("X-Extra") != "1" {
		t.Fatalf("usage %v", usage)
	}
	r = post(t, url, body("m", nil, user("reasoning")))
	var names []string
	for _, n := range r.names() {
		if strings.Contains(n, "reasoning") {
			names = append(names, n)
		}
	}
	want := []string{
		"response.reasoning_summary_part.added", "response.reasoning_summary_text.delta", "response.reasoning_summary_text.done", "response.reasoning_summary_part.done",
		"response.reasoning_summary_part.added", "response.reasoning_summary_text.delta", "response.reasoning_summary_text.done", "response.reasoning_summary_part.done",
		"response.reasoning_text.delta", "response.reasoning_text.delta", "response.reasoning_text.done",
	}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("reasoning events %q", names)
	}
	item := r.items()[0]
	if len(item["summary"].([]any)) != 2 || item["content"].([]any)[0].(map[string]any)["text"] != "raw" {
		t.Fatalf("reasoning item %v", item)
	}
}

func TestParseScriptErrors(t *testing.T) {
	cases := map[string]string{
		`{"rules":[{"when":{"userContain":"x"},"respond":{}}]}`:                                    "unknown field",
		`{"rules":[{"respond":{"status":"429"}}]}`:                                                 "cannot unmarshal",
		`{"rules":[{"respond":{"status":42}}]}`:                                                    "rule 1: status 42",
		`{"rules":[{"name":"n","respond":{"output":[{"type":"function_call"}]}}]}`:                 "rule 1 (n): output 1: a function_call needs a name",
		`{"rules":[{"respond":{"output":[{"type":"function_call","name":"x","arguments":5}]}}]}`:   "arguments must be an object or a JSON string",
		`{"rules":[{"respond":{"output":[{"type":"image"}]}}]}`:                                    `unknown type "image"`,
		`{"rules":[{"respond":{"delayMs":-1}}]}`:                                                   "must not be negative",
		`{"rules":[]} {}`:                                                                          "trailing data",
		`[1]`:                                                                                      "cannot unmarshal",
		`{"rules":[{"respond":{"output":[{"type":"message","deltas":-2}]}}]}`:                      "deltas must not be negative",
		`{"rules":[{"respond":{"output":[{"type":"function_call","name":"x","arguments":"{"}]}}]}`: "",
	}
	for js, want := range cases {
		_, err := ParseScript([]byte(js))
		if want == "" {
			// A JSON string that is not itself JSON is allowed: it is sent as
			// the arguments text, as a model may send broken arguments.
			if err != nil {
				t.Errorf("%s: %v", js, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", js, err, want)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "s.json")
	os.WriteFile(path, []byte(`{"rules":[{"respond":{"status":1}}]}`), 0o600)
	if _, err := LoadScript(path); err == nil || !strings.HasPrefix(err.Error(), path+": ") {
		t.Fatalf("LoadScript: %v", err)
	}
}

func TestSample(t *testing.T) {
	schema := `{"type":"object","properties":{
	  "title":{"type":"string","maxLength":5},
	  "kind":{"type":"string","enum":["bug","feature"]},
	  "n":{"type":"integer","minimum":3},
	  "ok":{"type":"boolean"},
	  "tags":{"type":"array","items":{"type":"string"}},
	  "maybe":{"type":["string","null"]},
	  "choice":{"anyOf":[{"type":"number"},{"type":"string"}]},
	  "fixed":{"const":"c"},
	  "nested":{"properties":{"x":{"type":"null"}}}}}`
	got, _ := json.Marshal(sample(json.RawMessage(schema), "", 0))
	const want = `{"choice":0,"fixed":"c","kind":"bug","maybe":"mock","n":3,"nested":{"x":null},"ok":true,"tags":["mock"],"title":"Mock "}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestMain_CLI(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Run(context.Background(), []string{"--help"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "usage: codexd mock-model") || !strings.Contains(out.String(), "MOCK:slow") {
		t.Fatalf("--help: %d %q %q", code, out.String(), errb.String())
	}
	for _, args := range [][]string{{"--bogus"}, {"extra"}, {"--listen"}, {"--script", filepath.Join(t.TempDir(), "missing.json")}} {
		out.Reset()
		errb.Reset()
		if code := Run(context.Background(), args, &out, &errb); code != 2 || out.Len() != 0 || !strings.Contains(errb.String(), "codexd mock-model:") {
			t.Fatalf("%q: %d %q %q", args, code, out.String(), errb.String())
		}
	}
	out.Reset()
	errb.Reset()
	if code := Run(context.Background(), []string{"--listen", "256.0.0.1:1"}, &out, &errb); code != 1 {
		t.Fatalf("bad address: %d %q", code, errb.String())
	}
}

// TestRunServes runs the command: it prints the URL, serves, and stops
// when its context ends.
func TestRunServes(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(script, []byte(`{"rules":[{"respond":{"output":[{"type":"message","text":"from the script"}]}}]}`), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := newPipe()
	var errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- Run(ctx, []string{"--listen", "127.0.0.1:0", "--script", script}, outW, &errb) }()
	var url string
	select {
	case url = <-outR:
	case <-time.After(waitFor):
		t.Fatal("no URL printed")
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/v1") {
		t.Fatalf("printed %q", url)
	}
	if r := post(t, url, body("m", nil, user("hi"))); r.text() != "from the script" {
		t.Fatalf("answer %q", r.text())
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
	case <-time.After(waitFor):
		t.Fatal("Run did not return")
	}
	if !strings.Contains(errb.String(), "mock-model: #1 hi: rule 1") {
		t.Fatalf("log %q", errb.String())
	}
}
