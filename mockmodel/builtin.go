package mockmodel

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/codexd/codexd/internal/lazyre"
)

// Markers are the in-message markers the mock understands, for ad-hoc use
// in a prompt. The latest user messages (back to the last assistant
// message, so that a steer inherits the marker of the turn it steers) are
// searched, newest first; the first marker found wins. ARG is the rest of
// the marker's line.
var Markers = []struct{ Marker, Does string }{
	{"MOCK:hello", `answers "Hello from the mock model." in 3 deltas`},
	{"MOCK:slow[=MS]", "answers in 10 deltas, MS (default 500) apart: for interrupt and steer"},
	{"MOCK:reason", "streams a reasoning summary, then answers"},
	{"MOCK:exec CMD", "asks for exec_command {cmd: CMD}, then quotes its output"},
	{"MOCK:escalate [CMD]", `asks for exec_command with sandbox_permissions "require_escalated" and a justification (an approval under on-request), then quotes its output`},
	{"MOCK:stdin", "starts `cat` on a tty with exec_command, writes a line with write_stdin, then quotes what came back"},
	{"MOCK:patch", "asks for apply_patch {input: the message's text after the marker line}, then reports the result"},
	{"MOCK:plan", "calls update_plan with a three-step plan, then answers"},
	{"MOCK:websearch QUERY", "searches the web for QUERY with the provider's web_search tool (a web_search_call item), then answers"},
	{"MOCK:proposeplan", "answers with a message holding a <proposed_plan> block between two lines of text, in deltas that split the tags (Plan mode)"},
	{"MOCK:error[=STATUS]", "answers HTTP STATUS (default 500) with an API error body"},
	{"MOCK:429[=SECONDS]", "answers HTTP 429 with Retry-After: SECONDS (default 1), once: the retry of the same request gets the hello answer"},
	{"MOCK:fail", "streams response.failed (server_error)"},
	{"MOCK:cut", "closes the connection in the middle of the answer"},
	{"MOCK:stall", "sends one delta, then nothing, holding the connection until the client leaves"},
	{"MOCK:bulk[=N] [TAG]", "asks for exec_command printing about N tokens (default 5000) of output, then answers in one short line naming N and TAG: a turn that grows the context without filling a screen"},
	{"MOCK:tool NAME [JSON]", "calls tool NAME as the model names it (mcp__SERVER__TOOL for an MCP tool, in namespace mcp__SERVER) with the JSON arguments (default {}), then quotes its output"},
	{"MOCK:window=N", "fails any request of this conversation past N tokens (4 bytes a token) with context_length_exceeded (as --context-window)"},
}

// DefaultCommand is what the default script asks to run.
const DefaultCommand = "echo hello from the mock; ls"

// bulkLine is the line MOCK:bulk's command repeats: 40 bytes with its
// newline, ten tokens.
const bulkLine = "bulk output of a long session, ten tok."

// BulkCommand prints about n tokens (four bytes a token) of output.
func BulkCommand(n int) string {
	return fmt.Sprintf("yes '%s' | head -n %d", bulkLine, max(n/10, 1))
}

// ProposedPlanMessage is MOCK:proposeplan's answer: text, a plan block
// (ProposedPlanText inside the tags), and text after it.
const ProposedPlanMessage = "Here is what I would do.\n<proposed_plan>\n" + ProposedPlanText + "</proposed_plan>\nSay the word and I start."

// ProposedPlanText is the plan inside ProposedPlanMessage's block.
const ProposedPlanText = "# Rename the flag\n\n1. Change the definition.\n2. Update the two callers.\n"

// HelloText is the plain answer (Codex's own mock said the same).
const HelloText = "Hello from the mock model."

const escalateJustification = "The mock model needs to run this outside the sandbox."

var markerRE = lazyre.Regexp{Expr: `MOCK:([A-Za-z0-9]+)(=[^\s]*)?([^\n]*)`}

// marker finds the marker that applies to r.
func (r *request) marker() (name, value, arg string, ok bool) {
	for i := len(r.input) - 1; i >= 0; i-- {
		it := r.input[i]
		if it.Type == "message" || it.Type == "" {
			if it.Role == "assistant" {
				break
			}
			if it.Role != "user" {
				continue
			}
			if m := markerRE.Get().FindStringSubmatch(text(it.Content)); m != nil {
				return strings.ToLower(m[1]), strings.TrimPrefix(m[2], "="), strings.TrimSpace(m[3]), true
			}
		}
	}
	return "", "", "", false
}

// builtin answers a request no rule matched; label names the behaviour.
func builtin(r *request) (resp Response, label string) {
	if r.schema != nil {
		v, _ := json.Marshal(sample(r.schema, "", 0))
		return Response{Output: []Output{{Type: "message", Text: string(v), Deltas: 1}}}, "schema"
	}
	if name, value, arg, ok := r.marker(); ok {
		if resp, ok := markerResponse(r, name, value, arg); ok {
			return resp, "MOCK:" + name
		}
	}
	if len(r.tools) > 0 && !r.hasTool("exec_command") {
		return textResponse(HelloText+" You said: {{prompt}}", 3), "default:text"
	}
	if r.step() == 0 {
		return callResponse("exec_command", map[string]any{"cmd": DefaultCommand, "yield_time_ms": 10000}), "default:exec"
	}
	return quoteResponse(r), "default:answer"
}

func markerResponse(r *request, name, value, arg string) (Response, bool) {
	num := func(def int) int {
		if n, err := strconv.Atoi(value); err == nil && n >= 0 {
			return n
		}
		return def
	}
	switch name {
	case "hello":
		return textResponse(HelloText, 3), true
	case "websearch":
		q := arg
		if q == "" {
			q = "codexd"
		}
		resp := textResponse("I searched the web for "+q+".", 3)
		resp.Output = append([]Output{{Type: "web_search_call", Input: q}}, resp.Output...)
		return resp, true
	case "proposeplan":
		return textResponse(ProposedPlanMessage, 17), true
	case "slow":
		words := strings.Fields("This answer is streamed slowly, one piece at a time, so that you can interrupt or steer it.")
		resp := textResponse(strings.Join(words, " "), 10)
		resp.DelayMs = num(500)
		return resp, true
	case "reason":
		resp := textResponse(HelloText, 3)
		resp.Output = append([]Output{{Type: "reasoning", Summary: []string{"**Thinking** about how to greet", "Deciding to say hello."}}}, resp.Output...)
		return resp, true
	case "exec", "escalate":
		if r.step() > 0 {
			return quoteResponse(r), true
		}
		cmd := arg
		if cmd == "" {
			cmd = DefaultCommand
			if name == "escalate" {
				cmd = "echo approved by the user"
			}
		}
		args := map[string]any{"cmd": cmd, "yield_time_ms": 10000}
		if name == "escalate" {
			args["sandbox_permissions"] = "require_escalated"
			args["justification"] = escalateJustification
		}
		return callResponse("exec_command", args), true
	case "tool":
		if r.step() > 0 {
			return quoteResponse(r), true
		}
		name, args, _ := strings.Cut(arg, " ")
		if name == "" {
			return Response{}, false
		}
		raw := json.RawMessage(strings.TrimSpace(args))
		if len(raw) == 0 || !json.Valid(raw) {
			raw = json.RawMessage(`{}`)
		}
		ns, fn := r.splitToolName(name)
		return Response{Output: []Output{{Type: "function_call", Name: fn, Namespace: ns, Arguments: raw}}}, true
	case "bulk":
		n := num(5000)
		if r.step() > 0 {
			return textResponse(fmt.Sprintf("Read about %d tokens of output. %s", n, arg), 2), true
		}
		return callResponse("exec_command", map[string]any{"cmd": BulkCommand(n), "yield_time_ms": 10000}), true
	case "stdin":
		switch r.step() {
		case 0:
			return callResponse("exec_command", map[string]any{"cmd": "cat", "tty": true, "yield_time_ms": 500}), true
		case 1:
			out, _ := r.lastOutput()
			return callResponse("write_stdin", map[string]any{"session_id": sessionID(text(out.Output)), "chars": "hello from write_stdin\n", "yield_time_ms": 500}), true
		}
		return quoteResponse(r), true
	case "patch":
		if r.step() > 0 {
			return textResponse("The patch tool said:\n\n{{rawOutput}}", 3), true
		}
		p := r.prompt()
		if i := strings.Index(p, "MOCK:patch"); i >= 0 {
			p = p[i:]
			if j := strings.IndexByte(p, '\n'); j >= 0 {
				p = p[j+1:]
			} else {
				p = ""
			}
		}
		return callResponse("apply_patch", map[string]any{"input": p}), true
	case "plan":
		if r.step() > 0 {
			return textResponse("The plan is in place.", 2), true
		}
		return callResponse("update_plan", map[string]any{
			"explanation": "The mock model's plan.",
			"plan": []map[string]string{
				{"step": "Read the code", "status": "completed"},
				{"step": "Make the change", "status": "in_progress"},
				{"step": "Run the tests", "status": "pending"},
			},
		}), true
	case "error":
		return Response{Status: num(500)}, true
	case "429":
		return Response{Status: 429, RetryAfter: strconv.Itoa(num(1))}, true
	case "fail":
		resp := textResponse(HelloText, 3)
		resp.Output = nil
		resp.Fail = &ErrorBody{Code: "server_error", Message: "The mock model failed on purpose."}
		return resp, true
	case "cut":
		resp := textResponse("This answer will be cut off in the middle.", 6)
		resp.CutAfter = 6 // created, in_progress, item and part added, 2 deltas
		return resp, true
	case "stall":
		resp := textResponse("This answer stalls.", 3)
		resp.StallAfter = 5 // created, in_progress, item and part added, 1 delta
		return resp, true
	}
	return Response{}, false
}

// splitToolName finds the namespace and name of a tool the model names
// NAMESPACE__NAME: a namespace tool of the request with that function
// first; else, for a name of the form mcp__SERVER__TOOL, namespace
// mcp__SERVER (a tool the request does not offer, called anyway, as a
// model may); else the name as it is, in no namespace.
func (r *request) splitToolName(full string) (namespace, name string) {
	for _, t := range r.nsTools {
		if full == t[0]+"__"+t[1] {
			return t[0], t[1]
		}
	}
	if rest, ok := strings.CutPrefix(full, "mcp__"); ok {
		if server, tool, ok := strings.Cut(rest, "__"); ok && server != "" && tool != "" {
			return "mcp__" + server, tool
		}
	}
	return "", full
}

var sessionRE = lazyre.Regexp{Expr: `session ID (\d+)`}

// sessionID finds the session id in exec_command's output ("Process
// running with session ID 3").
func sessionID(out string) any {
	if m := sessionRE.Get().FindStringSubmatch(out); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

func textResponse(s string, deltas int) Response {
	return Response{Output: []Output{{Type: "message", Text: s, Deltas: deltas}}}
}

func callResponse(name string, args map[string]any) Response {
	b, _ := json.Marshal(args)
	return Response{Output: []Output{{Type: "function_call", Name: name, Arguments: b}}}
}

// quoteResponse answers a tool output by quoting it, naming the command
// when the call was an exec_command.
func quoteResponse(r *request) Response {
	out, _ := r.lastOutput()
	what := "The tool"
	if call, ok := r.call(out.CallID); ok {
		var a struct {
			Cmd string `json:"cmd"`
		}
		if json.Unmarshal([]byte(call.Arguments), &a) == nil && a.Cmd != "" {
			what = fmt.Sprintf("I ran `%s`. It", a.Cmd)
		}
	}
	return textResponse(what+" printed:\n\n```\n{{output}}\n```", 4)
}

// sample makes a value that fits a JSON Schema, well enough for the
// schemas agents ask for (objects of strings, numbers, enums, arrays).
func sample(raw json.RawMessage, name string, depth int) any {
	var s struct {
		Type       any                        `json:"type"`
		Enum       []any                      `json:"enum"`
		Const      any                        `json:"const"`
		Properties map[string]json.RawMessage `json:"properties"`
		Items      json.RawMessage            `json:"items"`
		AnyOf      []json.RawMessage          `json:"anyOf"`
		OneOf      []json.RawMessage          `json:"oneOf"`
		MaxLength  *int                       `json:"maxLength"`
		Minimum    *float64                   `json:"minimum"`
	}
	if depth > 16 || json.Unmarshal(raw, &s) != nil {
		return nil
	}
	if s.Const != nil {
		return s.Const
	}
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	if len(s.AnyOf) > 0 {
		return sample(s.AnyOf[0], name, depth+1)
	}
	if len(s.OneOf) > 0 {
		return sample(s.OneOf[0], name, depth+1)
	}
	typ, _ := s.Type.(string)
	if l, ok := s.Type.([]any); ok && len(l) > 0 {
		typ, _ = l[0].(string)
	}
	if typ == "" && s.Properties != nil {
		typ = "object"
	}
	switch typ {
	case "object":
		o := map[string]any{}
		for k, v := range s.Properties {
			o[k] = sample(v, k, depth+1)
		}
		return o
	case "array":
		if len(s.Items) == 0 {
			return []any{}
		}
		return []any{sample(s.Items, name, depth+1)}
	case "integer", "number":
		if s.Minimum != nil {
			return *s.Minimum
		}
		return 0
	case "boolean":
		return true
	case "null":
		return nil
	}
	v := "mock"
	if name == "title" {
		v = "Mock title"
	}
	if s.MaxLength != nil && len(v) > *s.MaxLength {
		v = v[:max(*s.MaxLength, 0)]
	}
	return v
}
