package appserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
)

// registerShell binds thread/shellCommand.
func registerShell(s *Server) {
	register(s, appproto.ThreadShellCommand, s.threadShellCommand)
	threadScoped(s, appproto.MethodThreadShellCommand)
}

// threadShellCommand runs the user's command in the thread, as Codex's
// thread/shellCommand does: answered {} once submitted; the command's
// turn (or the running turn) carries its userShell item.
func (s *Server) threadShellCommand(ctx context.Context, c *call, p appproto.ThreadShellCommandParams) (appproto.ThreadShellCommandResponse, error) {
	cmd := strings.TrimSpace(p.Command)
	if cmd == "" {
		return appproto.ThreadShellCommandResponse{}, invalidRequest("command must not be empty")
	}
	var timeout time.Duration
	if p.TimeoutMs != nil {
		if *p.TimeoutMs < 0 {
			return appproto.ThreadShellCommandResponse{}, invalidParams(fmt.Sprintf("thread/shellCommand timeoutMs must be non-negative, got %d", *p.TimeoutMs))
		}
		timeout = time.Duration(*p.TimeoutMs) * time.Millisecond
		if timeout == 0 {
			timeout = -1 // zero asks for an immediate timeout
		}
	}
	t, err := s.loadedThread(p.ThreadID)
	if err != nil {
		return appproto.ThreadShellCommandResponse{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.st.unloaded {
		return appproto.ThreadShellCommandResponse{}, invalidRequest("thread not found: " + t.id)
	}
	if _, err := t.th.Submit(ctx, agent.ShellCommand{Command: cmd, Timeout: timeout}); err != nil {
		return appproto.ThreadShellCommandResponse{}, submitError("failed to start shell command: ", t.id, err)
	}
	c.respond(appproto.ThreadShellCommandResponse{}, nil)
	return appproto.ThreadShellCommandResponse{}, errDeferred
}
