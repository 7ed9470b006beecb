package core

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/core/tools"
)

// awaitRequiredMCP fails a thread's start when one of its required MCP
// servers cannot start, as Codex does; the others never hold it back.
func (t *thread) awaitRequiredMCP(ctx context.Context) error {
	if t.mcp == nil {
		return nil
	}
	return t.mcp.AwaitRequired(ctx)
}

// withMCPTools adds the MCP tools to a request's tools where Codex 0.169
// puts them: the resource tools after write_stdin, the servers'
// namespaces before web_search. The tools are those of the servers ready
// now, so a server that becomes ready later is in the next request.
func (tr *turn) withMCPTools(specs []json.RawMessage, opts tools.Options) []json.RawMessage {
	m := tr.t.mcp
	if m == nil || opts.NoTools || opts.CodeMode || !m.HasServers() {
		return specs
	}
	ts := m.Tools()
	tr.mcpTools = ts
	out := make([]json.RawMessage, 0, len(specs)+3+len(ts))
	at := 0
	if !opts.NoShell {
		at = 2 // after exec_command and write_stdin
	}
	at = min(at, len(specs))
	out = append(out, specs[:at]...)
	out = append(out, tools.MCPResourceSpecs()...)
	rest := specs[at:]
	tail := []json.RawMessage(nil)
	if opts.WebSearch != "" && len(rest) > 0 {
		rest, tail = rest[:len(rest)-1], rest[len(rest)-1:]
	}
	out = append(out, rest...)
	out = append(out, tools.MCPNamespaces(ts)...)
	return append(out, tail...)
}

// mcpToolCall runs a call of an MCP tool as an MCPToolCall item. Once
// the item started, the model's output is Codex 0.169's content list
// (parts), else a plain text.
func (tr *turn) mcpToolCall(callID, namespace, name, args string) (out string, parts []prompt.Content) {
	m := tr.t.mcp
	var tool *agent.MCPTool
	if m != nil {
		ts := tr.mcpTools
		if ts == nil {
			ts = m.Tools()
		}
		if i := slices.IndexFunc(ts, func(x agent.MCPTool) bool { return x.Namespace == namespace && x.Callable == name }); i >= 0 {
			tool = &ts[i]
		}
	}
	if tool == nil {
		return fmt.Sprintf("unsupported call: %s%s", namespace, name), nil
	}
	rawArgs := json.RawMessage(args)
	if len(args) == 0 || !json.Valid(rawArgs) {
		rawArgs = json.RawMessage("null")
	}
	item := &agent.MCPToolCall{ID: callID, Server: tool.Server, Tool: tool.Name, Arguments: rawArgs, Status: agent.ItemStatusInProgress,
		ReadOnlyHint: tool.ReadOnlyHint}
	start := time.Now()
	tr.emit(agent.ItemStarted{Item: cloneMCP(item)})
	var res *agent.MCPResult
	var args0 json.RawMessage
	if args != "" {
		args0 = rawArgs
	}
	if !json.Valid([]byte(args)) && args != "" {
		item.Status, item.Error = agent.ItemStatusFailed, "failed to parse function arguments: invalid JSON"
		out = item.Error
	} else if refusal, interrupted := tr.approveMCPCall(callID, tool, args0); interrupted {
		return "aborted", nil
	} else if refusal != "" {
		item.Status, item.Error = agent.ItemStatusFailed, refusal
		out = refusal
	} else {
		var err error
		res, err = m.Call(tr.ctx, tool.Server, tool.Name, json.RawMessage(args), func(msg string) {
			tr.emit(agent.MCPToolCallProgress{ItemID: callID, Message: msg})
		})
		switch {
		case err != nil:
			item.Status, item.Error = agent.ItemStatusFailed, err.Error()
			out = "tool call error: " + err.Error()
			res = nil
		default:
			item.Result = res
			item.Status = agent.ItemStatusCompleted
			if res.IsError {
				item.Status = agent.ItemStatusFailed
			}
		}
	}
	item.Duration = time.Since(start)
	tr.emit(agent.ItemCompleted{Item: item, StartedAt: start})
	out, parts = mcpOutput(item.Duration, res, out)
	if !slices.Contains(tr.t.core.modelInfo(tr.settings.Model).InputModalities, "image") {
		parts = withoutImages(parts)
	}
	return out, parts
}

func cloneMCP(i *agent.MCPToolCall) *agent.MCPToolCall { c := *i; return &c }

// noImageInput stands for an image for a model that takes none (Codex's
// words).
const noImageInput = "<image content omitted because you do not support image input>"

// withoutImages replaces the images of parts with noImageInput, as Codex
// does for a model without image input.
func withoutImages(parts []prompt.Content) []prompt.Content {
	for i, p := range parts {
		if p.Type == "input_image" {
			parts[i] = prompt.Content{Type: "input_text", Text: noImageInput}
		}
	}
	return parts
}

// mcpOutput is what the model gets for a call, as Codex 0.169 sends it
// (observed side by side): a "Wall time" header and "Output:", then the
// structured content as JSON text when there is some; else a content list,
// the header then each content block (text as input_text, an image as
// input_image with its data URL, any other block as its JSON); a call
// without a result gets the header and the error's text (msg).
func mcpOutput(d time.Duration, res *agent.MCPResult, msg string) (string, []prompt.Content) {
	header := fmt.Sprintf("Wall time: %.4f seconds\nOutput:", d.Seconds())
	if res == nil {
		return "", []prompt.Content{{Type: "input_text", Text: header}, {Type: "input_text", Text: msg}}
	}
	if len(res.StructuredContent) > 0 && string(res.StructuredContent) != "null" {
		return header + "\n" + string(res.StructuredContent), nil
	}
	parts := []prompt.Content{{Type: "input_text", Text: header}}
	for _, raw := range res.Content {
		var c struct {
			Type, Text, Data, MimeType string
		}
		_ = json.Unmarshal(raw, &c)
		switch c.Type {
		case "text":
			parts = append(parts, prompt.Content{Type: "input_text", Text: c.Text})
		case "image":
			// Codex sends an image at detail "high".
			parts = append(parts, prompt.Content{Type: "input_image", ImageURL: "data:" + c.MimeType + ";base64," + c.Data, Detail: "high"})
		default:
			parts = append(parts, prompt.Content{Type: "input_text", Text: string(raw)})
		}
	}
	return "", parts
}

// mcpResourceTool answers list_mcp_resources, list_mcp_resource_templates
// and read_mcp_resource.
func (tr *turn) mcpResourceTool(name, args string) string {
	m := tr.t.mcp
	if m == nil {
		return fmt.Sprintf("unsupported call: %s", name)
	}
	a, err := tools.ParseMCPResourceArgs(args)
	if err != nil {
		return err.Error()
	}
	var out string
	switch name {
	case tools.ListMCPResources:
		out, err = m.ListResources(tr.ctx, a.Server, a.Cursor)
	case tools.ListMCPResourceTemplates:
		out, err = m.ListResourceTemplates(tr.ctx, a.Server, a.Cursor)
	default:
		if a.Server == "" || a.URI == "" {
			return "failed to parse function arguments: server and uri are required"
		}
		out, err = m.ReadResource(tr.ctx, a.Server, a.URI)
	}
	if err != nil {
		return fmt.Sprintf("%s failed: %v", name, err)
	}
	return out
}
