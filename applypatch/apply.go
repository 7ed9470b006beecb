package applypatch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"
)

// ErrNoFiles is what [Plan.Apply] returns for an empty plan; its text is
// Codex's.
var ErrNoFiles = errors.New("No files were modified.")

// WriteError is a write that failed after verification. Files listed in
// Written were already changed (in patch order); nothing after the failing
// change was attempted. Its Error text is Codex 0.169's, which names the
// operation and the path but not the cause ("Failed to write file /abs",
// "Failed to delete file /abs", "Failed to remove original /abs", "Failed
// to create parent directories for /abs"); Err is the cause.
type WriteError struct {
	Path    string
	Message string
	Err     error
	// Written are the absolute paths already written or removed.
	Written []string
}

func (e *WriteError) Error() string { return e.Message }
func (e *WriteError) Unwrap() error { return e.Err }

// Result is what an applied plan changed.
type Result struct {
	// Written are the absolute paths written or removed, in order (a move
	// lists its destination, then its source).
	Written []string
	// Added, Modified and Deleted are the paths as the patch spelled them
	// (a move's destination under Modified), for Summary.
	Added, Modified, Deleted []string
}

// Summary is the text Codex's apply_patch prints on success and the model
// reads: "Success. Updated the following files:" then "A path", "M path"
// and "D path" lines.
func (r *Result) Summary() string {
	var b strings.Builder
	b.WriteString("Success. Updated the following files:\n")
	for _, p := range r.Added {
		b.WriteString("A " + p + "\n")
	}
	for _, p := range r.Modified {
		b.WriteString("M " + p + "\n")
	}
	for _, p := range r.Deleted {
		b.WriteString("D " + p + "\n")
	}
	return b.String()
}

// Apply writes the plan's changes in patch order through fsys. It writes
// exactly what [Compute] verified; it does not re-read the files, so the
// caller should apply soon after computing, or after [Rebase] when time has
// passed (Codex has the same window, and no Rebase).
func (p *Plan) Apply(ctx context.Context, fsys FS) (*Result, error) {
	if p.Empty() {
		return nil, ErrNoFiles
	}
	r := &Result{}
	fail := func(path, context string, err error) (*Result, error) {
		return r, &WriteError{Path: path, Message: context, Err: err,
			Written: append([]string(nil), r.Written...)}
	}
	if b := p.blocked; b != nil {
		// Codex would write the hunks before it, then fail here.
		return fail(b.path, "Failed to write file "+b.path, b.errno)
	}
	for _, c := range p.Changes {
		if err := ctx.Err(); err != nil {
			return fail(c.Path, "Failed to write file "+c.Path, err)
		}
		switch {
		case c.Kind == KindAdd:
			if path, ctxMsg, err := writeWithParents(ctx, fsys, c.Path, c.NewContent); err != nil {
				return fail(path, ctxMsg, err)
			}
			r.Written = append(r.Written, c.Path)
			r.Added = append(r.Added, c.display)
		case c.Kind == KindDelete:
			if err := fsys.Remove(ctx, c.Path); err != nil {
				return fail(c.Path, "Failed to delete file "+c.Path, err)
			}
			r.Written = append(r.Written, c.Path)
			r.Deleted = append(r.Deleted, c.display)
		case c.MovePath != "" && c.MovePath != c.Path:
			if path, ctxMsg, err := writeWithParents(ctx, fsys, c.MovePath, c.NewContent); err != nil {
				return fail(path, ctxMsg, err)
			}
			r.Written = append(r.Written, c.MovePath)
			if err := fsys.Remove(ctx, c.Path); err != nil {
				return fail(c.Path, "Failed to remove original "+c.Path, err)
			}
			r.Written = append(r.Written, c.Path)
			r.Modified = append(r.Modified, c.display)
		default:
			if err := fsys.WriteFile(ctx, c.Path, []byte(c.NewContent)); err != nil {
				return fail(c.Path, "Failed to write file "+c.Path, err)
			}
			r.Written = append(r.Written, c.Path)
			r.Modified = append(r.Modified, c.display)
		}
	}
	return r, nil
}

// writeWithParents writes a file, creating its parent directories if the
// first write finds them missing (as Codex does for adds and moves).
func writeWithParents(ctx context.Context, fsys FS, path, content string) (string, string, error) {
	err := fsys.WriteFile(ctx, path, []byte(content))
	if err == nil {
		return "", "", nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return path, "Failed to write file " + path, err
	}
	if err := fsys.MkdirAll(ctx, filepath.Dir(path)); err != nil {
		return path, "Failed to create parent directories for " + path, err
	}
	if err := fsys.WriteFile(ctx, path, []byte(content)); err != nil {
		return path, "Failed to write file " + path, err
	}
	return "", "", nil
}

// ioMessage renders an FS error as Rust's io::Error does for the common
// errnos ("No such file or directory (os error 2)"), so that a model reads
// the texts Codex's would; other errors keep their own text.
func ioMessage(err error) string {
	var errno syscall.Errno
	switch {
	case errors.As(err, &errno):
	case errors.Is(err, fs.ErrNotExist):
		errno = syscall.ENOENT
	case errors.Is(err, fs.ErrPermission):
		errno = syscall.EACCES
	default:
		return err.Error()
	}
	msg := errno.Error()
	if msg != "" {
		msg = strings.ToUpper(msg[:1]) + msg[1:]
	}
	return fmt.Sprintf("%s (os error %d)", msg, int(errno))
}

// utf8Problem describes invalid UTF-8 as Rust's Utf8Error does, or returns
// "" for valid text. Codex refuses to patch a file that is not UTF-8.
func utf8Problem(data []byte) string {
	if utf8.Valid(data) {
		return ""
	}
	i := 0
	for i < len(data) {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		i += size
	}
	if utf8.FullRune(data[i:]) {
		return fmt.Sprintf("invalid utf-8 sequence of 1 bytes from index %d", i)
	}
	return fmt.Sprintf("incomplete utf-8 byte sequence from index %d", i)
}

// errIsDir is EISDIR, so that ioMessage renders it as Rust would.
var errIsDir error = syscall.EISDIR
