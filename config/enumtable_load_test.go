package config

import "testing"

// TestEnumTablesLoad: Codex 0.169 accepts a unit variant written as a
// one-key table ({low = {}}, as config/value/write takes it), so a config
// holding one loads with that variant.
func TestEnumTablesLoad(t *testing.T) {
	src := "model_verbosity = { low = {} }\nmodel_reasoning_summary = { none = [] }\nsandbox_mode = { workspace-write = {} }\n"
	cfg, err := Parse([]byte(src), "", LoadOptions{Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Verbosity != "low" || cfg.ReasoningSummary != "none" || cfg.SandboxMode != SandboxWorkspaceWrite {
		t.Fatalf("verbosity %q, summary %q, sandbox %q", cfg.Verbosity, cfg.ReasoningSummary, cfg.SandboxMode)
	}
	for _, bad := range []string{"model_verbosity = { zz = {} }\n", "sandbox_mode = { read-only = 1 }\n", "model_verbosity = {}\n", "model_verbosity = { low = { a = 1 } }\n"} {
		if _, err := Parse([]byte(bad), "", LoadOptions{Getenv: env(nil)}); err == nil {
			t.Errorf("%q loaded", bad)
		}
	}
}
