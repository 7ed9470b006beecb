// Package mockmodel is a scriptable mock of the OpenAI Responses API: an
// http.Handler answering POST /v1/responses (and /responses) with
// server-sent events exactly as the real API streams them, so that codexd,
// and the real Codex, can run whole turns offline, in tests and in demos
// (`codexd exec --model-provider mock "PROMPT"`).
//
// What it answers is chosen per request, first match wins:
//
//  1. the rules of a [Script] (a JSON file, see below), in order;
//  2. a request that asks for structured output (text.format json_schema)
//     gets a JSON value that fits the schema (Codex's title job uses one);
//  3. a request past the window (Options.ContextWindow, or MOCK:window=N
//     in a user message) fails with context_length_exceeded; a compaction
//     request (its last input a user message asking for a checkpoint
//     summary) gets a summary; a review request (instructions asking for
//     the findings format, "overall_correctness") runs `git status --short
//     && git diff`, then answers findings JSON in Codex's format;
//  4. a marker in the latest user messages, such as MOCK:slow or
//     MOCK:exec CMD (see [Markers]);
//  5. the default script: ask for a command with exec_command, then, when
//     its output comes back as a function_call_output, stream an answer
//     that quotes it. A request whose tools include no exec_command is
//     answered with plain text instead.
//
// Every request is recorded (headers and body) as an [Exchange], which
// also tells whether the client went away before the response ended, the
// way interrupt and steer tests observe that the HTTP stream was dropped.
//
// # Script files
//
// A script is JSON:
//
//	{"rules": [
//	  {"name": "rate limited first",
//	   "when": {"request": 1},
//	   "respond": {"status": 429, "retryAfter": "1"}},
//	  {"when": {"userContains": "deploy", "step": 0},
//	   "respond": {"output": [{"type": "function_call", "name": "exec_command",
//	                           "arguments": {"cmd": "make deploy"}}]}},
//	  {"when": {"lastInput": "function_call_output"},
//	   "times": 1,
//	   "respond": {"output": [{"type": "message", "text": "Done:\n{{output}}", "deltas": 4}],
//	               "delayMs": 100}}
//	]}
//
// "when" (all given conditions must hold; an empty "when" matches any
// request): "request" (the request's 1-based number on this server),
// "userContains" (a substring of the last user message), "lastInput" (the
// type of the last input item), "callId" (the last input item is the
// output of that call), "outputContains" (a substring of the last
// function_call_output), "step" (how many function_call_output items
// follow the last user message), "tool" (the request offers a tool of that
// name), "hasSchema" (the request asks for structured output). "times"
// limits how often a rule fires (0: always).
//
// "respond": either an HTTP error, "status" (with "retryAfter",
// "retryAfterMs" and "error": {"message","type","code"} for the body), or a
// stream: "output" items of type "message" ("text", "deltas", "phase"),
// "function_call" ("name", "arguments" as an object or a JSON string,
// "callId"), "custom_tool_call" ("name", "input") and "reasoning"
// ("summary": list of strings, "text"); "delayMs" between deltas;
// "cutAfter": N closes the connection after N events; "stallAfter": N
// stops after N events and keeps the connection open, silent, until the
// client leaves; "fail": {"code","message"} ends with response.failed and
// "incomplete": "REASON" with response.incomplete; "usage"; "headers".
// Texts, arguments and inputs may use {{prompt}} (the last user message),
// {{output}} (the last function_call_output, from its "Output:" line on,
// as Codex formats tool output), {{rawOutput}}, {{callId}} and {{n}} (the
// request number).
//
// This package must never run the commands it asks for, nor know about
// codexd's core, threads or JSON-RPC: it only answers HTTP requests.
package mockmodel
