package procs

import "errors"

// EnableSubreaper is Linux-only (PR_SET_CHILD_SUBREAPER).
func EnableSubreaper() error {
	return errors.New("procs: a child subreaper needs Linux")
}

// KillAdopted does nothing: without a subreaper nothing is adopted.
func KillAdopted() {}
