package appserver

import "testing"

// TestConfigTypeErrorEnumTables: a table given for model_verbosity,
// model_reasoning_summary or sandbox_mode is read as Codex 0.169 reads an
// enum's table (its one key the variant, a unit variant's value an empty
// table), with the messages Codex answered (probe of config/value/write).
func TestConfigTypeErrorEnumTables(t *testing.T) {
	for _, tc := range []struct {
		key  string
		val  any
		want string
	}{
		{"model_verbosity", map[string]any{}, "wanted exactly 1 element, found 0 elements\nin `model_verbosity`\n"},
		{"model_verbosity", map[string]any{"low": int64(1)}, "expected table, found integer\nin `model_verbosity`\n"},
		{"model_verbosity", map[string]any{"a": int64(1), "b": int64(2)}, "wanted exactly 1 element, more than 1 element\nin `model_verbosity`\n"},
		{"model_verbosity", map[string]any{"low": map[string]any{}}, ""},
		{"model_reasoning_summary", map[string]any{"none": map[string]any{}}, ""},
		{"sandbox_mode", map[string]any{"read-only": map[string]any{}}, ""},
		// Not tables: as before.
		{"model_verbosity", int64(3), "invalid type: unit variant, expected string only\nin `model_verbosity`\n"},
		{"sandbox_mode", "zz", "unknown variant `zz`, expected one of `read-only`, `workspace-write`, `danger-full-access`\nin `sandbox_mode`\n"},
	} {
		if got := configTypeError(map[string]any{tc.key: tc.val}, nil); got != tc.want {
			t.Errorf("%s = %v: %q, want %q", tc.key, tc.val, got, tc.want)
		}
	}
}

// TestConfigTypeErrorMCPTransport: an MCP server whose values are well
// typed but that has neither command nor url is refused as Codex 0.169
// refuses it (differential session config-write-types).
func TestConfigTypeErrorMCPTransport(t *testing.T) {
	cfg := map[string]any{"mcp_servers": map[string]any{"p": map[string]any{"default_tools_approval_mode": map[string]any{"auto": map[string]any{}}}}}
	if got, want := configTypeError(cfg, nil), "invalid transport\nin `mcp_servers.p`\n"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
}
