package appserver

import (
	"testing"

	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
)

// TestUnknownSandboxModeIsSerdesVariantError: a sandbox mode that is not
// one of the three is refused with serde's unknown-variant text, as Codex
// 0.169 answers it (found by integration's TestAppDifferential).
func TestUnknownSandboxModeIsSerdesVariantError(t *testing.T) {
	e := newEnv(t, agenttest.Options{}, Config{})
	c := e.dial("sandbox-mode")
	c.initialize(nil)
	want := "Invalid request: unknown variant `nope`, expected one of `read-only`, `workspace-write`, `danger-full-access`"
	if err := c.callErr(appproto.MethodThreadStart, map[string]any{"sandbox": "nope"}); err.Code != -32600 || err.Message != want {
		t.Fatalf("thread/start sandbox nope: %+v, want -32600 %q", err, want)
	}
}
