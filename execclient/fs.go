package execclient

import (
	"context"
	"encoding/base64"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/codexd/codexd/execproto"
	"github.com/codexd/codexd/internal/lazyre"
)

// The typed filesystem API: native paths in and out (the wire's file://
// URIs and base64 stay inside this package), and errors that keep their
// kind, so that a caller such as the agent core needs no execproto.

// FileInfo is what fs/getMetadata reports. IsDirectory and IsFile describe
// a symlink's target when the call followed it; IsSymlink the path itself.
type FileInfo struct {
	IsDirectory, IsFile, IsSymlink bool
	Size                           uint64
}

// NoFollow, in the options below, refuses a symbolic link at any component
// of the path (the last one too): the server answers ELOOP.

// WriteOptions are the options of WriteFile.
type WriteOptions struct{ NoFollow bool }

// RemoveOptions are the options of Remove.
type RemoveOptions struct {
	Recursive, Force, NoFollow bool
}

// MkdirOptions are the options of CreateDirectory. Parents creates the
// missing parents and succeeds on an existing directory.
type MkdirOptions struct {
	Parents, NoFollow bool
}

// ReadFile is fs/readFile: the whole file.
func (c *Client) ReadFile(ctx context.Context, path string) ([]byte, error) {
	r, err := Call(ctx, c, execproto.FsReadFile, execproto.FsReadFileParams{Path: execproto.PathURI(path)})
	if err != nil {
		return nil, FSError("read", path, err)
	}
	b, err := base64.StdEncoding.DecodeString(r.DataBase64)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("the exec-server answered bad base64: %w", err)}
	}
	return b, nil
}

// WriteFile is fs/writeFile: path is replaced by data.
func (c *Client) WriteFile(ctx context.Context, path string, data []byte, o WriteOptions) error {
	p := execproto.FsWriteFileParams{Path: execproto.PathURI(path), DataBase64: base64.StdEncoding.EncodeToString(data)}
	if o.NoFollow {
		p.FollowSymlinks = ptr(false)
	}
	_, err := Call(ctx, c, execproto.FsWriteFile, p)
	return FSError("write", path, err)
}

// Remove is fs/remove.
func (c *Client) Remove(ctx context.Context, path string, o RemoveOptions) error {
	p := execproto.FsRemoveParams{Path: execproto.PathURI(path), Recursive: ptr(o.Recursive), Force: ptr(o.Force)}
	if o.NoFollow {
		p.FollowSymlinks = ptr(false)
	}
	_, err := Call(ctx, c, execproto.FsRemove, p)
	return FSError("remove", path, err)
}

// CreateDirectory is fs/createDirectory.
func (c *Client) CreateDirectory(ctx context.Context, path string, o MkdirOptions) error {
	p := execproto.FsCreateDirectoryParams{Path: execproto.PathURI(path), Recursive: ptr(o.Parents)}
	if o.NoFollow {
		p.FollowSymlinks = ptr(false)
	}
	_, err := Call(ctx, c, execproto.FsCreateDirectory, p)
	return FSError("mkdir", path, err)
}

// Stat is fs/getMetadata; follow false describes a final symlink itself.
func (c *Client) Stat(ctx context.Context, path string, follow bool) (FileInfo, error) {
	p := execproto.FsGetMetadataParams{Path: execproto.PathURI(path)}
	if !follow {
		p.FollowSymlinks = ptr(false)
	}
	r, err := Call(ctx, c, execproto.FsGetMetadata, p)
	if err != nil {
		return FileInfo{}, FSError("stat", path, err)
	}
	return FileInfo{IsDirectory: r.IsDirectory, IsFile: r.IsFile, IsSymlink: r.IsSymlink, Size: r.Size}, nil
}

// Canonicalize is fs/canonicalize: the path, which must exist, with every
// symlink and ".." resolved on the server's machine.
func (c *Client) Canonicalize(ctx context.Context, path string) (string, error) {
	r, err := Call(ctx, c, execproto.FsCanonicalize, execproto.FsCanonicalizeParams{Path: execproto.PathURI(path)})
	if err != nil {
		return "", FSError("canonicalize", path, err)
	}
	p, err := PathFromURI(r.Path)
	if err != nil {
		return "", &fs.PathError{Op: "canonicalize", Path: path, Err: err}
	}
	return p, nil
}

func ptr[T any](v T) *T { return &v }

// FSError gives an exec-server error the kind callers test with errors.Is
// and errors.As, keeping the server's text. Both codexd's exec-server and
// Codex's word an OS error as Rust does, "<strerror> (os error N)", so N is
// the errno (not a directory, is a directory, permission denied,
// exists...); a path outside the server's roots is a permission problem,
// and a symbolic link refused by a no-follow call is ELOOP, as the open
// would have said. Anything else (a transport error such as
// ErrClientClosed, a context error) stays itself inside the *fs.PathError.
// A nil err is nil.
func FSError(op, path string, err error) error {
	if err == nil {
		return nil
	}
	if kind := remoteKind(err.Error()); kind != nil {
		err = &remoteFSError{msg: err.Error(), kind: kind}
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

// remoteKind reads the kind of failure from an exec-server error message,
// or returns nil.
func remoteKind(msg string) error {
	if m := osErrorSuffix.Get().FindStringSubmatch(msg); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n > 0 && n < 4096 {
			return syscall.Errno(n)
		}
	}
	switch {
	case strings.Contains(msg, "is outside the allowed roots"):
		return fs.ErrPermission
	case strings.Contains(msg, "path contains a symbolic link"):
		return syscall.ELOOP
	}
	return nil
}

var osErrorSuffix = lazyre.Regexp{Expr: `\(os error (\d+)\)$`}

// remoteFSError is an exec-server error with its kind: Error is the
// server's text, Unwrap the syscall.Errno (or fs.ErrPermission) it means.
type remoteFSError struct {
	msg  string
	kind error
}

func (e *remoteFSError) Error() string { return e.msg }
func (e *remoteFSError) Unwrap() error { return e.kind }

// PathFromURI is the native path of a `file:///...` URI from the server.
func PathFromURI(uri string) (string, error) {
	rest, ok := strings.CutPrefix(uri, "file://")
	if !ok || !strings.HasPrefix(rest, "/") {
		return "", fmt.Errorf("the exec-server answered %q, not a file:///path URI", uri)
	}
	p, err := url.PathUnescape(rest)
	if err != nil || strings.IndexByte(p, 0) >= 0 {
		return "", fmt.Errorf("the exec-server answered %q, not a file:///path URI", uri)
	}
	return filepath.Clean(p), nil
}
