package core

import (
	"context"
	"encoding/base64"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/codexd/codexd/applypatch"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/execproto"
)

// execFS is the filesystem of the exec-server's machine, through its fs/*
// methods: patches are read and applied where commands run, which may be
// another machine.
type execFS struct {
	dial func(ctx context.Context) (*execclient.Client, error)
}

var _ applypatch.FS = execFS{}

// fsError gives an exec-server error the kind applypatch and the core test
// with errors.Is and errors.As, keeping the server's text. Both codexd's
// exec-server and Codex's word an OS error as Rust does, "<strerror> (os
// error N)", so N is the errno (not a directory, is a directory, permission
// denied, exists...); a path outside the server's roots is a permission
// problem, and a symbolic link refused by a no-follow call is ELOOP, as the
// open would have said. Anything else (a transport error such as
// execclient.ErrClientClosed, a context error) stays itself inside the
// *fs.PathError.
func fsError(op, path string, err error) error {
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
	if m := osErrorSuffix.FindStringSubmatch(msg); m != nil {
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

var osErrorSuffix = regexp.MustCompile(`\(os error (\d+)\)$`)

// remoteFSError is an exec-server error with its kind: Error is the
// server's text, Unwrap the syscall.Errno (or fs.ErrPermission) it means.
type remoteFSError struct {
	msg  string
	kind error
}

func (e *remoteFSError) Error() string { return e.msg }
func (e *remoteFSError) Unwrap() error { return e.kind }

func (f execFS) ReadFile(ctx context.Context, path string) ([]byte, error) {
	c, err := f.dial(ctx)
	if err != nil {
		return nil, err
	}
	r, err := execclient.Call(ctx, c, execproto.FsReadFile, execproto.FsReadFileParams{Path: execproto.PathURI(path)})
	if err != nil {
		return nil, fsError("read", path, err)
	}
	return base64.StdEncoding.DecodeString(r.DataBase64)
}

func (f execFS) WriteFile(ctx context.Context, path string, data []byte) error {
	c, err := f.dial(ctx)
	if err != nil {
		return err
	}
	_, err = execclient.Call(ctx, c, execproto.FsWriteFile, execproto.FsWriteFileParams{
		Path: execproto.PathURI(path), DataBase64: base64.StdEncoding.EncodeToString(data),
	})
	return fsError("write", path, err)
}

func (f execFS) Remove(ctx context.Context, path string) error {
	c, err := f.dial(ctx)
	if err != nil {
		return err
	}
	no := false
	_, err = execclient.Call(ctx, c, execproto.FsRemove, execproto.FsRemoveParams{Path: execproto.PathURI(path), Recursive: &no, Force: &no})
	return fsError("remove", path, err)
}

func (f execFS) MkdirAll(ctx context.Context, path string) error {
	c, err := f.dial(ctx)
	if err != nil {
		return err
	}
	yes := true
	_, err = execclient.Call(ctx, c, execproto.FsCreateDirectory, execproto.FsCreateDirectoryParams{Path: execproto.PathURI(path), Recursive: &yes})
	return fsError("mkdir", path, err)
}

func (f execFS) Stat(ctx context.Context, path string) (applypatch.FileInfo, error) {
	c, err := f.dial(ctx)
	if err != nil {
		return applypatch.FileInfo{}, err
	}
	r, err := execclient.Call(ctx, c, execproto.FsGetMetadata, execproto.FsGetMetadataParams{Path: execproto.PathURI(path)})
	if err != nil {
		return applypatch.FileInfo{}, fsError("stat", path, err)
	}
	return applypatch.FileInfo{IsDir: r.IsDirectory}, nil
}

// metadata is fs/getMetadata; follow false describes a final symlink
// itself.
func (f execFS) metadata(ctx context.Context, path string, follow bool) (execproto.FsGetMetadataResponse, error) {
	c, err := f.dial(ctx)
	if err != nil {
		return execproto.FsGetMetadataResponse{}, err
	}
	p := execproto.FsGetMetadataParams{Path: execproto.PathURI(path)}
	if !follow {
		p.FollowSymlinks = &follow
	}
	r, err := execclient.Call(ctx, c, execproto.FsGetMetadata, p)
	if err != nil {
		return r, fsError("stat", path, err)
	}
	return r, nil
}

// canonicalize is fs/canonicalize: the path, which must exist, with every
// symlink and ".." resolved on the exec-server's machine.
func (f execFS) canonicalize(ctx context.Context, path string) (string, error) {
	c, err := f.dial(ctx)
	if err != nil {
		return "", err
	}
	r, err := execclient.Call(ctx, c, execproto.FsCanonicalize, execproto.FsCanonicalizeParams{Path: execproto.PathURI(path)})
	if err != nil {
		return "", fsError("canonicalize", path, err)
	}
	p, err := pathFromURI(r.Path)
	if err != nil {
		return "", &fs.PathError{Op: "canonicalize", Path: path, Err: err}
	}
	return p, nil
}

// pathFromURI is the native path of a `file:///...` URI from the server.
func pathFromURI(uri string) (string, error) {
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

// writeNoFollow writes path, refusing a symlink at any of its components.
func (f execFS) writeNoFollow(ctx context.Context, path string, data []byte) error {
	c, err := f.dial(ctx)
	if err != nil {
		return err
	}
	no := false
	_, err = execclient.Call(ctx, c, execproto.FsWriteFile, execproto.FsWriteFileParams{
		Path: execproto.PathURI(path), DataBase64: base64.StdEncoding.EncodeToString(data), FollowSymlinks: &no,
	})
	return fsError("write", path, err)
}

// removeNoFollow removes the file path, refusing a symlink at any of its
// components (the last one too).
func (f execFS) removeNoFollow(ctx context.Context, path string) error {
	c, err := f.dial(ctx)
	if err != nil {
		return err
	}
	no := false
	_, err = execclient.Call(ctx, c, execproto.FsRemove, execproto.FsRemoveParams{
		Path: execproto.PathURI(path), Recursive: &no, Force: &no, FollowSymlinks: &no,
	})
	return fsError("remove", path, err)
}

// mkdirAllNoFollow creates path and its missing parents, refusing a
// symlink at any of its components.
func (f execFS) mkdirAllNoFollow(ctx context.Context, path string) error {
	c, err := f.dial(ctx)
	if err != nil {
		return err
	}
	yes, no := true, false
	_, err = execclient.Call(ctx, c, execproto.FsCreateDirectory, execproto.FsCreateDirectoryParams{
		Path: execproto.PathURI(path), Recursive: &yes, FollowSymlinks: &no,
	})
	return fsError("mkdir", path, err)
}
