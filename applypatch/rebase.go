package applypatch

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// ConflictError is a patch that cannot be applied without losing what was
// written to one of its files after it was computed (while its approval was
// pending, say): its hunks no longer apply, or it would delete, overwrite
// or replace text that is not what was computed. Nothing was written.
type ConflictError struct {
	Path   string
	Reason string
	Err    error // the *VerifyError of the recomputation, if one caused it
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s changed since the patch was computed: %s", e.Path, e.Reason)
}

func (e *ConflictError) Unwrap() error { return e.Err }

// Rebase computes p again against the files as they are now (cwd is the
// computed plan's) and returns the plan to apply instead of computed. The
// hunks are applied afresh, so that what was written to a file meanwhile,
// outside the lines the patch replaces, is kept; where that cannot be done
// without losing something the result is a *[ConflictError]:
//
//   - a hunk no longer applies (its context or lines are gone, or the file
//     is), or an update's chunks would now replace other text than they
//     replaced when computed (an edited line that still matches leniently,
//     for instance with different trailing whitespace);
//   - a file to delete no longer has the computed contents;
//   - an add, or a move's destination, would overwrite something other
//     than what it would have overwritten when computed (nothing, or the
//     same text).
//
// Between Rebase and [Plan.Apply] there is still a window, as between
// [Compute] and Apply; the caller keeps it short.
func Rebase(ctx context.Context, fsys FS, computed *Plan, p *Patch) (*Plan, error) {
	now, err := Compute(ctx, fsys, computed.Cwd, p)
	if err != nil {
		var ve *VerifyError
		if errors.As(err, &ve) {
			return nil, &ConflictError{Path: ve.Path, Reason: ve.Message, Err: ve}
		}
		return nil, err
	}
	if len(now.Changes) != len(computed.Changes) {
		return nil, &ConflictError{Path: computed.Cwd, Reason: "the patch is not the one computed"}
	}
	for i := range now.Changes {
		was, is := &computed.Changes[i], &now.Changes[i]
		if was.Kind != is.Kind || was.Path != is.Path || was.MovePath != is.MovePath {
			return nil, &ConflictError{Path: is.Path, Reason: "the patch is not the one computed"}
		}
		switch {
		case is.Kind == KindAdd:
			if was.clobbers != is.clobbers || was.raw != is.raw {
				return nil, &ConflictError{Path: is.Path, Reason: "adding it would overwrite contents written meanwhile"}
			}
		case is.Kind == KindDelete:
			if was.OldContent != is.OldContent {
				return nil, &ConflictError{Path: is.Path, Reason: "deleting it would lose contents written meanwhile"}
			}
		default:
			if !slices.Equal(was.removed, is.removed) {
				return nil, &ConflictError{Path: is.Path, Reason: "lines the patch replaces were edited meanwhile"}
			}
			if is.MovePath != "" && is.MovePath != is.Path &&
				(was.clobbers != is.clobbers || was.raw != is.raw) {
				return nil, &ConflictError{Path: is.MovePath, Reason: "moving onto it would overwrite contents written meanwhile"}
			}
		}
	}
	return now, nil
}
