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
	ViewImage        = "view_image"
)

// Options choose the tools a turn offers; they follow the model's
// metadata (package modelinfo), as Codex's do.
type Options struct {
	// ApplyPatch is the apply_patch tool's type: "freeform" (a custom tool
	// with a Lark grammar), "function" (JSON arguments), or "" for none. A
	// model without it still edits files with `apply_patch <<'EOF'`
	// through exec_command.
	ApplyPatch string
	// NoShell offers neither exec_command nor write_stdin (shell type
	// "disabled").
	NoShell bool
	// WebSearch is the web_search tool's content types: "text",
	// "text_and_image", or "" for no web_search tool. It is run by the
	// provider, not by codexd.
	WebSearch string
	// WebSearchLive lets the provider's search reach the live web
	// (web_search = "live"); otherwise it uses its cache.
	WebSearchLive bool
	// CodeMode puts the tools in an additional_tools item (a "functions"
	// namespace) instead of the request's tools, the way Codex serves the
	// models of tool_mode code_mode_only.
	CodeMode bool
	// NoTools offers nothing (a title job, a read-only helper thread).
	NoTools bool
	// ViewImage offers view_image (a model that takes image input).
	ViewImage bool
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

func marshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func function(name, desc string, params schema) json.RawMessage {
	return marshal(schema{
		"type": "function", "name": name, "description": desc,
		"strict": false, "parameters": params,
	})
}

var specCache sync.Map // Options -> [2][]json.RawMessage

// Specs returns the request's tools, in Codex's order: exec_command,
// write_stdin, request_user_input, apply_patch, view_image, web_search. It is empty
// for a code-mode model, whose tools AdditionalTools gives. The result is
// shared: callers must not modify it.
func Specs(o Options) []json.RawMessage { return cached(o)[0] }

// AdditionalTools returns the tools of the additional_tools input item a
// code-mode model gets (one "functions" namespace holding the tools), or
// nil for another model. The result is shared.
func AdditionalTools(o Options) []json.RawMessage { return cached(o)[1] }

func cached(o Options) [2][]json.RawMessage {
	if v, ok := specCache.Load(o); ok {
		return v.([2][]json.RawMessage)
	}
	v, _ := specCache.LoadOrStore(o, build(o))
	return v.([2][]json.RawMessage)
}

func build(o Options) [2][]json.RawMessage {
	if o.NoTools {
		return [2][]json.RawMessage{{}, nil}
	}
	var fns []json.RawMessage
	if !o.NoShell {
		fns = append(fns, execCommandSpec(), writeStdinSpec())
	}
	fns = append(fns, requestUserInputSpec())
	switch o.ApplyPatch {
	case "freeform":
		fns = append(fns, applyPatchFreeformSpec())
	case "function":
		fns = append(fns, applyPatchFunctionSpec())
	}
	if o.ViewImage {
		fns = append(fns, viewImageSpec())
	}
	if o.CodeMode {
		ns := marshal(schema{"type": "namespace", "name": "functions", "description": "", "tools": fns})
		return [2][]json.RawMessage{{}, {ns}}
	}
	if o.WebSearch != "" {
		ws := schema{"type": "web_search", "external_web_access": o.WebSearchLive}
		if o.WebSearch == "text_and_image" {
			ws["search_content_types"] = []string{"text", "image"}
		}
		fns = append(fns, marshal(ws))
	}
	return [2][]json.RawMessage{fns, nil}
}

func execCommandSpec() json.RawMessage {
	return function(ExecCommand,
		"Starts a command on a PTY or with pipes and returns its output, or, while it still runs, a session ID to continue it with write_stdin.",
		object(schema{
			"cmd":               str("The shell command to run."),
			"justification":     str("Only with require_escalated: the approval question shown to the user; leave it out otherwise."),
			"login":             boolean("Run the shell with -l/-i semantics (true, the default) or without them (false)."),
			"max_output_tokens": num("Most tokens of output to return; 10000 by default, and policy may cap larger values."),
			"prefix_rule": schema{
				"type": "array", "items": schema{"type": "string"},
				"description": "Only with sandbox_permissions \"require_escalated\": a command prefix the user may approve for good, e.g. [\"git\", \"pull\"].",
			},
			"sandbox_permissions": schema{
				"type": "string", "enum": []string{"use_default", "require_escalated"},
				"description": "Sandboxing of this command: use_default (the default) keeps the sandbox, require_escalated asks to run it without one.",
			},
			"shell":         str("The shell binary to start; the user's shell by default."),
			"tty":           boolean("Give the command a PTY (true), or plain pipes (false, the default)."),
			"workdir":       str("Directory to run the command in; the turn's cwd by default."),
			"yield_time_ms": num("How long to wait for output before returning, in ms: 10000 by default, within 250-30000."),
		}, "cmd"))
}

func writeStdinSpec() json.RawMessage {
	return function(WriteStdin,
		"Sends characters to a running exec_command session and returns what it printed since.",
		object(schema{
			"chars":             str("What to write to stdin; empty (the default) only polls for output."),
			"max_output_tokens": num("Most tokens of output to return; 10000 by default, and policy may cap larger values."),
			"session_id":        num("The session ID exec_command gave for the running process."),
			"yield_time_ms":     num("How long to wait for output, in ms: writes wait 250 by default and at most 30000; empty polls wait 5000-300000."),
		}, "session_id"))
}

func requestUserInputSpec() json.RawMessage {
	return function(RequestUserInput,
		"Puts one to three short questions to the user and waits for the answers. It works in Plan mode only.",
		object(schema{
			"questions": schema{
				"type":        "array",
				"description": "The questions for the user: preferably one, never more than three.",
				"items": object(schema{
					"header": str("A short label shown above the question (at most 12 characters)."),
					"id":     str("A stable snake_case identifier the answer is keyed by."),
					"options": schema{
						"type":        "array",
						"description": "Two or three choices that exclude each other, the recommended one first with \"(Recommended)\" after its label. Leave out an \"Other\" choice: the client adds a free-form one itself.",
						"items": object(schema{
							"description": str("One short sentence on what picking it implies."),
							"label":       str("What the user sees (one to five words)."),
						}, "label", "description"),
					},
					"question": str("The question, in one sentence."),
				}, "id", "header", "question", "options"),
			},
		}, "questions"))
}

func viewImageSpec() json.RawMessage {
	return function(ViewImage,
		"Shows you an image file from the local filesystem, for when you need to look at it.",
		object(schema{"path": str("The image file's path.")}, "path"))
}

func applyPatchFunctionSpec() json.RawMessage {
	return function(ApplyPatch, applyPatchDescription,
		object(schema{"input": str("The whole patch, from \"*** Begin Patch\" to \"*** End Patch\".")}, "input"))
}

func applyPatchFreeformSpec() json.RawMessage {
	return marshal(schema{
		"type": "custom", "name": ApplyPatch,
		"description": "Edits files with a patch. The tool is freeform: send the patch itself, not JSON.",
		"format":      schema{"type": "grammar", "syntax": "lark", "definition": applyPatchGrammar},
	})
}

// applyPatchGrammar is the patch language in Lark, the grammar the model's
// sampling is held to.
const applyPatchGrammar = `start: "*** Begin Patch" LF file_op+ "*** End Patch" LF?

file_op: add_file | delete_file | update_file
add_file: "*** Add File: " path LF added+
delete_file: "*** Delete File: " path LF
update_file: "*** Update File: " path LF move_to? hunk?

path: /(.+)/
added: "+" /(.*)/ LF -> line
move_to: "*** Move to: " path LF
hunk: (hunk_header | hunk_line)+ end_of_file?
hunk_header: ("@@" | "@@ " /(.+)/) LF
hunk_line: (" " | "-" | "+") /(.*)/ LF
end_of_file: "*** End of File" LF

%import common.LF
`

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
