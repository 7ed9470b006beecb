package jsonrpc

import (
	"errors"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// Error codes used by Codex. The first five are JSON-RPC 2.0's; the others
// are Codex's own, in the implementation-defined server-error range.
const (
	CodeParseError     int64 = -32700
	CodeInvalidRequest int64 = -32600
	CodeMethodNotFound int64 = -32601
	CodeInvalidParams  int64 = -32602
	CodeInternalError  int64 = -32603
	// CodeOverloaded answers a request that arrived while the connection's
	// inbound capacity was full. The client may retry.
	CodeOverloaded int64 = -32001
	// CodeNotFound answers a request for something (a session, a thread) that
	// does not exist.
	CodeNotFound int64 = -32004
	// CodeSessionTaken answers a request to attach a session that another
	// connection holds.
	CodeSessionTaken int64 = -32010
)

// OverloadedMessage is the exact message Codex sends with CodeOverloaded.
const OverloadedMessage = "Server overloaded; retry later."

// Error is a JSON-RPC error object. Handlers return it to choose the code and
// message of their error response; callers receive it when the remote side
// answered with an error.
type Error struct {
	Code    int64
	Message string
	// Data is the exact bytes of the optional "data" member, or nil.
	Data jsontext.Value
}

func (e *Error) Error() string { return e.Message }

// NewError returns an error with the given code and message.
func NewError(code int64, message string) *Error {
	return &Error{Code: code, Message: message}
}

func (e *Error) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, e.Code, 10)
	dst = append(dst, `,"message":`...)
	if quoted, err := jsontext.AppendQuote(dst, e.Message); err == nil {
		dst = quoted
	} else { // invalid UTF-8 in a message must not make the response unsendable
		dst = strconv.AppendQuote(dst, e.Message)
	}
	if e.Data != nil {
		dst = append(dst, `,"data":`...)
		dst = append(dst, e.Data...)
	}
	return append(dst, '}')
}

// The errors a call can end in, besides a remote *Error. Each is distinct so
// that callers can branch on them with errors.Is.
var (
	// ErrClosed: the connection closed before the response arrived.
	ErrClosed = errors.New("jsonrpc: connection closed")
	// ErrTimeout: no response arrived within the call's timeout or the
	// deadline of its context.
	ErrTimeout = errors.New("jsonrpc: call timed out")
	// ErrCancelled: the caller's context was cancelled.
	ErrCancelled = errors.New("jsonrpc: call cancelled")
	// ErrOverCapacity: the pending table was full. Calls fail fast rather
	// than queue, so a stuck peer cannot grow the table without bound.
	ErrOverCapacity = errors.New("jsonrpc: too many calls in flight")
)

// ErrAsyncResponse is returned by a handler that will answer later through
// [Conn.Respond]. The request stays in flight, and its id stays reserved,
// until then.
var ErrAsyncResponse = errors.New("jsonrpc: response will be sent later")

// toWireError turns a handler's error into the error object sent on the wire.
// Errors that are not *Error become internal errors with their text.
func toWireError(err error) *Error {
	var we *Error
	if errors.As(err, &we) {
		return we
	}
	return &Error{Code: CodeInternalError, Message: err.Error()}
}
