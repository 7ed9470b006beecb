package main

import (
	"fmt"
	"io"
)

// runExec is `codexd exec "PROMPT"`: one agent turn through the in-process
// app-server client.
func runExec(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "--" {
		fmt.Fprintln(stderr, "codexd exec: runs a prompt now; to run a command use: codexd run -- CMD [ARGS...]")
		return 2
	}
	fmt.Fprintln(stderr, "codexd exec: not built yet")
	return 1
}
