package core

import (
	"testing"

	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/modelclient"
)

// A namespaced function call (an MCP tool's) keeps its namespace from the
// model's stream into the history and back into the next request: without
// it, the call is dispatched as an unknown plain function.
func TestModelItemKeepsNamespace(t *testing.T) {
	m := modelclient.Item{Type: prompt.TypeFunctionCall, ID: "fc_1", CallID: "call_1", Name: "echo", Namespace: "mcp__t", Arguments: `{}`}
	it := fromModelItem(m)
	if it.Namespace != "mcp__t" {
		t.Fatalf("from the model: namespace %q", it.Namespace)
	}
	if back := toModelItem(*it); back.Namespace != "mcp__t" {
		t.Fatalf("to the model: namespace %q", back.Namespace)
	}
}
