package appserver

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/execproto"
	"github.com/codexd/codexd/execserver/fsops"
	"github.com/codexd/codexd/jsonrpc"
)

// The fs/* methods run through the exec-server's fsops, with its roots and
// its refusals (no removal of "/", a mount point or the home directory; no
// copy of a file onto itself). The app-server names paths as absolute
// native paths where the exec-server takes file:// URIs.

// fsPath checks that path is absolute, as Codex's AbsolutePathBuf does,
// and returns its URI.
func fsPath(path string) (string, error) {
	if strings.IndexByte(path, 0) >= 0 {
		// Codex refuses it while decoding the path, before any check.
		return "", invalidRequest("file name contained an unexpected NUL byte")
	}
	if !filepath.IsAbs(path) {
		return "", appproto.InvalidRequest("AbsolutePathBuf deserialized without a base path")
	}
	return execproto.PathURI(filepath.Clean(path)), nil
}

// fsError maps fsops' errors to the app-server's codes: a missing file is
// an I/O error here (-32603), not the exec-server's -32004.
func fsError(err error) error {
	var fe *fsops.Error
	if errors.As(err, &fe) {
		code := fe.Code
		if code == fsops.CodeNotFound {
			code = jsonrpc.CodeInternalError
		}
		return jsonrpc.NewError(code, fe.Message)
	}
	if isJSONRPCError(err) {
		return err
	}
	return internalError(err.Error())
}

func (s *Server) fsReadFile(ctx context.Context, c *call, p appproto.FsPathParams) (appproto.FsReadFileResponse, error) {
	uri, err := fsPath(p.Path)
	if err != nil {
		return appproto.FsReadFileResponse{}, err
	}
	r, err := s.fs.ReadFile(ctx, execproto.FsReadFileParams{Path: uri})
	if err != nil {
		return appproto.FsReadFileResponse{}, fsError(err)
	}
	return appproto.FsReadFileResponse{DataBase64: r.DataBase64}, nil
}

func (s *Server) fsWriteFile(ctx context.Context, c *call, p appproto.FsWriteFileParams) (appproto.EmptyResponse, error) {
	uri, err := fsPath(p.Path)
	if err != nil {
		return appproto.EmptyResponse{}, err
	}
	if _, err := s.fs.WriteFile(ctx, execproto.FsWriteFileParams{Path: uri, DataBase64: p.DataBase64}); err != nil {
		return appproto.EmptyResponse{}, fsError(err)
	}
	return appproto.EmptyResponse{}, nil
}

func (s *Server) fsCreateDirectory(ctx context.Context, c *call, p appproto.FsCreateDirectoryParams) (appproto.EmptyResponse, error) {
	uri, err := fsPath(p.Path)
	if err != nil {
		return appproto.EmptyResponse{}, err
	}
	if _, err := s.fs.CreateDirectory(ctx, execproto.FsCreateDirectoryParams{Path: uri, Recursive: p.Recursive}); err != nil {
		return appproto.EmptyResponse{}, fsError(err)
	}
	return appproto.EmptyResponse{}, nil
}

func (s *Server) fsGetMetadata(ctx context.Context, c *call, p appproto.FsPathParams) (appproto.FsGetMetadataResponse, error) {
	uri, err := fsPath(p.Path)
	if err != nil {
		return appproto.FsGetMetadataResponse{}, err
	}
	r, err := s.fs.GetMetadata(ctx, execproto.FsGetMetadataParams{Path: uri})
	if err != nil {
		return appproto.FsGetMetadataResponse{}, fsError(err)
	}
	return appproto.FsGetMetadataResponse{IsDirectory: r.IsDirectory, IsFile: r.IsFile, IsSymlink: r.IsSymlink,
		CreatedAtMs: r.CreatedAtMs, ModifiedAtMs: r.ModifiedAtMs}, nil
}

func (s *Server) fsReadDirectory(ctx context.Context, c *call, p appproto.FsPathParams) (appproto.FsReadDirectoryResponse, error) {
	uri, err := fsPath(p.Path)
	if err != nil {
		return appproto.FsReadDirectoryResponse{}, err
	}
	r, err := s.fs.ReadDirectory(ctx, execproto.FsReadDirectoryParams{Path: uri})
	if err != nil {
		return appproto.FsReadDirectoryResponse{}, fsError(err)
	}
	out := appproto.FsReadDirectoryResponse{Entries: make([]appproto.FsReadDirectoryEntry, len(r.Entries))}
	for i, e := range r.Entries {
		out.Entries[i] = appproto.FsReadDirectoryEntry{FileName: e.FileName, IsDirectory: e.IsDirectory, IsFile: e.IsFile}
	}
	return out, nil
}

func (s *Server) fsRemove(ctx context.Context, c *call, p appproto.FsRemoveParams) (appproto.EmptyResponse, error) {
	uri, err := fsPath(p.Path)
	if err != nil {
		return appproto.EmptyResponse{}, err
	}
	if _, err := s.fs.Remove(ctx, execproto.FsRemoveParams{Path: uri, Recursive: p.Recursive, Force: p.Force}); err != nil {
		return appproto.EmptyResponse{}, fsError(err)
	}
	return appproto.EmptyResponse{}, nil
}

func (s *Server) fsCopy(ctx context.Context, c *call, p appproto.FsCopyParams) (appproto.EmptyResponse, error) {
	src, err := fsPath(p.SourcePath)
	if err != nil {
		return appproto.EmptyResponse{}, err
	}
	dst, err := fsPath(p.DestinationPath)
	if err != nil {
		return appproto.EmptyResponse{}, err
	}
	if _, err := s.fs.Copy(ctx, execproto.FsCopyParams{SourcePath: src, DestinationPath: dst, Recursive: p.Recursive}); err != nil {
		return appproto.EmptyResponse{}, fsError(err)
	}
	return appproto.EmptyResponse{}, nil
}
