package core

import (
	"context"
	"encoding/base64"
	"fmt"
	"io/fs"
	"strings"

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

// fsError maps the exec-server's errors onto io/fs ones where applypatch
// needs them.
func fsError(op, path string, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if strings.Contains(msg, "No such file or directory") || strings.Contains(msg, "os error 2") || strings.Contains(msg, "not found") {
		return &fs.PathError{Op: op, Path: path, Err: fs.ErrNotExist}
	}
	return &fs.PathError{Op: op, Path: path, Err: fmt.Errorf("%s", msg)}
}

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
