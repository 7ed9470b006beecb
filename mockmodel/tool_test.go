package mockmodel

import (
	"encoding/json"
	"strings"
	"testing"
)

// MOCK:tool calls the named tool, in its namespace when the request offers
// it in one (or the name reads mcp__SERVER__TOOL), with the JSON
// arguments, then quotes the output.
func TestToolMarker(t *testing.T) {
	_, url := start(t, nil)
	nsBody := func(input ...any) string {
		b, _ := json.Marshal(map[string]any{"model": "m", "stream": true, "input": input, "tools": []any{
			map[string]any{"type": "function", "name": "exec_command"},
			map[string]any{"type": "namespace", "name": "mcp__every_thing", "tools": []any{map[string]any{"type": "function", "name": "echo__twice"}}},
		}})
		return string(b)
	}
	prompt := `please MOCK:tool mcp__every_thing__echo__twice {"message": "hi there"}`
	r := post(t, url, nsBody(user(prompt)))
	name, args, callID := r.call(t)
	item := r.items()[0]
	if name != "echo__twice" || item["namespace"] != "mcp__every_thing" || args["message"] != "hi there" {
		t.Fatalf("call %v", item)
	}
	for _, e := range r.events {
		if e.name == "response.output_item.added" && e.data["item"].(map[string]any)["namespace"] != "mcp__every_thing" {
			t.Errorf("added item has no namespace: %v", e.data)
		}
	}
	call := fcall(callID, name, item["arguments"].(string))
	call["namespace"] = "mcp__every_thing"
	r = post(t, url, nsBody(user(prompt), call, fout(callID, `[{"type":"text","text":"Echo: hi there"}]`)))
	if items := r.items(); len(items) != 1 || items[0]["type"] != "message" || !strings.Contains(r.text(), "Echo: hi there") {
		t.Fatalf("final answer %v %q", items, r.text())
	}

	// Codex's MCP output, a content list after a "Wall time" part, is
	// quoted without that part.
	out := map[string]any{"type": "function_call_output", "call_id": callID, "output": []any{
		map[string]any{"type": "input_text", "text": "Wall time: 0.0042 seconds\nOutput:"}, map[string]any{"type": "input_text", "text": "Echo: hi"}}}
	r = post(t, url, nsBody(user(prompt), call, out))
	if txt := r.text(); !strings.Contains(txt, "```\nEcho: hi\n```") || strings.Contains(txt, "Wall time") {
		t.Fatalf("quoted MCP output %q", txt)
	}

	// A tool the request does not offer: mcp__S__T is split all the same;
	// any other name has no namespace; bad or missing JSON is {}.
	r = post(t, url, body("m", []string{"exec_command"}, user(`MOCK:tool mcp__gone__ping not json`)))
	if name, args, _ := r.call(t); name != "ping" || r.items()[0]["namespace"] != "mcp__gone" || len(args) != 0 {
		t.Fatalf("unoffered MCP tool: %v", r.items())
	}
	r = post(t, url, body("m", []string{"update_plan"}, user(`MOCK:tool update_plan`)))
	if name, _, _ := r.call(t); name != "update_plan" || r.items()[0]["namespace"] != nil {
		t.Fatalf("plain tool: %v", r.items())
	}
}
