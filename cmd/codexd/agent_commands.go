//go:build !execonly

package main

import (
	"io"

	"github.com/codexd/codexd/mockmodel"
)

// agentCommands are the commands that need the agent core. A build with
// the execonly tag leaves them out (see execonly.go).
func agentCommands() []command {
	return []command{
		{"exec", `exec [flags] "PROMPT"             run one agent turn non-interactively and print the answer`, runExec},
		{"app-server", "app-server [--listen URL]          serve Codex's app-server protocol (the TUI, IDEs, scripts)", runAppServer},
		{"login", "login --with-api-key | status         save an API key (stdin) in auth.json, or show the sign-in", runLogin},
		{"logout", "logout                             remove the stored sign-in (auth.json)", runLogout},
		{"mock-model", "mock-model [--listen HOST:PORT]    serve a scriptable mock Responses API, for offline runs", func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
			return mockmodel.Main(args, stdout, stderr)
		}},
	}
}
