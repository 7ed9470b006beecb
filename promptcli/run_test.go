package promptcli

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/codexd/codexd/config"
	"github.com/codexd/codexd/mockmodel"
)

// The default script: the model runs a command through the exec-server and
// the answer, quoting its output, streams to stdout.
func TestDefaultScriptHuman(t *testing.T) {
	e := newEnv(t)
	r := e.exec(Options{Prompt: "list the files here"}, config.LoadOptions{})
	if r.code != ExitCompleted {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	wantOut := "I ran `" + mockmodel.DefaultCommand + "`. It printed:\n\n```\nhello from the mock\nmarker.txt\n```\n"
	if r.stdout != wantOut {
		t.Errorf("stdout = %q, want %q", r.stdout, wantOut)
	}
	for _, want := range []string{
		"--------\nworkdir: " + e.dir + "\nmodel: ",
		"\nprovider: mock\napproval: never\nsandbox: read-only\n",
		"--------\nuser\nlist the files here\n",
		"exec\n/bin/bash -lc '" + mockmodel.DefaultCommand + "' in " + e.dir + "\n succeeded in ",
		":\nhello from the mock\nmarker.txt\ncodex\ntokens used: ",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "It printed") {
		t.Errorf("the answer went to stderr too:\n%s", r.stderr)
	}
}

func TestDefaultScriptJSON(t *testing.T) {
	e := newEnv(t)
	r := e.exec(Options{Prompt: "list the files here", JSON: true}, config.LoadOptions{})
	if r.code != ExitCompleted {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	evs := decodeEvents(t, r.stdout)
	want := []string{"thread.started", "turn.started", "item.started:command_execution:in_progress",
		"item.completed:command_execution:completed", "item.completed:agent_message", "turn.completed"}
	if got := sigs(evs); !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q\n%s", got, want, r.stdout)
	}
	if !regexp.MustCompile(`^{"type":"thread.started","thread_id":"[0-9a-f-]{36}"}$`).MatchString(evs[0].raw) {
		t.Errorf("thread.started = %s", evs[0].raw)
	}
	cmd := "/bin/bash -lc '" + mockmodel.DefaultCommand + "'"
	if s := evs[2].raw; s != `{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"`+cmd+`","aggregated_output":"","exit_code":null,"status":"in_progress"}}` {
		t.Errorf("item.started = %s", s)
	}
	if s := evs[3].raw; s != `{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"`+cmd+`","aggregated_output":"hello from the mock\nmarker.txt\n","exit_code":0,"status":"completed"}}` {
		t.Errorf("item.completed = %s", s)
	}
	if got := evs[4].Item; got["id"] != "item_1" || !strings.Contains(got["text"].(string), "marker.txt") {
		t.Errorf("agent_message = %s", evs[4].raw)
	}
	if !regexp.MustCompile(`^{"type":"turn.completed","usage":{"input_tokens":[1-9][0-9]*,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":[1-9][0-9]*,"reasoning_output_tokens":0}}$`).MatchString(evs[5].raw) {
		t.Errorf("turn.completed = %s", evs[5].raw)
	}
	if r.stderr != "" {
		t.Errorf("stderr = %q, want nothing in --json mode", r.stderr)
	}
}

func TestHelloStreamsToStdout(t *testing.T) {
	e := newEnv(t)
	r := e.exec(Options{Prompt: "MOCK:hello"}, config.LoadOptions{})
	if r.code != ExitCompleted || r.stdout != mockmodel.HelloText+"\n" {
		t.Fatalf("exit %d, stdout %q\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.HasSuffix(r.stderr, "codex\ntokens used: "+regexp.MustCompile(`tokens used: (\S+)\n$`).FindStringSubmatch(r.stderr)[1]+"\n") {
		t.Errorf("stderr = %q", r.stderr)
	}
	r = e.exec(Options{Prompt: "MOCK:hello", JSON: true}, config.LoadOptions{})
	evs := decodeEvents(t, r.stdout)
	if got, want := sigs(evs), []string{"thread.started", "turn.started", "item.completed:agent_message", "turn.completed"}; !slices.Equal(got, want) || r.code != 0 {
		t.Fatalf("exit %d, events %q, want %q", r.code, got, want)
	}
	if evs[2].raw != `{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Hello from the mock model."}}` {
		t.Errorf("agent_message = %s", evs[2].raw)
	}
}

// noRetries makes the mock's API errors fail the turn at once.
var noRetries = config.LoadOptions{Overrides: []string{"model_providers.mock.request_max_retries=0"}}

func TestErrorExits1(t *testing.T) {
	e := newEnv(t)
	const msg = "We’re currently experiencing high demand, which may cause temporary errors."
	r := e.exec(Options{Prompt: "MOCK:error"}, noRetries)
	if r.code != ExitFailed || r.stdout != "" {
		t.Fatalf("exit %d, stdout %q", r.code, r.stdout)
	}
	if strings.Count(r.stderr, "ERROR: "+msg+"\n") != 1 || !strings.HasSuffix(r.stderr, "ERROR: "+msg+"\n") {
		t.Errorf("stderr should end with the error, once:\n%s", r.stderr)
	}
	r = e.exec(Options{Prompt: "MOCK:error", JSON: true}, noRetries)
	evs := decodeEvents(t, r.stdout)
	if got, want := sigs(evs), []string{"thread.started", "turn.started", "error", "turn.failed"}; r.code != ExitFailed || !slices.Equal(got, want) {
		t.Fatalf("exit %d, events %q, want %q", r.code, got, want)
	}
	if evs[2].raw != `{"type":"error","message":"`+msg+`"}` || evs[3].raw != `{"type":"turn.failed","error":{"message":"`+msg+`"}}` {
		t.Errorf("error events:\n%s\n%s", evs[2].raw, evs[3].raw)
	}
}

// A retried stream shows each retry: a warning for a person, an error
// event for a program (as Codex).
func TestRetriesAreShown(t *testing.T) {
	e := newEnv(t)
	lo := config.LoadOptions{Overrides: []string{"model_providers.mock.stream_max_retries=1"}}
	r := e.exec(Options{Prompt: "MOCK:cut"}, lo)
	if r.code != ExitFailed || !strings.Contains(r.stderr, "warning: Reconnecting... 1/1 (") ||
		!strings.Contains(r.stderr, "ERROR: stream disconnected before completion after 1 retries") {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	r = e.exec(Options{Prompt: "MOCK:cut", JSON: true}, lo)
	if got, want := sigs(decodeEvents(t, r.stdout)), []string{"thread.started", "turn.started", "error", "error", "turn.failed"}; !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

const patchPrompt = `MOCK:patch
*** Begin Patch
*** Add File: new.txt
+hello
+world
*** Update File: marker.txt
@@
-hi
+hi there
*** End Patch`

func TestPatchIsAFileChange(t *testing.T) {
	e := newEnv(t)
	lo := config.LoadOptions{SandboxMode: config.SandboxWorkspaceWrite}
	r := e.exec(Options{Prompt: patchPrompt}, lo)
	if r.code != ExitCompleted {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	want := "apply patch\npatch: completed\n  A " + filepath.Join(e.dir, "new.txt") + " (+2 -0)\n  M " + filepath.Join(e.dir, "marker.txt") + " (+1 -1)\n"
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(e.dir, "new.txt")); string(b) != "hello\nworld\n" {
		t.Errorf("new.txt = %q", b)
	}
	if !strings.HasPrefix(r.stdout, "The patch tool said:") {
		t.Errorf("stdout = %q", r.stdout)
	}

	e = newEnv(t)
	r = e.exec(Options{Prompt: patchPrompt, JSON: true}, lo)
	evs := decodeEvents(t, r.stdout)
	if got, want := sigs(evs), []string{"thread.started", "turn.started", "item.started:file_change:in_progress",
		"item.completed:file_change:completed", "item.completed:agent_message", "turn.completed"}; r.code != 0 || !slices.Equal(got, want) {
		t.Fatalf("exit %d, events %q, want %q", r.code, got, want)
	}
	changes := `"changes":[{"path":"` + filepath.Join(e.dir, "new.txt") + `","kind":"add"},{"path":"` + filepath.Join(e.dir, "marker.txt") + `","kind":"update"}]`
	if s := evs[3].raw; s != `{"type":"item.completed","item":{"id":"item_0","type":"file_change",`+changes+`,"status":"completed"}}` {
		t.Errorf("file_change = %s", s)
	}
}

// Under read-only and "never", the patch is refused without asking.
func TestPatchRefusedReadOnly(t *testing.T) {
	e := newEnv(t)
	r := e.exec(Options{Prompt: patchPrompt, JSON: true}, config.LoadOptions{})
	if r.code != ExitCompleted {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "new.txt")); err == nil {
		t.Error("the patch was applied under read-only")
	}
	if strings.Contains(r.stderr, "declined") {
		t.Errorf("an approval was asked under never:\n%s", r.stderr)
	}
}

func TestPlanAndReasoning(t *testing.T) {
	e := newEnv(t)
	r := e.exec(Options{Prompt: "MOCK:plan"}, config.LoadOptions{})
	want := "plan\nThe mock model's plan.\n  [x] Read the code\n  [>] Make the change\n  [ ] Run the tests\n"
	if r.code != 0 || !strings.Contains(r.stderr, want) || r.stdout != "The plan is in place.\n" {
		t.Fatalf("exit %d, stdout %q\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = e.exec(Options{Prompt: "MOCK:plan", JSON: true}, config.LoadOptions{})
	evs := decodeEvents(t, r.stdout)
	if got, want := sigs(evs), []string{"thread.started", "turn.started", "item.started:todo_list", "item.completed:agent_message",
		"item.completed:todo_list", "turn.completed"}; !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	todo := `"id":"item_0","type":"todo_list","items":[{"text":"Read the code","completed":true},{"text":"Make the change","completed":false},{"text":"Run the tests","completed":false}]}}`
	if evs[2].raw != `{"type":"item.started","item":{`+todo || evs[4].raw != `{"type":"item.completed","item":{`+todo {
		t.Errorf("todo_list:\n%s\n%s", evs[2].raw, evs[4].raw)
	}

	r = e.exec(Options{Prompt: "MOCK:reason"}, config.LoadOptions{})
	if !strings.Contains(r.stderr, "thinking\n**Thinking** about how to greet\nDeciding to say hello.\n") || r.stdout != mockmodel.HelloText+"\n" {
		t.Fatalf("stdout %q\nstderr:\n%s", r.stdout, r.stderr)
	}
	r = e.exec(Options{Prompt: "MOCK:reason", JSON: true}, config.LoadOptions{})
	if evs := decodeEvents(t, r.stdout); len(evs) != 5 ||
		evs[2].raw != `{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Thinking** about how to greet\nDeciding to say hello."}}` {
		t.Fatalf("events:\n%s", r.stdout)
	}
}

func TestOutputLastMessage(t *testing.T) {
	e := newEnv(t)
	path := filepath.Join(t.TempDir(), "last.txt")
	r := e.exec(Options{Prompt: "list the files here", OutputLastMessage: path}, config.LoadOptions{})
	b, err := os.ReadFile(path)
	if r.code != 0 || err != nil {
		t.Fatalf("exit %d, %v", r.code, err)
	}
	if string(b)+"\n" != r.stdout {
		t.Errorf("file %q, stdout %q", b, r.stdout)
	}
	// With --json too.
	path2 := filepath.Join(t.TempDir(), "last.txt")
	r = e.exec(Options{Prompt: "MOCK:hello", JSON: true, OutputLastMessage: path2}, config.LoadOptions{})
	if b, _ := os.ReadFile(path2); r.code != 0 || string(b) != mockmodel.HelloText {
		t.Errorf("exit %d, file %q", r.code, b)
	}
	// A failed turn writes nothing.
	path3 := filepath.Join(t.TempDir(), "last.txt")
	if r = e.exec(Options{Prompt: "MOCK:error", OutputLastMessage: path3}, noRetries); r.code != ExitFailed {
		t.Fatalf("exit %d", r.code)
	}
	if _, err := os.Stat(path3); !os.IsNotExist(err) {
		t.Errorf("a failed turn wrote %s (%v)", path3, err)
	}
	// A file that cannot be written fails the run, after the answer.
	r = e.exec(Options{Prompt: "MOCK:hello", OutputLastMessage: filepath.Join(t.TempDir(), "no", "such", "dir")}, config.LoadOptions{})
	if r.code != ExitFailed || r.stdout != mockmodel.HelloText+"\n" || !strings.Contains(r.stderr, "ERROR: writing the last message:") {
		t.Errorf("exit %d, stdout %q\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestStdinPrompt(t *testing.T) {
	e := newEnv(t)
	for _, arg := range []string{"", "-"} {
		r := e.exec(Options{Prompt: arg, Stdin: strings.NewReader("MOCK:hello\n")}, config.LoadOptions{})
		if r.code != 0 || r.stdout != mockmodel.HelloText+"\n" || !strings.Contains(r.stderr, "user\nMOCK:hello\ncodex\n") {
			t.Errorf("prompt %q: exit %d, stdout %q\nstderr:\n%s", arg, r.code, r.stdout, r.stderr)
		}
	}
	// A piped stdin next to a prompt is appended to it, and reaches the
	// model: the marker it holds picks the answer.
	r := e.exec(Options{Prompt: "summarize this", Stdin: strings.NewReader("MOCK:hello")}, config.LoadOptions{})
	if r.code != 0 || r.stdout != mockmodel.HelloText+"\n" ||
		!strings.Contains(r.stderr, "Reading additional input from stdin...\n") ||
		!strings.Contains(r.stderr, "user\nsummarize this\n\n<stdin>\nMOCK:hello\n</stdin>\n") {
		t.Errorf("exit %d, stdout %q\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// A structured answer: the schema goes to the model (the mock answers
// with JSON that fits it).
func TestOutputSchema(t *testing.T) {
	e := newEnv(t)
	schema := filepath.Join(t.TempDir(), "schema.json")
	if err := os.WriteFile(schema, []byte(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"],"additionalProperties":false}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.exec(Options{Prompt: "name this", OutputSchemaFile: schema}, config.LoadOptions{})
	if r.code != 0 || r.stdout != `{"title":"Mock title"}`+"\n" {
		t.Fatalf("exit %d, stdout %q\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// --ephemeral keeps the thread off the disk; without it, its rollout is
// written under CODEX_HOME/sessions.
func TestEphemeral(t *testing.T) {
	rollouts := func(home string) []string {
		var out []string
		_ = filepath.WalkDir(filepath.Join(home, "sessions"), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				out = append(out, p)
			}
			return nil
		})
		return out
	}
	e := newEnv(t)
	if r := e.exec(Options{Prompt: "MOCK:hello", Ephemeral: true}, config.LoadOptions{}); r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	if got := rollouts(e.home); len(got) != 0 {
		t.Errorf("an ephemeral run wrote %q", got)
	}
	if r := e.exec(Options{Prompt: "MOCK:hello"}, config.LoadOptions{}); r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	if got := rollouts(e.home); len(got) != 1 {
		t.Errorf("rollouts %q, want one", got)
	}
}

// Nobody can approve: a command that needs an approval is declined, the
// model reads that, and stderr says so.
func TestApprovalDeclined(t *testing.T) {
	e := newEnv(t)
	lo := config.LoadOptions{ApprovalPolicy: config.ApprovalUntrusted, SandboxMode: config.SandboxWorkspaceWrite}
	r := e.exec(Options{Prompt: "MOCK:exec touch created.txt"}, lo)
	if r.code != ExitCompleted {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "created.txt")); err == nil {
		t.Error("the declined command ran")
	}
	if !strings.Contains(r.stderr, "declined running `/bin/bash -lc 'touch created.txt'`: approvals cannot be given in exec mode") ||
		!strings.Contains(r.stderr, "approval: untrusted\n") || !strings.Contains(r.stderr, " declined\n") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	if !strings.Contains(r.stdout, "rejected by user") {
		t.Errorf("the model did not read the refusal: %q", r.stdout)
	}
	r = e.exec(Options{Prompt: "MOCK:exec touch created.txt", JSON: true}, lo)
	evs := decodeEvents(t, r.stdout)
	if got, want := sigs(evs), []string{"thread.started", "turn.started", "item.started:command_execution:in_progress",
		"item.completed:command_execution:declined", "item.completed:agent_message", "turn.completed"}; !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	if !strings.Contains(r.stderr, "declined running") {
		t.Errorf("--json: stderr does not say what was declined: %q", r.stderr)
	}
}
