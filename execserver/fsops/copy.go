package fsops

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/codexd/codexd/execproto"
)

// Copy implements fs/copy. A directory needs recursive; a symlink is copied
// as a symlink; other special files are refused at the top and skipped
// inside a tree, as in Codex. Unlike Codex, copying a file onto itself (the
// same inode by any path) is refused instead of truncating it, and data
// only lands in regular files (a FIFO or device destination is refused).
//
// Under roots both sides are reached through the roots' handles, entry by
// entry, so a symlink in either tree, planted before or during the copy,
// cannot carry it outside them.
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
	fi, err := src.link.lstat()
	if err != nil {
		return execproto.FsCopyResponse{}, placeError(err, src.given)
	}
	switch {
	case fi.IsDir():
		if !p.Recursive {
			return execproto.FsCopyResponse{}, invalidRequest("fs/copy requires recursive: true when sourcePath is a directory")
		}
		srcCanon, err := filepath.EvalSymlinks(src.link.abs)
		if err != nil {
			return execproto.FsCopyResponse{}, osError(err)
		}
		if within(dst.path.abs, srcCanon) {
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
		if err := copyFile(ctx, src.link, fi, dst.path); err != nil {
			return execproto.FsCopyResponse{}, err
		}
	default:
		return execproto.FsCopyResponse{}, invalidRequest("fs/copy only supports regular files, directories, and symlinks")
	}
	return execproto.FsCopyResponse{}, nil
}

func (s *Service) copyTree(ctx context.Context, src, dst place) error {
	if err := dst.mkdirAll(0o777); err != nil {
		return placeError(err, dst.abs)
	}
	des, err := src.readDir()
	if err != nil {
		return placeError(err, src.abs)
	}
	for _, de := range des {
		if err := ctx.Err(); err != nil {
			return internal("fs/copy cancelled: %v", err)
		}
		from, to := src.child(de.Name()), dst.child(de.Name())
		if len(s.roots) > 0 {
			// An entry already in the destination may be a symlink: the
			// roots' handles would only follow it inside its root, but it
			// must not lead into another root either, or out of all of
			// them, by the resolved path.
			r, err := resolvePath(to.abs, true)
			if err != nil {
				return osError(err)
			}
			if err := s.confine(to.abs, r); err != nil {
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
			if err := copyFile(ctx, from, fi, to); err != nil {
				return err
			}
		}
	}
	return nil
}

func copySymlink(src, dst place) error {
	target, err := src.readlink()
	if err != nil {
		return placeError(err, src.abs)
	}
	return placeError(dst.symlink(target), dst.abs)
}

// copyFile copies contents and permission bits like Rust's std::fs::copy,
// after making sure dst is not src under another name: opening dst with
// O_TRUNC would otherwise empty the source first.
func copyFile(ctx context.Context, src place, srcInfo fs.FileInfo, dst place) error {
	if dfi, err := dst.stat(); err == nil {
		if os.SameFile(srcInfo, dfi) {
			return invalidRequest("fs/copy cannot copy a file onto itself: `%s` and `%s` are the same file", src.abs, dst.abs)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return placeError(err, dst.abs)
	}
	in, err := src.openFile(os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return placeError(err, src.abs)
	}
	defer in.Close()
	// Check again on the open file: the name may have been swapped.
	if ifi, err := in.Stat(); err != nil {
		return osError(err)
	} else if !os.SameFile(srcInfo, ifi) {
		return internal("fs/copy source `%s` changed during the copy", src.abs)
	}
	out, err := dst.openFile(os.O_WRONLY|os.O_CREATE|syscall.O_NONBLOCK, srcInfo.Mode().Perm())
	if err != nil {
		return placeError(err, dst.abs)
	}
	ofi, err := out.Stat()
	switch {
	case err != nil:
		out.Close()
		return osError(err)
	case os.SameFile(srcInfo, ofi):
		out.Close()
		return invalidRequest("fs/copy cannot copy a file onto itself: `%s` and `%s` are the same file", src.abs, dst.abs)
	case !ofi.Mode().IsRegular():
		out.Close()
		return invalidRequest("fs/copy destination `%s` is not a regular file", dst.abs)
	}
	if err := out.Truncate(0); err != nil {
		out.Close()
		return osError(err)
	}
	if err := writeAll(ctx, out, ofi, in); err != nil {
		out.Close()
		return osError(err)
	}
	if err := out.Chmod(srcInfo.Mode().Perm()); err != nil {
		out.Close()
		return osError(err)
	}
	return osError(out.Close())
}
