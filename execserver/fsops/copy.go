package fsops

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/codexd/codexd/execproto"
)

// Copy implements fs/copy. A directory needs recursive; a symlink is copied
// as a symlink; other special files are refused at the top and skipped
// inside a tree, as in Codex. Unlike Codex, copying a file onto itself (the
// same inode by any path) is refused instead of truncating it.
func (s *Service) Copy(ctx context.Context, p execproto.FsCopyParams) (execproto.FsCopyResponse, error) {
	src, err := s.locate(p.SourcePath, true, false)
	if err != nil {
		return execproto.FsCopyResponse{}, err
	}
	// The destination is followed when it is an existing symlink (the data
	// lands in its target), so the target must be inside the roots too.
	dst, err := s.locate(p.DestinationPath, true, true)
	if err != nil {
		return execproto.FsCopyResponse{}, err
	}
	fi, err := os.Lstat(src.link)
	if err != nil {
		return execproto.FsCopyResponse{}, osError(err)
	}
	switch {
	case fi.IsDir():
		if !p.Recursive {
			return execproto.FsCopyResponse{}, invalidRequest("fs/copy requires recursive: true when sourcePath is a directory")
		}
		srcCanon, err := filepath.EvalSymlinks(src.link)
		if err != nil {
			return execproto.FsCopyResponse{}, osError(err)
		}
		if within(dst.path, srcCanon) {
			return execproto.FsCopyResponse{}, invalidRequest("fs/copy cannot copy a directory to itself or one of its descendants")
		}
		if err := s.copyTree(ctx, src.link, dst.path); err != nil {
			return execproto.FsCopyResponse{}, err
		}
	case fi.Mode()&fs.ModeSymlink != 0:
		if err := copySymlink(src.link, dst.link); err != nil {
			return execproto.FsCopyResponse{}, err
		}
	case fi.Mode().IsRegular():
		if err := copyFile(src.link, fi, dst.path); err != nil {
			return execproto.FsCopyResponse{}, err
		}
	default:
		return execproto.FsCopyResponse{}, invalidRequest("fs/copy only supports regular files, directories, and symlinks")
	}
	return execproto.FsCopyResponse{}, nil
}

func (s *Service) copyTree(ctx context.Context, src, dst string) error {
	if err := os.MkdirAll(dst, 0o777); err != nil {
		return osError(err)
	}
	des, err := os.ReadDir(src)
	if err != nil {
		return osError(err)
	}
	for _, de := range des {
		if err := ctx.Err(); err != nil {
			return internal("fs/copy cancelled: %v", err)
		}
		from, to := filepath.Join(src, de.Name()), filepath.Join(dst, de.Name())
		if len(s.roots) > 0 {
			r, err := resolvePath(to, true)
			if err != nil {
				return osError(err)
			}
			if err := s.confine(to, r); err != nil {
				return err
			}
		}
		switch t := de.Type(); {
		case t.IsDir():
			if err := s.copyTree(ctx, from, to); err != nil {
				return err
			}
		case t&fs.ModeSymlink != 0:
			if err := copySymlink(from, to); err != nil {
				return err
			}
		case t.IsRegular():
			fi, err := de.Info()
			if err != nil {
				return osError(err)
			}
			if err := copyFile(from, fi, to); err != nil {
				return err
			}
		}
	}
	return nil
}

func copySymlink(src, dst string) error {
	target, err := os.Readlink(src)
	if err != nil {
		return osError(err)
	}
	return osError(os.Symlink(target, dst))
}

// copyFile copies contents and permission bits like Rust's std::fs::copy,
// after making sure dst is not src under another name: opening dst with
// O_TRUNC would otherwise empty the source first.
func copyFile(src string, srcInfo fs.FileInfo, dst string) error {
	if dfi, err := os.Stat(dst); err == nil {
		if os.SameFile(srcInfo, dfi) {
			return invalidRequest("fs/copy cannot copy a file onto itself: `%s` and `%s` are the same file", src, dst)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return osError(err)
	}
	in, err := os.Open(src)
	if err != nil {
		return osError(err)
	}
	defer in.Close()
	// Check again on the open file: the name may have been swapped.
	if ifi, err := in.Stat(); err != nil {
		return osError(err)
	} else if !os.SameFile(srcInfo, ifi) {
		return internal("fs/copy source `%s` changed during the copy", src)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|syscall.O_NONBLOCK, srcInfo.Mode().Perm())
	if err != nil {
		return osError(err)
	}
	if ofi, err := out.Stat(); err != nil {
		out.Close()
		return osError(err)
	} else if os.SameFile(srcInfo, ofi) {
		out.Close()
		return invalidRequest("fs/copy cannot copy a file onto itself: `%s` and `%s` are the same file", src, dst)
	}
	if err := out.Truncate(0); err != nil {
		out.Close()
		return osError(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return osError(err)
	}
	if err := out.Chmod(srcInfo.Mode().Perm()); err != nil {
		out.Close()
		return osError(err)
	}
	return osError(out.Close())
}
