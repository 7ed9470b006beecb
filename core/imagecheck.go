package core

import (
	"context"
	"errors"
	"io/fs"
	"syscall"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/imageinput"
)

// The check of a message's local images before its turn (agent.Thread's
// CheckInput): a file that is missing, a directory or another non-file,
// or that cannot be read, is refused before anything is recorded, where
// Codex 0.169 runs the turn with a placeholder in the image's place. The
// check asks the machine the turn would read the file on (the thread's
// environment, through its exec-server): it stats the file and reads it.
// A file past the input limit is not read and passes (the turn says it is
// too large, as Codex does), and so does one that is no image (the turn
// says it could not be processed). A thread without environment access
// (environments: []) can read no file, so it refuses every local image.

// Reasons of a refusal that are codexd's words (the exec-server words the
// others).
const (
	imageCheckEmpty     = "the path is empty"
	imageCheckDirectory = "it is a directory"
	imageCheckNotFile   = "it is not a regular file"
	imageCheckNoEnv     = "the thread has no environment (environments: []); send the image inline as a data URL"
)

// CheckInput refuses op's input when one of its local images cannot be
// read on the turn's machine (agent.Thread).
func (t *thread) CheckInput(ctx context.Context, op agent.Op) error {
	var in []agent.Input
	var s agent.Settings
	t.mu.Lock()
	cur := t.current()
	switch op := op.(type) {
	case agent.UserInput:
		switch {
		case cur != nil && cur.kind == "regular":
			// The input joins the running turn, and is read with its
			// settings.
			s, in = cur.settings, op.Input
		case cur != nil && cur.kind != "userShell":
			// A review or a compaction takes no input: Submit refuses it.
		default:
			s, in = op.Overrides.Apply(t.settings), op.Input
		}
	case agent.Steer:
		if cur != nil && cur.kind == "regular" && cur.id == op.ExpectedTurnID {
			s, in = cur.settings, op.Input
		}
	}
	closing := t.closing
	t.mu.Unlock()
	if closing {
		return nil
	}
	ctx = withTurnEnvironment(ctx, s.Environments)
	for _, p := range in {
		if p.Type != "localImage" {
			continue
		}
		if err := t.core.checkLocalImage(ctx, s.Cwd, p.Path); err != nil {
			return err
		}
	}
	return nil
}

// checkLocalImage is the refusal of the local image at path (relative to
// cwd), if it cannot be read through ctx's environment.
func (c *Core) checkLocalImage(ctx context.Context, cwd, path string) error {
	full := imagePath(cwd, path)
	refuse := func(reason string) error {
		return &agent.LocalImageError{Path: path, Resolved: full, Reason: reason}
	}
	if path == "" {
		return refuse(imageCheckEmpty)
	}
	ec, err := c.exec(ctx)
	switch {
	case errors.Is(err, errNoEnvironment):
		return refuse(imageCheckNoEnv)
	case err != nil:
		return nil // not the file's fault: the turn reports it
	}
	st, err := ec.Stat(ctx, full, true)
	if err != nil {
		if isFileError(err) {
			return refuse(readErrorText(err))
		}
		return nil
	}
	switch {
	case st.IsDirectory:
		return refuse(imageCheckDirectory)
	case !st.IsFile:
		// A socket, a FIFO (whose read would wait for a writer), a device.
		return refuse(imageCheckNotFile)
	case st.Size > imageinput.MaxInputBytes:
		return nil // too large: the turn says so
	}
	if _, err := ec.ReadFile(ctx, full); err != nil && isFileError(err) {
		return refuse(readErrorText(err))
	}
	return nil
}

// isFileError: err is the exec-server's answer about the file (an OS
// error, a path outside its roots), not a connection or context failure.
func isFileError(err error) bool {
	var errno syscall.Errno
	return errors.As(err, &errno) || errors.Is(err, fs.ErrPermission)
}
