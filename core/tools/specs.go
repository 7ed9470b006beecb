// Package tools describes the tools the agent core offers a model, in the
// shapes Codex's models are trained on: their JSON specs, how their
// arguments are read (with Codex's defaults and bounds), and how their
// results are written back as function_call_output text.
//
// It is pure: no process, file or network. The core runs the tools; this
// package only says what they look like to the model, and must never grow
// side effects.
package tools

import (
	"encoding/json"
	"sync"
)

// Tool names.
const (
	ExecCommand      = "exec_command"
	WriteStdin       = "write_stdin"
	ApplyPatch       = "apply_patch"
	UpdatePlan       = "update_plan"
	RequestUserInput = "request_user_input"
)

// Options choose the tools a turn offers.
type Options struct {
	// ApplyPatch offers the apply_patch function tool. Without it a model
	// still edits files with `apply_patch <<'EOF'` through exec_command.
	ApplyPatch bool
	// RequestUserInput offers request_user_input.
	RequestUserInput bool
	// NoTools offers nothing (a title job, a read-only helper thread).
	NoTools bool
}

type schema = map[string]any

func str(desc string) schema {
	s := schema{"type": "string"}
	if desc != "" {
		s["description"] = desc
	}
	return s
}

func num(desc string) schema     { return schema{"type": "number", "description": desc} }
func boolean(desc string) schema { return schema{"type": "boolean", "description": desc} }

func object(props schema, required ...string) schema {
	o := schema{"type": "object", "properties": props, "additionalProperties": false}
	if required != nil {
		o["required"] = required
	}
	return o
}

func function(name, desc string, params schema) json.RawMessage {
	b, err := json.Marshal(schema{
		"type": "function", "name": name, "description": desc,
		"strict": false, "parameters": params,
	})
	if err != nil {
		panic(err)
	}
	return b
}

var specCache sync.Map // Options -> []json.RawMessage

// Specs returns the tool specs of a request, in a stable order. The result
// is shared: callers must not modify it.
func Specs(o Options) []json.RawMessage {
	if v, ok := specCache.Load(o); ok {
		return v.([]json.RawMessage)
	}
	v, _ := specCache.LoadOrStore(o, specs(o))
	return v.([]json.RawMessage)
}

func specs(o Options) []json.RawMessage {
	if o.NoTools {
		return []json.RawMessage{}
	}
	specs := []json.RawMessage{execCommandSpec(), writeStdinSpec(), updatePlanSpec()}
	if o.ApplyPatch {
		specs = append(specs, applyPatchSpec())
	}
	if o.RequestUserInput {
		specs = append(specs, requestUserInputSpec())
	}
	return specs
}

func execCommandSpec() json.RawMessage {
	return function(ExecCommand,
		"Runs a command in a PTY or with pipes, returning its output, or a session ID to continue it with write_stdin while it runs.",
		object(schema{
			"cmd":               str("Shell command to execute."),
			"workdir":           str("Working directory of the command; defaults to the turn's cwd."),
			"shell":             str("Shell binary to launch; defaults to the user's shell."),
			"login":             boolean("Whether to run the shell with -l semantics; defaults to true."),
			"tty":               boolean("Run the command on a PTY, so that write_stdin can type into it; defaults to false (pipes)."),
			"yield_time_ms":     num("How long to wait for output before returning, in ms (default 10000, range 250-30000); returns at once when the command finishes."),
			"max_output_tokens": num("Most tokens of output to return (default 10000); the middle of longer output is cut."),
			"sandbox_permissions": schema{
				"type": "string", "enum": []string{"use_default", "require_escalated"},
				"description": "use_default (the default) runs in the sandbox; require_escalated asks the user to run the command without it.",
			},
			"justification": str("With require_escalated: the question to ask the user, saying why the command needs to leave the sandbox."),
			"prefix_rule": schema{
				"type": "array", "items": schema{"type": "string"},
				"description": "With require_escalated: a command prefix the user may allow for good (e.g. [\"npm\", \"test\"]).",
			},
		}, "cmd"))
}

func writeStdinSpec() json.RawMessage {
	return function(WriteStdin,
		"Writes characters to the stdin of a running exec_command session, or polls it for output.",
		object(schema{
			"session_id":        num("Session ID that exec_command returned."),
			"chars":             str("Characters to write (tty sessions only); empty or omitted to just poll for output."),
			"yield_time_ms":     num("How long to wait for output, in ms (writes: default 250, at most 30000; empty polls: 5000-300000)."),
			"max_output_tokens": num("Most tokens of output to return (default 10000)."),
		}, "session_id"))
}

func updatePlanSpec() json.RawMessage {
	return function(UpdatePlan,
		"Updates the task plan.\nGive an optional explanation and the list of steps, each with a status. At most one step is in_progress at a time.",
		object(schema{
			"explanation": str(""),
			"plan": schema{
				"type":        "array",
				"description": "The steps of the plan.",
				"items": object(schema{
					"step": str(""),
					"status": schema{
						"type": "string", "enum": []string{"pending", "in_progress", "completed"},
						"description": "One of: pending, in_progress, completed",
					},
				}, "step", "status"),
			},
		}, "plan"))
}

func applyPatchSpec() json.RawMessage {
	return function(ApplyPatch, applyPatchDescription,
		object(schema{"input": str("The entire contents of the apply_patch command.")}, "input"))
}

const applyPatchDescription = `Edits files with a patch.
A patch is a file-oriented diff between "*** Begin Patch" and "*** End Patch". Each file section starts with a header:
*** Add File: <path>      then the new file's lines, each starting with "+"
*** Delete File: <path>   nothing follows
*** Update File: <path>   optionally "*** Move to: <new path>", then hunks
A hunk starts with "@@" (optionally followed by a line such as a class or function header that locates it), then lines starting with " " (context, unchanged), "-" (removed) or "+" (added). Give about three lines of context around each change; "*** End of File" marks a hunk that ends the file.
Paths are relative to the working directory (or absolute).
Example:
*** Begin Patch
*** Update File: src/app.py
@@ def greet():
-    print("Hi")
+    print("Hello, world!")
*** End Patch`

func requestUserInputSpec() json.RawMessage {
	return function(RequestUserInput,
		"Asks the user one to three short questions and waits for the answers.",
		object(schema{
			"questions": schema{
				"type": "array",
				"items": object(schema{
					"id":       str("Stable identifier of the question (snake_case)."),
					"header":   str("Short header shown above the question."),
					"question": str("The question."),
					"options": schema{
						"type": "array",
						"items": object(schema{
							"label":       str("Label of the choice."),
							"description": str("What choosing it means."),
						}, "label", "description"),
					},
				}, "id", "header", "question"),
			},
		}, "questions"))
}
