//go:build linux

package main

import "github.com/codexd/codexd/internal/netns"

// reexecInNetns runs this command again in a network namespace with only
// loopback, where both servers and the client then run.
func reexecInNetns() int {
	code, err := netns.Reexec(netnsEnv)
	if err != nil {
		fatalf("%v", err)
	}
	return code
}

func loopbackUp() error { return netns.LoopbackUp() }
