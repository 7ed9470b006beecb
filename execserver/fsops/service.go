package fsops

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/codexd/codexd/execproto"
)

// Codex's limits.
const (
	// DefaultMaxReadFileBytes is the largest file fs/readFile returns.
	DefaultMaxReadFileBytes = 512 * 1024 * 1024
	// DefaultMaxBlockBytes is the largest fs/readBlock or fs/writeBlock.
	DefaultMaxBlockBytes = 1024 * 1024
	// DefaultMaxHandles is how many fs/open handles a connection may hold.
	DefaultMaxHandles = 128
	// MaxHandleIDBytes is the longest handle id Codex accepts.
	MaxHandleIDBytes = 32
	// DefaultMaxWatches is how many fs/watchMissing watches a connection
	// may hold (Codex has no stated limit; this one is ours).
	DefaultMaxWatches = 256
)

// Config configures a Service. The zero value serves the whole filesystem
// with Codex's limits (still refusing the dangerous removals and copies).
type Config struct {
	// Roots, when not empty, confine every path to these directories (and
	// what is below them), after ".." and symlinks are resolved. Each root
	// must be an existing directory.
	Roots []string
	// HomeDir is never removed; empty means os.UserHomeDir.
	HomeDir string
	// MountInfo is the mount table read before a removal; empty means
	// /proc/self/mountinfo.
	MountInfo string
	// Limits; zero means Codex's value.
	MaxReadFileBytes int64
	MaxBlockBytes    int
	MaxHandles       int
	MaxWatches       int
}

// Service carries out the fs methods. It is safe for concurrent use; state
// that belongs to a connection (handles, watches) lives in a ConnState.
type Service struct {
	roots     []string
	home      string
	mountInfo string
	maxRead   int64
	maxBlock  int
	maxHandle int
	maxWatch  int
}

// New checks and canonicalises cfg.Roots and returns a Service.
func New(cfg Config) (*Service, error) {
	s := &Service{
		mountInfo: cfg.MountInfo,
		maxRead:   cfg.MaxReadFileBytes,
		maxBlock:  cfg.MaxBlockBytes,
		maxHandle: cfg.MaxHandles,
		maxWatch:  cfg.MaxWatches,
	}
	if s.mountInfo == "" {
		s.mountInfo = "/proc/self/mountinfo"
	}
	if s.maxRead <= 0 {
		s.maxRead = DefaultMaxReadFileBytes
	}
	if s.maxBlock <= 0 {
		s.maxBlock = DefaultMaxBlockBytes
	}
	if s.maxHandle <= 0 {
		s.maxHandle = DefaultMaxHandles
	}
	if s.maxWatch <= 0 {
		s.maxWatch = DefaultMaxWatches
	}
	for _, r := range cfg.Roots {
		abs, err := filepath.Abs(r)
		if err != nil {
			return nil, fmt.Errorf("fsops: root %q: %w", r, err)
		}
		canon, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, fmt.Errorf("fsops: root %q: %w", r, err)
		}
		fi, err := os.Stat(canon)
		if err != nil {
			return nil, fmt.Errorf("fsops: root %q: %w", r, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("fsops: root %q is not a directory", r)
		}
		s.roots = append(s.roots, canon)
	}
	home := cfg.HomeDir
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home != "" {
		if canon, err := filepath.EvalSymlinks(home); err == nil {
			home = canon
		}
		s.home = filepath.Clean(home)
	}
	return s, nil
}

// Roots returns the canonical roots (nil when unconfined).
func (s *Service) Roots() []string { return append([]string(nil), s.roots...) }

// CheckPath resolves a native absolute path (".." and symlinks, the last
// component included) and returns an error with code -32600 when it lies
// outside the roots. The server layer uses it for a process's cwd.
func (s *Service) CheckPath(path string) error {
	if !filepath.IsAbs(path) {
		return invalidRequest("path `%s` is not absolute", path)
	}
	resolved, err := resolvePath(path, true)
	if err != nil {
		return osError(err)
	}
	return s.confine(path, resolved)
}

// CheckURI is CheckPath for a `file://` URI; it returns the native path.
func (s *Service) CheckURI(uri string) (string, error) {
	p, err := ParsePathURI(uri)
	if err != nil {
		return "", err
	}
	return p, s.CheckPath(p)
}

func (s *Service) confine(given, resolved string) error {
	if len(s.roots) == 0 {
		return nil
	}
	for _, r := range s.roots {
		if within(resolved, r) {
			return nil
		}
	}
	if given != resolved {
		return invalidRequest("path `%s` (resolved to `%s`) is outside the allowed roots: %s",
			given, resolved, strings.Join(s.roots, ", "))
	}
	return invalidRequest("path `%s` is outside the allowed roots: %s", given, strings.Join(s.roots, ", "))
}

// target is a path from the wire, resolved for use.
type target struct {
	given string // as the client named it (after URI parsing)
	// link has every component but the last resolved: the name of the
	// entry itself, for operations that must not follow a final symlink.
	link string
	// path is fully resolved: what a following operation reaches.
	path string
}

// locate parses and resolves a URI and enforces the roots on what the
// operation will touch. When follow is false the no-symlink rule applies
// and link == path == given.
func (s *Service) locate(uri string, follow bool, needFull bool) (target, error) {
	p, err := ParsePathURI(uri)
	if err != nil {
		return target{}, err
	}
	if !follow {
		clean := p
		if len(clean) > 1 {
			clean = strings.TrimSuffix(clean, "/")
		}
		if err := checkNoSymlinks(clean); err != nil {
			return target{}, err
		}
		if err := s.confine(clean, clean); err != nil {
			return target{}, err
		}
		return target{given: p, link: clean, path: clean}, nil
	}
	t := target{given: p}
	if t.link, err = resolvePath(p, false); err != nil {
		return target{}, osError(err)
	}
	if err := s.confine(p, t.link); err != nil {
		return target{}, err
	}
	t.path = t.link
	if needFull {
		if t.path, err = resolvePath(p, true); err != nil {
			return target{}, osError(err)
		}
		if err := s.confine(p, t.path); err != nil {
			return target{}, err
		}
	}
	return t, nil
}

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// openRegular opens a regular file for reading without blocking on a FIFO
// or device, which Codex would hang on.
func openRegular(path string, noFollow bool, display string) (*os.File, fs.FileInfo, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	if noFollow {
		flags |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return nil, nil, osError(err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, osError(err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		if noFollow {
			return nil, nil, invalidRequest("path is not a regular file")
		}
		return nil, nil, invalidRequest("path `%s` is not a file", display)
	}
	return f, fi, nil
}

// finalSymlinkLoops turns errFinalSymlink into what Codex's open with
// O_NOFOLLOW reports for it: ELOOP.
func finalSymlinkLoops(err error) error {
	if err == errFinalSymlink {
		return osError(syscall.ELOOP)
	}
	return err
}

// ReadFile implements fs/readFile.
func (s *Service) ReadFile(ctx context.Context, p execproto.FsReadFileParams) (execproto.FsReadFileResponse, error) {
	follow := boolOr(p.FollowSymlinks, true)
	t, err := s.locate(p.Path, follow, true)
	if err != nil {
		return execproto.FsReadFileResponse{}, finalSymlinkLoops(err)
	}
	f, fi, err := openRegular(t.path, !follow, t.given)
	if err != nil {
		return execproto.FsReadFileResponse{}, err
	}
	defer f.Close()
	if fi.Size() > s.maxRead {
		return execproto.FsReadFileResponse{}, tooLarge(s.maxRead)
	}
	// Files in /proc report size 0, so the limit is enforced on the bytes
	// read too.
	data, err := io.ReadAll(io.LimitReader(f, s.maxRead+1))
	if err != nil {
		return execproto.FsReadFileResponse{}, osError(err)
	}
	if int64(len(data)) > s.maxRead {
		return execproto.FsReadFileResponse{}, tooLarge(s.maxRead)
	}
	return execproto.FsReadFileResponse{DataBase64: base64.StdEncoding.EncodeToString(data)}, nil
}

func tooLarge(limit int64) *Error {
	return invalidRequest("file is too large to read: limit is %d bytes", limit)
}

// WriteFile implements fs/writeFile: create or truncate, then write.
func (s *Service) WriteFile(ctx context.Context, p execproto.FsWriteFileParams) (execproto.FsWriteFileResponse, error) {
	// Codex's decoder is strict: padding required, no bits set past the
	// end of the data.
	if err := execproto.CheckBase64(p.DataBase64); err != nil {
		return execproto.FsWriteFileResponse{}, invalidRequest("fs/writeFile requires valid base64 dataBase64: %v", err)
	}
	data, err := base64.StdEncoding.DecodeString(p.DataBase64)
	if err != nil {
		return execproto.FsWriteFileResponse{}, invalidRequest("fs/writeFile requires valid base64 dataBase64: %v", err)
	}
	follow := boolOr(p.FollowSymlinks, true)
	t, err := s.locate(p.Path, follow, true)
	if err != nil {
		return execproto.FsWriteFileResponse{}, finalSymlinkLoops(err)
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC | syscall.O_NONBLOCK
	if !follow {
		flags |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(t.path, flags, 0o666)
	if err != nil {
		return execproto.FsWriteFileResponse{}, osError(err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr != nil {
		return execproto.FsWriteFileResponse{}, osError(werr)
	}
	if cerr != nil {
		return execproto.FsWriteFileResponse{}, osError(cerr)
	}
	return execproto.FsWriteFileResponse{}, nil
}

// CreateDirectory implements fs/createDirectory (recursive by default).
func (s *Service) CreateDirectory(ctx context.Context, p execproto.FsCreateDirectoryParams) (execproto.FsCreateDirectoryResponse, error) {
	recursive := boolOr(p.Recursive, true)
	t, err := s.locate(p.Path, boolOr(p.FollowSymlinks, true), true)
	if err == errFinalSymlink {
		// As Codex's no-follow walk answers: a symlink where a directory
		// must be entered is ENOTDIR, one where it must be made is EEXIST.
		if recursive {
			err = osError(syscall.ENOTDIR)
		} else {
			err = osError(syscall.EEXIST)
		}
	}
	if err != nil {
		return execproto.FsCreateDirectoryResponse{}, err
	}
	if recursive {
		err = createDirAll(t.path)
	} else {
		err = os.Mkdir(t.path, 0o777)
	}
	if err != nil {
		return execproto.FsCreateDirectoryResponse{}, osError(err)
	}
	return execproto.FsCreateDirectoryResponse{}, nil
}

// createDirAll is Rust's create_dir_all, which Codex uses: unlike
// os.MkdirAll, an existing non-directory at p is EEXIST (mkdir's own
// answer), not ENOTDIR.
func createDirAll(p string) error {
	err := syscall.Mkdir(p, 0o777)
	switch {
	case err == nil:
		return nil
	case err == syscall.ENOENT:
	case isDir(p):
		return nil
	default:
		return &os.PathError{Op: "mkdir", Path: p, Err: err}
	}
	if parent := filepath.Dir(p); parent != p {
		if err := createDirAll(parent); err != nil {
			return err
		}
	}
	if err := syscall.Mkdir(p, 0o777); err != nil && !isDir(p) {
		return &os.PathError{Op: "mkdir", Path: p, Err: err}
	}
	return nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// GetMetadata implements fs/getMetadata.
func (s *Service) GetMetadata(ctx context.Context, p execproto.FsGetMetadataParams) (execproto.FsGetMetadataResponse, error) {
	follow := boolOr(p.FollowSymlinks, true)
	t, err := s.locate(p.Path, follow, true)
	if err != nil {
		return execproto.FsGetMetadataResponse{}, err
	}
	lfi, err := os.Lstat(t.link)
	if err != nil {
		return execproto.FsGetMetadataResponse{}, osError(err)
	}
	fi := lfi
	if follow && lfi.Mode()&fs.ModeSymlink != 0 {
		if fi, err = os.Stat(t.path); err != nil {
			return execproto.FsGetMetadataResponse{}, osError(err)
		}
	}
	return execproto.FsGetMetadataResponse{
		IsDirectory:  fi.IsDir(),
		IsFile:       fi.Mode().IsRegular(),
		IsSymlink:    lfi.Mode()&fs.ModeSymlink != 0,
		Size:         uint64(fi.Size()),
		CreatedAtMs:  birthTimeMs(t.path),
		ModifiedAtMs: fi.ModTime().UnixMilli(),
	}, nil
}

// birthTimeMs returns the creation time where the filesystem records one,
// else 0 as Codex does.
func birthTimeMs(path string) int64 {
	var stx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, 0, unix.STATX_BTIME, &stx); err != nil {
		return 0
	}
	if stx.Mask&unix.STATX_BTIME == 0 {
		return 0
	}
	return time.Unix(stx.Btime.Sec, int64(stx.Btime.Nsec)).UnixMilli()
}

// Canonicalize implements fs/canonicalize: the path must exist.
func (s *Service) Canonicalize(ctx context.Context, p execproto.FsCanonicalizeParams) (execproto.FsCanonicalizeResponse, error) {
	t, err := s.locate(p.Path, true, true)
	if err != nil {
		return execproto.FsCanonicalizeResponse{}, err
	}
	canon, err := filepath.EvalSymlinks(t.path)
	if err != nil {
		return execproto.FsCanonicalizeResponse{}, osError(err)
	}
	if err := s.confine(t.given, canon); err != nil {
		return execproto.FsCanonicalizeResponse{}, err
	}
	return execproto.FsCanonicalizeResponse{Path: execproto.PathURI(canon)}, nil
}

// ReadDirectory implements fs/readDirectory. Entries whose target cannot be
// read are skipped, as in Codex; with roots, a symlink leading outside them
// is listed as neither file nor directory rather than followed.
func (s *Service) ReadDirectory(ctx context.Context, p execproto.FsReadDirectoryParams) (execproto.FsReadDirectoryResponse, error) {
	t, err := s.locate(p.Path, true, true)
	if err != nil {
		return execproto.FsReadDirectoryResponse{}, err
	}
	des, err := readDirUnsorted(t.path)
	if err != nil {
		return execproto.FsReadDirectoryResponse{}, osError(err)
	}
	entries := make([]execproto.FsReadDirectoryEntry, 0, len(des))
	for _, de := range des {
		if err := ctx.Err(); err != nil {
			return execproto.FsReadDirectoryResponse{}, internal("%v", err)
		}
		full := filepath.Join(t.path, de.Name())
		e := execproto.FsReadDirectoryEntry{FileName: de.Name()}
		if de.Type()&fs.ModeSymlink != 0 {
			resolved, err := resolvePath(full, true)
			if err != nil {
				continue
			}
			fi, err := os.Stat(resolved)
			if err != nil {
				continue
			}
			if s.confine(full, resolved) == nil {
				e.IsDirectory, e.IsFile = fi.IsDir(), fi.Mode().IsRegular()
			}
		} else {
			e.IsDirectory, e.IsFile = de.IsDir(), de.Type().IsRegular()
		}
		entries = append(entries, e)
	}
	return execproto.FsReadDirectoryResponse{Entries: entries}, nil
}

// readDirUnsorted lists a directory in the order the filesystem gives, as
// Codex does (os.ReadDir sorts by name).
func readDirUnsorted(dir string) ([]fs.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// Remove implements fs/remove: recursive and forced by default. A symlink
// is removed itself, never its target.
func (s *Service) Remove(ctx context.Context, p execproto.FsRemoveParams) (execproto.FsRemoveResponse, error) {
	follow := boolOr(p.FollowSymlinks, true)
	recursive := boolOr(p.Recursive, true)
	force := boolOr(p.Force, true)
	if !follow && recursive {
		// Codex refuses the combination before looking at the path.
		return execproto.FsRemoveResponse{}, internal("recursive no-follow removal is unsupported")
	}
	t, err := s.locate(p.Path, follow, false)
	if err != nil {
		return execproto.FsRemoveResponse{}, err
	}
	fi, err := os.Lstat(t.link)
	if err != nil {
		if force && errors.Is(err, fs.ErrNotExist) {
			return execproto.FsRemoveResponse{}, nil
		}
		return execproto.FsRemoveResponse{}, osError(err)
	}
	isDir := fi.IsDir()
	if err := s.protectRemoval(t.link, isDir); err != nil {
		return execproto.FsRemoveResponse{}, err
	}
	switch {
	case !isDir:
		err = syscall.Unlink(t.link)
	case !recursive:
		err = syscall.Rmdir(t.link)
	default:
		// os.RemoveAll removes symlinks inside the tree without following
		// them; mount points inside were refused above.
		err = os.RemoveAll(t.link)
	}
	if err != nil {
		return execproto.FsRemoveResponse{}, osError(err)
	}
	return execproto.FsRemoveResponse{}, nil
}

// protectRemoval refuses to remove "/", a mount point or a directory
// holding one, or the home directory or a root or anything holding them.
func (s *Service) protectRemoval(path string, isDir bool) error {
	if path == "/" {
		return invalidRequest("refusing to remove `/`")
	}
	for _, r := range s.roots {
		if within(r, path) {
			return invalidRequest("refusing to remove `%s`: it is or contains the root `%s`", path, r)
		}
	}
	if s.home != "" && within(s.home, path) {
		return invalidRequest("refusing to remove `%s`: it is or contains the home directory `%s`", path, s.home)
	}
	mounts, err := readMountPoints(s.mountInfo)
	if err != nil {
		return internal("refusing to remove `%s`: cannot read the mount table: %v", path, err)
	}
	for _, m := range mounts {
		if m == path {
			return invalidRequest("refusing to remove `%s`: it is a mount point", path)
		}
		if isDir && within(m, path) {
			return invalidRequest("refusing to remove `%s`: it contains the mount point `%s`", path, m)
		}
	}
	return nil
}
