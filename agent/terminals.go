package agent

// Terminal is one of a thread's background terminals: an exec_command
// process still running after its call returned, which write_stdin can
// continue (Codex's /ps lists them).
type Terminal struct {
	// ProcessID is the session id the model writes to.
	ProcessID string
	// ItemID is the commandExecution item that started it.
	ItemID  string
	Command string
	Cwd     string
}

// Terminals is implemented by a Thread that keeps background terminals.
type Terminals interface {
	// BackgroundTerminals lists the running ones, oldest first.
	BackgroundTerminals() []Terminal
	// TerminateTerminal stops one; false when no such terminal runs.
	TerminateTerminal(processID string) bool
	// CleanTerminals stops them all.
	CleanTerminals()
}
