package mockmodel_test

import (
	"fmt"

	"github.com/codexd/codexd/mockmodel"
)

// The script of the package documentation.
func ExampleParseScript() {
	sc, err := mockmodel.ParseScript([]byte(`{"rules": [
	  {"name": "rate limited first",
	   "when": {"request": 1},
	   "respond": {"status": 429, "retryAfter": "1"}},
	  {"when": {"userContains": "deploy", "step": 0},
	   "respond": {"output": [{"type": "function_call", "name": "exec_command",
	                           "arguments": {"cmd": "make deploy"}}]}},
	  {"when": {"lastInput": "function_call_output"},
	   "times": 1,
	   "respond": {"output": [{"type": "message", "text": "Done:\n{{output}}", "deltas": 4}],
	               "delayMs": 100}}
	]}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(len(sc.Rules), sc.Rules[0].Name, sc.Rules[1].Respond.Output[0].Name)
	// Output: 3 rate limited first exec_command
}
