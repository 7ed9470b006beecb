package integration

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/codexd/codexd/sandbox"
)

func TestMain(m *testing.M) {
	// An in-process exec-server runs a sandboxed process/start by running
	// this binary as the sandbox helper.
	sandbox.RunHelperIfRequested()
	goleak.VerifyTestMain(m)
}
