//go:build execonly

package main

// A build with the execonly tag is codexd for a machine that only
// executes for an agent elsewhere: exec-server and run, without the agent
// core, the model client, the store and their dependencies, which every
// codexd process would otherwise map and initialise (the binary is about
// half the size, and so is the file-backed part of the exec-server's RSS):
//
//	go build -tags execonly -o codexd-exec ./cmd/codexd
func agentCommands() []command { return nil }
