package execproto

import "encoding/json"

// The process/* methods and notifications, as Codex 0.169 names them.
const (
	MethodProcessStart     = "process/start"
	MethodProcessRead      = "process/read"
	MethodProcessWrite     = "process/write"
	MethodProcessSignal    = "process/signal"
	MethodProcessTerminate = "process/terminate"

	// Notifications from server to client. All three carry the process's
	// seq, from one counter per process shared with the chunks of
	// process/read.
	MethodProcessOutput = "process/output"
	MethodProcessExited = "process/exited"
	MethodProcessClosed = "process/closed"
)

// OutputStream names the stream a chunk of output came from. A process
// started with a tty has a single stream, "pty".
type OutputStream string

const (
	StreamStdout OutputStream = "stdout"
	StreamStderr OutputStream = "stderr"
	StreamPty    OutputStream = "pty"
)

// WriteStatus is the outcome of process/write. Codex answers an unknown
// process, or one started without stdin, with a status rather than an error.
type WriteStatus string

const (
	WriteAccepted       WriteStatus = "accepted"
	WriteUnknownProcess WriteStatus = "unknownProcess"
	WriteStdinClosed    WriteStatus = "stdinClosed"
	// WriteStarting answers a write that raced the process/start of the same
	// id, before the child existed.
	WriteStarting WriteStatus = "starting"
)

// ProcessSignal names a signal process/signal can deliver. Codex 0.169
// accepts only "interrupt" (SIGINT to the process group); any other value
// fails decoding with -32602 "unknown variant `x`, expected `interrupt`".
type ProcessSignal string

const SignalInterrupt ProcessSignal = "interrupt"

// SandboxType is reported by process/start: SandboxTypeNone when no
// sandbox was asked for, SandboxTypeLinuxSeccomp when the process runs
// confined (Codex's name for its Linux sandbox; codexd's is Landlock with
// a seccomp filter).
type SandboxType string

const (
	SandboxTypeNone         SandboxType = "none"
	SandboxTypeLinuxSeccomp SandboxType = "linuxSeccomp"
)

// ProcessStartParams are the params of process/start.
//
// Codex 0.169 also accepts network members (enforceManagedNetwork,
// managedNetwork, ...); codexd ignores them, as unknown members are
// ignored. Sandbox is enforced (see SandboxContext).
type ProcessStartParams struct {
	// ProcessID is chosen by the client and scoped to its session; it is a
	// protocol key, not an OS pid. The empty string is a valid id.
	ProcessID string `json:"processId"`
	// Argv must be non-empty ("argv must not be empty", -32602). Argv[0] is
	// looked up in the PATH of Env, not of the server.
	Argv []string `json:"argv"`
	// Cwd is a file URI ("file:///tmp"), not a path: Codex 0.169 rejects
	// "/tmp" with -32602 "invalid URI: relative URL without a base".
	Cwd string `json:"cwd"`
	// EnvPolicy, when present, builds a base environment that Env overlays.
	EnvPolicy *ExecEnvPolicy `json:"envPolicy,omitempty"`
	// Env is the child's entire environment: nothing of the server's
	// environment is inherited. Required, but may be {}.
	Env map[string]string `json:"env"`
	// Tty asks for a pseudo-terminal (24 rows, 80 columns) as stdin, stdout
	// and stderr; output then arrives on the single stream "pty".
	Tty bool `json:"tty"`
	// PipeStdin keeps a non-tty child's stdin writable through
	// process/write; otherwise its stdin is /dev/null. Codex rejects null
	// here ("invalid type: null, expected a boolean").
	PipeStdin bool `json:"pipeStdin,omitzero"`
	// Arg0, when set, replaces argv[0] as the child sees it; the program is
	// still found from Argv[0].
	Arg0 *string `json:"arg0,omitempty"`
	// Sandbox is a SandboxContext, or null for none.
	Sandbox json.RawMessage `json:"sandbox,omitempty"`
}

// ExecEnvPolicy mirrors Codex's shell environment policy: the base
// environment is built from the server's own and then overlaid with Env.
type ExecEnvPolicy struct {
	// Inherit is "all", "core" or "none".
	Inherit               string            `json:"inherit"`
	IgnoreDefaultExcludes bool              `json:"ignoreDefaultExcludes"`
	Exclude               []string          `json:"exclude"`
	Set                   map[string]string `json:"set"`
	IncludeOnly           []string          `json:"includeOnly"`
}

// ProcessStartResponse is the result of process/start.
type ProcessStartResponse struct {
	ProcessID   string      `json:"processId"`
	SandboxType SandboxType `json:"sandboxType,omitempty"`
}

// ProcessReadParams are the params of process/read. Each optional member
// may be absent or null; negative or fractional numbers fail with -32602
// "invalid number".
type ProcessReadParams struct {
	ProcessID string `json:"processId"`
	// AfterSeq selects chunks with a greater seq; absent means 0.
	AfterSeq *uint64 `json:"afterSeq,omitempty"`
	// MaxBytes caps the decoded bytes of the chunks returned, except that at
	// least one chunk is always returned. Its presence also changes nextSeq:
	// see ProcessReadResponse.
	MaxBytes *uint64 `json:"maxBytes,omitempty"`
	// WaitMs long-polls for up to this many milliseconds; absent means 0.
	WaitMs *uint64 `json:"waitMs,omitempty"`
}

// ProcessOutputChunk is one chunk of retained output.
type ProcessOutputChunk struct {
	Seq    uint64       `json:"seq"`
	Stream OutputStream `json:"stream"`
	// Chunk is sent as standard base64 with padding.
	Chunk []byte `json:"chunk"`
}

// ProcessReadResponse is the result of process/read. Every member is always
// present; ExitCode and Failure are null when unset.
type ProcessReadResponse struct {
	// Chunks is [] rather than null when there is none.
	Chunks []ProcessOutputChunk `json:"chunks"`
	// NextSeq is the seq after the last chunk returned when maxBytes was
	// given and some chunk was returned; otherwise it is the process's next
	// unassigned seq, which counts exited and closed events too.
	NextSeq       uint64  `json:"nextSeq"`
	Exited        bool    `json:"exited"`
	ExitCode      *int32  `json:"exitCode"`
	Closed        bool    `json:"closed"`
	Failure       *string `json:"failure"`
	SandboxDenied bool    `json:"sandboxDenied"`
}

// ProcessWriteParams are the params of process/write.
type ProcessWriteParams struct {
	ProcessID string `json:"processId"`
	// Chunk is standard base64; bad input fails with -32602 and the base64
	// decoder's message (Codex: "Invalid symbol 33, offset 0.").
	Chunk []byte `json:"chunk"`
	// WriteID must be non-empty (-32602 "writeId must not be empty"). A
	// repeated id for the same process is acknowledged without writing again.
	WriteID string `json:"writeId"`
}

// ProcessWriteResponse is the result of process/write.
type ProcessWriteResponse struct {
	Status WriteStatus `json:"status"`
}

// ProcessSignalParams are the params of process/signal.
type ProcessSignalParams struct {
	ProcessID string        `json:"processId"`
	Signal    ProcessSignal `json:"signal"`
}

// ProcessSignalResponse is the result of process/signal: always {}, also for
// an unknown or exited process.
type ProcessSignalResponse struct{}

// ProcessTerminateParams are the params of process/terminate.
type ProcessTerminateParams struct {
	ProcessID string `json:"processId"`
}

// ProcessTerminateResponse is the result of process/terminate.
type ProcessTerminateResponse struct {
	// Running reports whether the process had not exited yet when it was
	// killed; false for an exited or unknown process.
	Running bool `json:"running"`
}

// ProcessOutputNotification holds the params of the process/output notification.
type ProcessOutputNotification struct {
	ProcessID string       `json:"processId"`
	Seq       uint64       `json:"seq"`
	Stream    OutputStream `json:"stream"`
	Chunk     []byte       `json:"chunk"`
}

// ProcessExitedNotification holds the params of the process/exited notification.
type ProcessExitedNotification struct {
	ProcessID string `json:"processId"`
	Seq       uint64 `json:"seq"`
	// ExitCode is 128+N when the process was killed by signal N (Codex
	// 0.169 reports 1 instead for a tty process).
	ExitCode      int32 `json:"exitCode"`
	SandboxDenied bool  `json:"sandboxDenied"`
}

// ProcessClosedNotification holds the params of the process/closed notification,
// the last one of a process: it has exited and all its output is read.
type ProcessClosedNotification struct {
	ProcessID string `json:"processId"`
	Seq       uint64 `json:"seq"`
}
