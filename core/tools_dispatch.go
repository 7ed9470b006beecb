package core

import (
	"fmt"
	"strings"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/core/tools"
)

// runTool runs one tool call and returns its output item for the history.
func (tr *turn) runTool(call prompt.Item) prompt.Item {
	args := call.Arguments
	if call.Type == prompt.TypeCustomToolCall {
		args = call.Input
	}
	var out string
	name := call.Name
	if tr.t.noTools {
		name = "" // none was offered: nothing runs
	}
	if call.Namespace != "" && name != "" {
		text, parts := tr.mcpToolCall(call.CallID, call.Namespace, call.Name, args)
		p := tr.t.core.modelInfo(tr.settings.Model).Truncation
		if parts == nil {
			return toolOutput(call, tools.TruncateForHistory(text, p.Mode, p.Limit))
		}
		for i := range parts {
			if parts[i].Type == "input_text" {
				parts[i].Text = tools.TruncateForHistory(parts[i].Text, p.Mode, p.Limit)
			}
		}
		item := toolOutput(call, "")
		item.Output, item.OutputContent = nil, parts
		return item
	}
	if hasNoEnvironment(tr.ctx) {
		// Codex 0.169 answers exec_command so in a turn without
		// environment access. apply_patch gets the same answer where the
		// turn offers it; where it does not (a model without it, such as
		// the mock's), Codex calls it unsupported, as it does with an
		// environment too (codexd still applies such a patch there).
		switch name {
		case tools.ExecCommand, tools.WriteStdin:
			return toolOutput(call, noEnvironmentText)
		case tools.ApplyPatch:
			info := tr.t.core.modelInfo(tr.settings.Model)
			if tr.t.core.toolOptions(tr.t, &info, tr.settings.Sandbox.Mode).ApplyPatch == "" {
				name = ""
				break
			}
			return toolOutput(call, noEnvironmentText)
		}
	}
	switch name {
	case tools.ViewImage:
		// Its output is an image, not a text to truncate.
		return tr.viewImage(call)
	case tools.ListMCPResources, tools.ListMCPResourceTemplates, tools.ReadMCPResource:
		out = tr.mcpResourceTool(name, args)
	case tools.ExecCommand:
		out = tr.execCommand(call.CallID, args)
	case tools.WriteStdin:
		out = tr.writeStdin(call.CallID, args)
	case tools.UpdatePlan:
		out = tr.updatePlan(args)
	case tools.ApplyPatch:
		input := args
		if call.Type == prompt.TypeFunctionCall {
			a, err := tools.ParsePatchArgs(args)
			if err != nil {
				out = err.Error()
				break
			}
			input = a.Input
		}
		out = tr.applyPatch(call.CallID, input, tr.settings.Cwd)
	case tools.RequestUserInput:
		if tr.settings.CollaborationMode != "plan" && !tr.t.core.cfg.RequestUserInputTool {
			// Offered as Codex offers it, and refused outside Plan mode as
			// Codex refuses it.
			out = "request_user_input is unavailable in Default mode"
			break
		}
		out = tr.requestUserInput(call.CallID, args)
	default:
		out = fmt.Sprintf("unsupported call: %s", call.Name)
	}
	p := tr.t.core.modelInfo(tr.settings.Model).Truncation
	return toolOutput(call, tools.TruncateForHistory(out, p.Mode, p.Limit))
}

// toolOutput is the history item answering call, in Codex's shape: a
// function_call_output or custom_tool_call_output with an id of its own.
func toolOutput(call prompt.Item, out string) prompt.Item {
	typ := prompt.TypeFunctionCallOutput
	if call.Type == prompt.TypeCustomToolCall {
		typ = prompt.TypeCustomToolCallOutput
	}
	return prompt.Item{Type: typ, ID: "fco_" + newUUIDv7(), CallID: call.CallID, Output: &out}
}

func (tr *turn) updatePlan(raw string) string {
	a, err := tools.ParsePlanArgs(raw)
	if err != nil {
		return err.Error()
	}
	ev := agent.PlanUpdated{Explanation: a.Explanation}
	for _, s := range a.Plan {
		status := s.Status
		if status == "in_progress" {
			status = "inProgress"
		}
		ev.Steps = append(ev.Steps, agent.PlanStep{Step: s.Step, Status: status})
	}
	tr.emit(ev)
	return tools.PlanUpdatedOutput
}

func (tr *turn) requestUserInput(callID, raw string) string {
	a, err := tools.ParseUserInputArgs(raw)
	if err != nil {
		return err.Error()
	}
	req := agent.UserInputRequest{CallID: callID}
	for _, q := range a.Questions {
		aq := agent.Question{ID: q.ID, Header: q.Header, Question: q.Question, IsOther: len(q.Options) > 0}
		for _, o := range q.Options {
			aq.Options = append(aq.Options, agent.QuestionOption{Label: o.Label, Description: o.Description})
		}
		req.Questions = append(req.Questions, aq)
	}
	ch := tr.request(callID)
	tr.emit(req)
	op, ok := tr.await(callID, ch)
	if !ok {
		return "aborted"
	}
	ans, _ := op.(agent.UserInputAnswer)
	var b strings.Builder
	b.WriteString("{\"answers\":{")
	first := true
	for _, q := range a.Questions {
		if !first {
			b.WriteString(",")
		}
		first = false
		fmt.Fprintf(&b, "%q:{\"answers\":[", q.ID)
		for i, v := range ans.Answers[q.ID] {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "%q", v)
		}
		b.WriteString("]}")
	}
	b.WriteString("}}")
	return b.String()
}

// shellQuote joins argv as a shell would read it back.
func shellQuote(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = quoteArg(a)
	}
	return strings.Join(parts, " ")
}

// quoteArg quotes one word as Codex shows it (the shlex crate's quote,
// which Codex's command lines go through): bare when every byte may stand
// unquoted, else single-quoted, else double-quoted with \ " $ ` escaped,
// cut into chunks quoted each their own way where no one way fits the
// whole word.
func quoteArg(a string) string {
	if a == "" {
		return "''"
	}
	var b strings.Builder
	for a != "" {
		n, how := quoteChunk(a)
		chunk := a[:n]
		a = a[n:]
		switch how {
		case quoteBare:
			b.WriteString(chunk)
		case quoteSingle:
			b.WriteString("'" + chunk + "'")
		default:
			b.WriteByte('"')
			for i := 0; i < len(chunk); i++ {
				if c := chunk[i]; c == '$' || c == '`' || c == '"' || c == '\\' {
					b.WriteByte('\\')
				}
				b.WriteByte(chunk[i])
			}
			b.WriteByte('"')
		}
	}
	return b.String()
}

const (
	quoteBare = 1 << iota
	quoteSingle
	quoteDouble
)

// quoteChunk is how much of a (not empty) one way of quoting covers, and
// the best such way.
func quoteChunk(a string) (int, int) {
	ok := quoteBare | quoteSingle | quoteDouble
	i := 0
	if a[0] == '^' {
		ok, i = quoteSingle, 1
	}
	for ; i < len(a); i++ {
		c := a[i]
		cur := ok
		if c >= 0x80 || !bareByte(c) {
			cur &^= quoteBare
		}
		if c == '\'' || c == '^' || c == '\\' {
			cur &^= quoteSingle
		}
		if c == '`' || c == '$' || c == '!' || c == '^' {
			cur &^= quoteDouble
		}
		if cur == 0 {
			break
		}
		ok = cur
	}
	switch {
	case ok&quoteBare != 0:
		return i, quoteBare
	case ok&quoteSingle != 0:
		return i, quoteSingle
	}
	return i, quoteDouble
}

// bareByte reports an ASCII byte that needs no quoting.
func bareByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("+-./:@]_", c) >= 0
}
