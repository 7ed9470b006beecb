package fsops

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
)

// JSON-RPC codes used by the fs methods, the same as Codex's.
const (
	CodeInvalidRequest int64 = -32600
	CodeInvalidParams  int64 = -32602
	CodeInternalError  int64 = -32603
	// CodeNotFound is Codex's code for a missing file or handle.
	CodeNotFound int64 = -32004
)

// Error is the error of an fs method: the JSON-RPC code and the message to
// send. The server layer can use it directly or through RPCCode.
type Error struct {
	Code    int64
	Message string
}

func (e *Error) Error() string { return e.Message }

// RPCCode returns the JSON-RPC error code.
func (e *Error) RPCCode() int64 { return e.Code }

func invalidRequest(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidRequest, Message: fmt.Sprintf(format, args...)}
}

func invalidParams(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *Error {
	return &Error{Code: CodeNotFound, Message: fmt.Sprintf(format, args...)}
}

func internal(format string, args ...any) *Error {
	return &Error{Code: CodeInternalError, Message: fmt.Sprintf(format, args...)}
}

// Codex is built against musl, whose wording differs from Go's (glibc's)
// for these; Codex's messages are what clients have seen.
var muslStrerror = map[syscall.Errno]string{
	syscall.ELOOP:        "Symbolic link loop",
	syscall.ENAMETOOLONG: "Filename too long",
	syscall.EXDEV:        "Cross-device link",
	syscall.ENOTEMPTY:    "Directory not empty",
}

// osError turns an error from the os package into the code and message
// Codex sends for the same failure: Rust formats an OS error as
// "<strerror> (os error <n>)" and Codex maps NotFound to -32004,
// InvalidInput and PermissionDenied to -32600 and the rest to -32603. The
// path is not part of the message, as in Codex.
func osError(err error) error {
	if err == nil {
		return nil
	}
	var own *Error
	if errors.As(err, &own) {
		return own
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		if errors.Is(err, fs.ErrNotExist) {
			return notFound("%s", err.Error())
		}
		return internal("%s", err.Error())
	}
	text, ok := muslStrerror[errno]
	if !ok {
		text = errno.Error()
		if text != "" {
			text = strings.ToUpper(text[:1]) + text[1:]
		}
	}
	msg := fmt.Sprintf("%s (os error %d)", text, int(errno))
	switch errno {
	case syscall.ENOENT:
		return &Error{Code: CodeNotFound, Message: msg}
	case syscall.EACCES, syscall.EPERM, syscall.EINVAL:
		return &Error{Code: CodeInvalidRequest, Message: msg}
	default:
		return &Error{Code: CodeInternalError, Message: msg}
	}
}
