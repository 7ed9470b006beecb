package agent

import (
	"errors"
	"fmt"
)

// Errors a Core or Thread reports synchronously. Front-ends branch on them
// with errors.Is and errors.As to choose what their client sees.
var (
	// ErrThreadNotFound: no loaded or stored thread has that id.
	ErrThreadNotFound = errors.New("thread not found")
	// ErrNoActiveTurn: a Steer or Interrupt found no turn running.
	ErrNoActiveTurn = errors.New("no active turn")
	// ErrEmptyInput: a UserInput or Steer carried no input at all.
	ErrEmptyInput = errors.New("input must not be empty")
	// ErrThreadClosed: the thread has shut down.
	ErrThreadClosed = errors.New("thread is shut down")
	// ErrUnknownCall: a decision or answer matched no waiting request
	// (it was answered already, or its turn ended).
	ErrUnknownCall = errors.New("no pending request with that call id")
)

// TurnMismatchError: the active turn is not the one the operation named.
type TurnMismatchError struct {
	Expected, Active string
}

func (e *TurnMismatchError) Error() string {
	return fmt.Sprintf("expected active turn id %s but found %s", e.Expected, e.Active)
}

// NotSteerableError: the active turn cannot take more input (a review or
// a compaction).
type NotSteerableError struct {
	// TurnKind is "review" or "compact".
	TurnKind string
}

func (e *NotSteerableError) Error() string {
	return fmt.Sprintf("cannot steer a %s turn", e.TurnKind)
}

// LocalImageError: a localImage input names a file the turn cannot read.
type LocalImageError struct {
	// Path is the input's path, Resolved the path read (a relative Path
	// taken from the turn's cwd; "" when the same).
	Path, Resolved string
	// Reason says why, in a few words or the exec-server's.
	Reason string
}

func (e *LocalImageError) Error() string {
	if e.Resolved != "" && e.Resolved != e.Path {
		return fmt.Sprintf("local image `%s` (%s) cannot be read: %s", e.Path, e.Resolved, e.Reason)
	}
	return fmt.Sprintf("local image `%s` cannot be read: %s", e.Path, e.Reason)
}
