package fsops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	fastb64 "github.com/segmentio/asm/base64"
)

// place is where an operation acts: a resolved absolute path and, under
// roots, the root holding it with the path relative to that root.
//
// Paths are resolved and checked against the roots in user space (resolve.go),
// which handles what the kernel cannot judge for us: absolute symlinks
// inside a root, symlinks from one root into another. But a path checked
// and then used as a string can be redirected in between, by a component
// swapped for a symlink. So under roots every access goes through the
// root's handle (os.Root): each component is opened relative to the one
// before, and a symlink met on the way is followed only while it stays
// inside the root. A swap can then make an operation fail, never reach
// outside the root.
type place struct {
	abs  string
	root *os.Root // nil: unconfined, abs is used as is
	rel  string   // abs relative to root ("." for the root itself)
}

// placeOf returns the place of a resolved path already checked against the
// roots.
func (s *Service) placeOf(abs string) (place, error) {
	if len(s.roots) == 0 {
		return place{abs: abs}, nil
	}
	for i, r := range s.roots {
		if within(abs, r) {
			rel, err := filepath.Rel(r, abs)
			if err != nil {
				return place{}, internal("%v", err)
			}
			return place{abs: abs, root: s.rootHandles[i], rel: rel}, nil
		}
	}
	return place{}, invalidRequest("path `%s` is outside the allowed roots: %s", abs, strings.Join(s.roots, ", "))
}

// child is the place of an entry of the directory at pl.
func (pl place) child(name string) place {
	c := place{abs: filepath.Join(pl.abs, name), root: pl.root}
	if pl.root != nil {
		c.rel = filepath.Join(pl.rel, name)
	}
	return c
}

func (pl place) openFile(flag int, perm fs.FileMode) (*os.File, error) {
	if pl.root == nil {
		return os.OpenFile(pl.abs, flag, perm)
	}
	if flag&syscall.O_NOFOLLOW != 0 && flag&oPath == 0 {
		// os.Root follows a symlink in the last component even with
		// O_NOFOLLOW (except with O_PATH, which opens the link itself);
		// refuse one there as O_NOFOLLOW would. A symlink swapped in
		// after this check is still only followed inside the root.
		if fi, err := pl.root.Lstat(pl.rel); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, &fs.PathError{Op: "open", Path: pl.abs, Err: syscall.ELOOP}
		}
	}
	return pl.root.OpenFile(pl.rel, flag, perm)
}

func (pl place) lstat() (fs.FileInfo, error) {
	if pl.root == nil {
		return os.Lstat(pl.abs)
	}
	return pl.root.Lstat(pl.rel)
}

func (pl place) stat() (fs.FileInfo, error) {
	if pl.root == nil {
		return os.Stat(pl.abs)
	}
	return pl.root.Stat(pl.rel)
}

func (pl place) mkdir(perm fs.FileMode) error {
	if pl.root == nil {
		return os.Mkdir(pl.abs, perm)
	}
	return pl.root.Mkdir(pl.rel, perm)
}

func (pl place) mkdirAll(perm fs.FileMode) error {
	if pl.root == nil {
		return os.MkdirAll(pl.abs, perm)
	}
	if pl.rel == "." {
		return nil
	}
	return pl.root.MkdirAll(pl.rel, perm)
}

// remove removes a file or an empty directory; a symlink is removed itself.
func (pl place) remove() error {
	if pl.root == nil {
		return os.Remove(pl.abs)
	}
	return pl.root.Remove(pl.rel)
}

// removeAll removes a tree without following the symlinks inside it.
func (pl place) removeAll() error {
	if pl.root == nil {
		return os.RemoveAll(pl.abs)
	}
	return pl.root.RemoveAll(pl.rel)
}

func (pl place) readlink() (string, error) {
	if pl.root == nil {
		return os.Readlink(pl.abs)
	}
	return pl.root.Readlink(pl.rel)
}

// symlink creates a symlink at pl pointing to target. The target is stored
// as given: it is only text until something follows it, and every follow
// is checked again.
func (pl place) symlink(target string) error {
	if pl.root == nil {
		return os.Symlink(target, pl.abs)
	}
	return pl.root.Symlink(target, pl.rel)
}

// readDir lists a directory in the order the filesystem gives, as Codex
// does (os.ReadDir would sort by name).
func (pl place) readDir() ([]fs.DirEntry, error) {
	var f *os.File
	var err error
	if pl.root == nil {
		f, err = os.Open(pl.abs)
	} else {
		f, err = pl.root.Open(pl.rel)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// parent is the place of the directory holding pl.
func (pl place) parent() place {
	p := place{abs: filepath.Dir(pl.abs), root: pl.root}
	if pl.root != nil {
		p.rel = filepath.Dir(pl.rel)
	}
	return p
}

// createDirAll is Rust's create_dir_all, which Codex uses: unlike
// os.MkdirAll, an existing non-directory at pl is EEXIST (mkdir's own
// answer), not ENOTDIR.
func (pl place) createDirAll() error {
	err := pl.mkdir(0o777)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.ENOENT):
	case pl.isDir():
		return nil
	default:
		return err
	}
	if pl.rel != "." && pl.abs != "/" {
		if err := pl.parent().createDirAll(); err != nil {
			return err
		}
	}
	if err := pl.mkdir(0o777); err != nil && !pl.isDir() {
		return err
	}
	return nil
}

func (pl place) isDir() bool {
	fi, err := pl.stat()
	return err == nil && fi.IsDir()
}

// errEscapes is the message of os.Root for a path that leads outside it.
const errEscapes = "path escapes from parent"

// placeError is osError for an operation on pl: a path that a concurrent
// change redirected outside the roots gets the roots' own refusal.
func placeError(err error, given string) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Err != nil && pe.Err.Error() == errEscapes {
		return invalidRequest("path `%s` changed while in use and now leads outside the allowed roots", given)
	}
	var le *os.LinkError
	if errors.As(err, &le) && le.Err != nil && le.Err.Error() == errEscapes {
		return invalidRequest("path `%s` changed while in use and now leads outside the allowed roots", given)
	}
	return osError(err)
}

// writeAll writes data to f. A regular file is written directly. Anything
// else (a FIFO with a reader, a terminal) may block for as long as its
// reader wants, so the write is bounded by ctx: a handler is never parked
// beyond its request.
func writeAll(ctx context.Context, f *os.File, fi fs.FileInfo, r io.Reader) error {
	if fi.Mode().IsRegular() {
		_, err := io.Copy(f, r)
		return err
	}
	if err := f.SetWriteDeadline(time.Time{}); err != nil {
		// Not pollable (/dev/null and the like): such writes do not block.
		_, err := io.Copy(f, r)
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = f.SetWriteDeadline(time.Unix(1, 0)) })
	defer stop()
	_, err := io.Copy(f, r)
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("write cancelled: %w", ctx.Err())
	}
	return err
}

// appendBase64 appends the standard base64 encoding of src to dst, with
// the vectorised encoder the process output uses.
func appendBase64(dst, src []byte) []byte {
	n := fastb64.StdEncoding.EncodedLen(len(src))
	dst = slices.Grow(dst, n)
	fastb64.StdEncoding.Encode(dst[len(dst):len(dst)+n], src)
	return dst[:len(dst)+n]
}
