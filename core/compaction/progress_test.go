package compaction

import (
	"strings"
	"testing"

	"github.com/codexd/codexd/core/prompt"
)

func call(id string) prompt.Item {
	return prompt.Item{Type: prompt.TypeFunctionCall, CallID: id, Name: "exec_command", Arguments: `{"cmd":"ls"}`}
}

func TestProgressKeepsTheTurnsCallsWithOutputs(t *testing.T) {
	hist := []prompt.Item{
		prompt.Message("user", "earlier task"),
		call("old"), prompt.FunctionOutput("old", "old output"),
		prompt.Message("assistant", "earlier answer"),
		prompt.Message("user", "the task"),
		prompt.Message("user", "<environment_context>\n</environment_context>"), // context, not the user's
		{Type: prompt.TypeReasoning, ID: "rs_1"},
		call("c1"), prompt.FunctionOutput("c1", "first output"),
		prompt.Message("assistant", "looking further"),
		call("c2"), prompt.FunctionOutput("c2", "second output"),
		prompt.FunctionOutput("nocall", "orphan"),
		call("pending"), // no output yet
	}
	got := Progress(hist, 10_000)
	var ids []string
	for _, it := range got {
		ids = append(ids, it.Type+":"+it.CallID+it.Text())
	}
	want := "function_call:c1|function_call_output:c1|message:looking further|function_call:c2|function_call_output:c2"
	if strings.Join(ids, "|") != want {
		t.Fatalf("progress\n %s\nwant\n %s", strings.Join(ids, "|"), want)
	}

	// A small budget keeps the newest units that fit, whole.
	got = Progress(hist, Tokens(hist[10:12]))
	if len(got) != 2 || got[0].CallID != "c2" || got[1].CallID != "c2" {
		t.Fatalf("small budget: %+v", got)
	}
	// Less than the newest unit: it is kept with its output cut.
	big := append(append([]prompt.Item(nil), hist[:5]...), call("c3"), prompt.FunctionOutput("c3", strings.Repeat("z", 40_000)))
	got = Progress(big, 1_000)
	if len(got) != 2 || got[1].CallID != "c3" || Tokens(got) > 1_000 || !strings.HasPrefix(*got[1].Output, "zzz") {
		t.Fatalf("cut: %d items, %d tokens", len(got), Tokens(got))
	}
	// Nothing since the user's message, or no user message at all.
	if got := Progress(hist[:5], 1_000); len(got) != 0 {
		t.Fatalf("nothing done yet: %+v", got)
	}
	if got := Progress([]prompt.Item{call("x"), prompt.FunctionOutput("x", "o")}, 1_000); got != nil {
		t.Fatalf("no user message: %+v", got)
	}
}

func TestInsertContextAboveTheLastUserMessage(t *testing.T) {
	ctx := []prompt.Item{prompt.Message("user", "<environment_context>\n</environment_context>")}
	texts := func(items []prompt.Item) string {
		var s []string
		for _, it := range items {
			s = append(s, strings.SplitN(it.Text(), "\n", 2)[0])
		}
		return strings.Join(s, "|")
	}
	rebuilt := Rebuild([]string{"one", "two"}, "S", 100)
	if got := texts(InsertContext(rebuilt, ctx)); got != "one|<environment_context>|two|"+SummaryPrefix {
		t.Fatalf("got %s", got)
	}
	rebuilt = Rebuild(nil, "S", 100)
	if got := texts(InsertContext(rebuilt, ctx)); got != "<environment_context>|"+SummaryPrefix {
		t.Fatalf("summary only: %s", got)
	}
	if got := texts(InsertContext(nil, ctx)); got != "<environment_context>" {
		t.Fatalf("empty: %s", got)
	}
}

// FuzzProgress: whatever a stored history holds, the progress kept never
// has a call without its output or an output without its call, and fits
// its budget unless it is the newest unit cut as far as it goes.
func FuzzProgress(f *testing.F) {
	f.Add("hello", "c", 5, int64(100))
	f.Add(strings.Repeat("é", 3000), "", 30, int64(50))
	f.Fuzz(func(t *testing.T, text, id string, n int, budget int64) {
		if n < 0 || n > 100 || budget < 0 || budget > 1<<20 {
			t.Skip()
		}
		hist := []prompt.Item{prompt.Message("user", "task")}
		for i := range n {
			switch i % 4 {
			case 0:
				hist = append(hist, prompt.Item{Type: prompt.TypeFunctionCall, CallID: id + string(rune('a'+i%7)), Arguments: text})
			case 1:
				hist = append(hist, prompt.FunctionOutput(id+string(rune('a'+(i+3)%7)), text))
			case 2:
				hist = append(hist, prompt.Message("assistant", text))
			default:
				hist = append(hist, prompt.Message("user", text))
			}
		}
		got := Progress(hist, budget)
		calls, outs := map[string]bool{}, map[string]bool{}
		for _, it := range got {
			if isCall(it) {
				calls[it.CallID] = true
			}
			if isOutput(it) {
				outs[it.CallID] = true
				if !calls[it.CallID] {
					t.Fatalf("output %q before or without its call", it.CallID)
				}
			}
		}
		for c := range calls {
			if !outs[c] {
				t.Fatalf("call %q kept without its output", c)
			}
		}
	})
}
