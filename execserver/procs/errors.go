package procs

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
)

// Kinds of error. Every error the package returns for a request is an
// *[Error] whose Kind is one of these, so callers test with errors.Is and
// send Error() unchanged: it is the message Codex sends in the same case.
var (
	// ErrUnknownProcess: process/read of an id that is not (or no longer)
	// known. Message "unknown process id <id>".
	ErrUnknownProcess = errors.New("unknown process")
	// ErrProcessStarting: process/read of an id whose start has not finished.
	// Message "process id <id> is starting".
	ErrProcessStarting = errors.New("process is starting")
	// ErrDuplicateProcess: process/start with an id that is in use, including
	// a closed process still retained. Message "process <id> already exists".
	ErrDuplicateProcess = errors.New("process already exists")
	// ErrStartCancelled: the process was terminated while it was starting.
	// Message "process <id> start was cancelled".
	ErrStartCancelled = errors.New("process start was cancelled")
	// ErrEmptyArgv: process/start with an empty argv. Checked before the id.
	ErrEmptyArgv = errors.New("argv must not be empty")
	// ErrEmptyWriteID: process/write with an empty writeId. Checked before
	// the id.
	ErrEmptyWriteID = errors.New("writeId must not be empty")
	// ErrSpawn: the child could not be started. The message is the OS error
	// as Rust prints it, e.g. "No such file or directory (os error 2)".
	ErrSpawn = errors.New("spawn failed")
	// ErrStdinWrite: the process's stdin is gone (it closed, or an earlier
	// write failed). Message "failed to write to process stdin".
	ErrStdinWrite = errors.New("failed to write to process stdin")
	// ErrStdinTerminated: a write to a process after process/terminate
	// found it running. Codex refuses it with the same message as
	// ErrStdinWrite, but as an error (-32603), where a write after the
	// process went away by itself is accepted and dropped.
	ErrStdinTerminated = errors.New("stdin of a terminated process")
	// ErrSignal: the signal could not be delivered. Message
	// "failed to signal process: <os error>".
	ErrSignal = errors.New("failed to signal process")
	// ErrManagerClosed: the manager was closed; no process can start.
	ErrManagerClosed = errors.New("process manager is closed")
)

// Error is a failure of one request about one process.
type Error struct {
	// Kind is one of the Err* values of this package.
	Kind error
	// ProcessID is the id the request named.
	ProcessID string
	// Msg is the exact message Codex uses.
	Msg string
	// Cause is the underlying error, if any (an OS error for ErrSpawn).
	Cause error
}

func (e *Error) Error() string { return e.Msg }

// Is reports whether target is e's kind, so errors.Is(err, ErrUnknownProcess)
// works without exposing the message format.
func (e *Error) Is(target error) bool { return target == e.Kind }

func (e *Error) Unwrap() error { return e.Cause }

func newError(kind error, id, msg string, cause error) *Error {
	return &Error{Kind: kind, ProcessID: id, Msg: msg, Cause: cause}
}

func errUnknown(id string) error {
	return newError(ErrUnknownProcess, id, "unknown process id "+id, nil)
}

func errStarting(id string) error {
	return newError(ErrProcessStarting, id, "process id "+id+" is starting", nil)
}

func errDuplicate(id string) error {
	return newError(ErrDuplicateProcess, id, "process "+id+" already exists", nil)
}

func errCancelled(id string) error {
	return newError(ErrStartCancelled, id, "process "+id+" start was cancelled", nil)
}

func errStdinTerminated(id string) error {
	return newError(ErrStdinTerminated, id, ErrStdinWrite.Error(), nil)
}

func errStdinWrite(id string) error {
	return newError(ErrStdinWrite, id, ErrStdinWrite.Error(), nil)
}

// muslText holds musl's strerror wording where it is not Go's errno text
// capitalised (Codex is a musl binary).
var muslText = map[syscall.Errno]string{
	syscall.ELOOP:        "Symbolic link loop",
	syscall.ENAMETOOLONG: "Filename too long",
	syscall.ENOMEM:       "Out of memory",
	syscall.EMFILE:       "No file descriptors available",
}

// rustIOMessage renders an OS error the way Rust's io::Error displays it,
// which is what Codex puts in the JSON-RPC message: the C library's
// strerror text, then "(os error N)". Go's errno texts are mostly the same
// words in lower case.
func rustIOMessage(err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err.Error()
	}
	text, ok := muslText[errno]
	if !ok {
		text = errno.Error()
		if text != "" {
			text = strings.ToUpper(text[:1]) + text[1:]
		}
	}
	return fmt.Sprintf("%s (os error %d)", text, int(errno))
}

// RPCCode is the JSON-RPC error code Codex answers this error with.
func (e *Error) RPCCode() int64 {
	switch e.Kind {
	case ErrEmptyArgv, ErrEmptyWriteID:
		return -32602
	case ErrSpawn, ErrStdinWrite, ErrStdinTerminated, ErrSignal, ErrManagerClosed:
		return -32603
	}
	return -32600
}

// SpawnFailure is the error Start returns when the child cannot be started
// because of err (for a working directory the caller opened itself).
func SpawnFailure(id string, err error) error { return spawnError(id, err) }
