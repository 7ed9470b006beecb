//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// ownGroup runs cmd in a new process group, so that the server and
// whatever it starts are killed together.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }
