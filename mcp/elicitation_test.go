package mcp

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/codexd/codexd/config"
)

// A server's elicitation/create reaches Options.Elicit with its form, and
// each answer goes back to the server as given; without Elicit, every
// elicitation is declined.
func TestElicitationRoundTrip(t *testing.T) {
	var mu sync.Mutex
	var seen []Elicitation
	answer := ElicitAnswer{}
	m := New([]config.MCPServer{stdio("ts")}, Options{Elicit: func(_ context.Context, e Elicitation) ElicitAnswer {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, e)
		return answer
	}})
	defer m.Close()
	m.Start()
	waitState(t, m, "ts", StateReady)
	for _, c := range []struct {
		answer ElicitAnswer
		want   string
	}{
		{ElicitAnswer{Action: "accept", Content: map[string]any{"name": "Ada"}}, `action=accept content={"name":"Ada"}`},
		{ElicitAnswer{Action: "decline"}, `action=decline content=null`},
		{ElicitAnswer{Action: "cancel"}, `action=cancel content=null`},
		{ElicitAnswer{Action: "bogus"}, `action=decline content=null`},
	} {
		mu.Lock()
		answer = c.answer
		mu.Unlock()
		out, err := call(t, m, "ts", "elicit", `{"message":"Who are you?"}`)
		if err != nil || out != c.want {
			t.Fatalf("%+v: %q %v", c.answer, out, err)
		}
	}
	mu.Lock()
	e := seen[0]
	mu.Unlock()
	if e.Server != "ts" || e.Mode != "form" || e.Message != "Who are you?" || !strings.Contains(string(e.RequestedSchema), `"name":{"description":"your name","type":"string"}`) {
		t.Fatalf("elicitation: %+v %s", e, e.RequestedSchema)
	}

	plain := New([]config.MCPServer{stdio("ts")}, Options{})
	defer plain.Close()
	plain.Start()
	waitState(t, plain, "ts", StateReady)
	if out, err := call(t, plain, "ts", "elicit", `{}`); err != nil || out != "action=decline content=null" {
		t.Fatalf("without a handler: %q %v", out, err)
	}
}
