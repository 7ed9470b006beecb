//go:build !linux

package sandbox

import (
	"fmt"
	"os"
)

// RunHelperIfRequested refuses to run a wrapped command: confinement needs
// Linux's Landlock.
func RunHelperIfRequested() {
	if len(os.Args) < 2 || os.Args[1] != HelperArg {
		return
	}
	fmt.Fprintln(os.Stderr, "codexd sandbox: confinement needs Linux (Landlock); refusing to run the command unconfined")
	os.Exit(ExitCannotRun)
}
