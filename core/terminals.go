package core

import (
	"slices"
	"strconv"

	"github.com/codexd/codexd/agent"
)

// The thread's background terminals (agent.Terminals) are its unified-exec
// sessions: /ps lists them, /stop ends them.

// BackgroundTerminals lists the thread's running exec_command sessions,
// oldest first.
func (t *thread) BackgroundTerminals() []agent.Terminal {
	e := t.exec
	e.mu.Lock()
	procs := make([]*execProc, 0, len(e.procs))
	for _, p := range e.procs {
		if p != nil {
			procs = append(procs, p)
		}
	}
	e.mu.Unlock()
	slices.SortFunc(procs, func(a, b *execProc) int { return a.start.Compare(b.start) })
	out := make([]agent.Terminal, 0, len(procs))
	for _, p := range procs {
		p.mu.Lock()
		exited := p.exited
		p.mu.Unlock()
		if exited {
			continue
		}
		// The model's command line, as Codex lists it (the shell's last
		// argument), not the shell invocation.
		cmd := p.command
		if n := len(p.argv); n > 0 {
			cmd = p.argv[n-1]
		}
		out = append(out, agent.Terminal{ProcessID: strconv.Itoa(p.id), ItemID: p.itemID, Command: cmd, Cwd: p.cwd})
	}
	return out
}

// TerminateTerminal stops the session processID.
func (t *thread) TerminateTerminal(processID string) bool {
	id, err := strconv.Atoi(processID)
	if err != nil {
		return false
	}
	e := t.exec
	e.mu.Lock()
	p := e.procs[id]
	if p != nil {
		delete(e.procs, id)
	}
	e.mu.Unlock()
	if p == nil {
		return false
	}
	p.terminate()
	return true
}

// CleanTerminals stops every session of the thread.
func (t *thread) CleanTerminals() { t.exec.closeAll() }
