package prompt

import (
	"encoding/json"
	"testing"
)

func TestItemJSON(t *testing.T) {
	cases := []struct {
		it   Item
		want string
	}{
		{Message("user", "hi"), `{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}`},
		{Message("assistant", "yo"), `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"yo"}]}`},
		{FunctionOutput("call_1", ""), `{"type":"function_call_output","call_id":"call_1","output":""}`},
		{Item{Type: TypeFunctionCall, Name: "exec_command", Arguments: `{"cmd":"ls"}`, CallID: "call_1"},
			`{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"ls\"}","call_id":"call_1"}`},
	}
	for _, c := range cases {
		b, err := json.Marshal(c.it)
		if err != nil || string(b) != c.want {
			t.Errorf("got %s (%v), want %s", b, err, c.want)
		}
		var back Item
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		b2, _ := json.Marshal(back)
		if string(b2) != c.want {
			t.Errorf("round trip %s", b2)
		}
	}
}
