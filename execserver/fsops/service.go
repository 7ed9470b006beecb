package fsops

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

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
	// MountInfo is the mount table read before a removal; empty means the
	// process's own (/proc/self/mountinfo on Linux, getfsstat on macOS).
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
	roots       []string
	rootHandles []*os.Root // one per root, in the same order
	home        string
	mountInfo   string
	maxRead     int64
	maxBlock    int
	maxHandle   int
	maxWatch    int
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
	// The most specific root first, so that a path in nested roots is
	// opened through the nearest one.
	slices.SortStableFunc(s.roots, func(a, b string) int { return len(b) - len(a) })
	s.roots = slices.Compact(s.roots)
	for _, r := range s.roots {
		h, err := os.OpenRoot(r)
		if err != nil {
			s.Release()
			return nil, fmt.Errorf("fsops: root %q: %w", r, err)
		}
		s.rootHandles = append(s.rootHandles, h)
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

// Release releases the roots' handles. The Service must not be used after.
func (s *Service) Release() error {
	for _, h := range s.rootHandles {
		h.Close()
	}
	s.rootHandles = nil
	return nil
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

// OpenDir resolves a native absolute path as CheckPath does and opens the
// directory it names through its root, for use as a process's working
// directory: the child changes into this very directory, whatever the path
// names by the time it starts. A refusal by the roots is an *Error; an
// error of the open itself is returned as the os package reports it.
func (s *Service) OpenDir(path string) (*os.File, error) {
	if !filepath.IsAbs(path) {
		return nil, invalidRequest("path `%s` is not absolute", path)
	}
	resolved, err := resolvePath(path, true)
	if err != nil {
		return nil, osError(err)
	}
	if err := s.confine(path, resolved); err != nil {
		return nil, err
	}
	pl, err := s.placeOf(resolved)
	if err != nil {
		return nil, err
	}
	f, err := pl.openFile(os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		if e, ok := placeError(err, path).(*Error); ok && e.Code == CodeInvalidRequest && strings.Contains(e.Message, "allowed roots") {
			return nil, e
		}
		// Not found, not a directory, no permission: the caller reports
		// it as the spawn would have.
		return nil, err
	}
	return f, nil
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
	link place
	// path is fully resolved: what a following operation reaches.
	path place
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
		pl, err := s.placeOf(clean)
		if err != nil {
			return target{}, err
		}
		return target{given: p, link: pl, path: pl}, nil
	}
	t := target{given: p}
	link, err := resolvePath(p, false)
	if err != nil {
		return target{}, osError(err)
	}
	if err := s.confine(p, link); err != nil {
		return target{}, err
	}
	if t.link, err = s.placeOf(link); err != nil {
		return target{}, err
	}
	t.path = t.link
	if needFull {
		full, err := resolvePath(p, true)
		if err != nil {
			return target{}, osError(err)
		}
		if err := s.confine(p, full); err != nil {
			return target{}, err
		}
		if t.path, err = s.placeOf(full); err != nil {
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
func openRegular(pl place, noFollow bool, display string) (*os.File, fs.FileInfo, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	if noFollow {
		flags |= syscall.O_NOFOLLOW
	}
	f, err := pl.openFile(flags, 0)
	if err != nil {
		return nil, nil, placeError(err, display)
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

// FileReader is an open file for fs/readFile, read in two steps so that
// the caller can make room for the response (OpenReadFile) before the
// contents are read (AppendBase64).
type FileReader struct {
	f    *os.File
	size int64
	max  int64
}

// Size is the file's size when it was opened (0 for files such as those in
// /proc, which are read to their end all the same).
func (r *FileReader) Size() int64 { return r.size }

// Close closes the file.
func (r *FileReader) Close() error { return r.f.Close() }

// readChunk is how much AppendBase64 reads at once: a multiple of 3, so
// that the encodings of the chunks join into the encoding of the whole.
const readChunk = 3 * 64 << 10

// AppendBase64 reads the file to its end and appends its contents, base64
// encoded, to dst. The file is read and encoded a chunk at a time, so its
// raw bytes are never held whole: a file of n bytes costs the 4n/3 of its
// encoding. More than the limit is refused, even where the size said less.
func (r *FileReader) AppendBase64(dst []byte) ([]byte, error) {
	buf := make([]byte, readChunk)
	var total int64
	for {
		n, err := io.ReadFull(r.f, buf)
		total += int64(n)
		if total > r.max {
			return dst, tooLarge(r.max)
		}
		dst = appendBase64(dst, buf[:n])
		switch {
		case err == nil:
			continue
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return dst, nil
		default:
			return dst, osError(err)
		}
	}
}

// EncodedLen is the length of the base64 encoding of n bytes.
func EncodedLen(n int64) int64 { return (n + 2) / 3 * 4 }

// OpenReadFile is the first step of fs/readFile: it finds and opens the
// file, and refuses one whose size is over the limit.
func (s *Service) OpenReadFile(ctx context.Context, p execproto.FsReadFileParams) (*FileReader, error) {
	follow := boolOr(p.FollowSymlinks, true)
	t, err := s.locate(p.Path, follow, true)
	if err != nil {
		return nil, finalSymlinkLoops(err)
	}
	f, fi, err := openRegular(t.path, !follow, t.given)
	if err != nil {
		return nil, err
	}
	if fi.Size() > s.maxRead {
		f.Close()
		return nil, tooLarge(s.maxRead)
	}
	return &FileReader{f: f, size: fi.Size(), max: s.maxRead}, nil
}

// ReadFile implements fs/readFile in one step.
func (s *Service) ReadFile(ctx context.Context, p execproto.FsReadFileParams) (execproto.FsReadFileResponse, error) {
	r, err := s.OpenReadFile(ctx, p)
	if err != nil {
		return execproto.FsReadFileResponse{}, err
	}
	defer r.Close()
	b, err := r.AppendBase64(make([]byte, 0, EncodedLen(r.Size())))
	if err != nil {
		return execproto.FsReadFileResponse{}, err
	}
	return execproto.FsReadFileResponse{DataBase64: string(b)}, nil
}

func tooLarge(limit int64) *Error {
	return invalidRequest("file is too large to read: limit is %d bytes", limit)
}

// WriteFile implements fs/writeFile: create or truncate, then write. The
// data lands in a regular file, or, for a FIFO or a device, is written for
// as long as ctx allows.
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
	// O_NONBLOCK keeps the open of a FIFO nobody reads from hanging (it
	// fails instead); writes to a regular file are unaffected.
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC | syscall.O_NONBLOCK
	if !follow {
		flags |= syscall.O_NOFOLLOW
	}
	f, err := t.path.openFile(flags, 0o666)
	if err != nil {
		return execproto.FsWriteFileResponse{}, placeError(err, t.given)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return execproto.FsWriteFileResponse{}, osError(err)
	}
	werr := writeAll(ctx, f, fi, bytes.NewReader(data))
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
		err = t.path.createDirAll()
	} else {
		err = t.path.mkdir(0o777)
	}
	if err != nil {
		return execproto.FsCreateDirectoryResponse{}, placeError(err, t.given)
	}
	return execproto.FsCreateDirectoryResponse{}, nil
}

// GetMetadata implements fs/getMetadata.
func (s *Service) GetMetadata(ctx context.Context, p execproto.FsGetMetadataParams) (execproto.FsGetMetadataResponse, error) {
	follow := boolOr(p.FollowSymlinks, true)
	t, err := s.locate(p.Path, follow, true)
	if err != nil {
		return execproto.FsGetMetadataResponse{}, err
	}
	lfi, lbirth, err := statPlace(t.link, false)
	if err != nil {
		return execproto.FsGetMetadataResponse{}, placeError(err, t.given)
	}
	fi, birth := lfi, lbirth
	if follow && lfi.Mode()&fs.ModeSymlink != 0 {
		if fi, birth, err = statPlace(t.path, true); err != nil {
			return execproto.FsGetMetadataResponse{}, placeError(err, t.given)
		}
	}
	return execproto.FsGetMetadataResponse{
		IsDirectory:  fi.IsDir(),
		IsFile:       fi.Mode().IsRegular(),
		IsSymlink:    lfi.Mode()&fs.ModeSymlink != 0,
		Size:         uint64(fi.Size()),
		CreatedAtMs:  birth,
		ModifiedAtMs: fi.ModTime().UnixMilli(),
	}, nil
}

// Canonicalize implements fs/canonicalize: the path must exist.
func (s *Service) Canonicalize(ctx context.Context, p execproto.FsCanonicalizeParams) (execproto.FsCanonicalizeResponse, error) {
	t, err := s.locate(p.Path, true, true)
	if err != nil {
		return execproto.FsCanonicalizeResponse{}, err
	}
	canon, err := filepath.EvalSymlinks(t.path.abs)
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
	des, err := t.path.readDir()
	if err != nil {
		return execproto.FsReadDirectoryResponse{}, placeError(err, t.given)
	}
	entries := make([]execproto.FsReadDirectoryEntry, 0, len(des))
	for _, de := range des {
		if err := ctx.Err(); err != nil {
			return execproto.FsReadDirectoryResponse{}, internal("%v", err)
		}
		e := execproto.FsReadDirectoryEntry{FileName: de.Name()}
		if de.Type()&fs.ModeSymlink != 0 {
			full := filepath.Join(t.path.abs, de.Name())
			resolved, err := resolvePath(full, true)
			if err != nil {
				continue
			}
			if s.confine(full, resolved) == nil {
				pl, err := s.placeOf(resolved)
				if err != nil {
					continue
				}
				fi, err := pl.stat()
				if err != nil {
					continue
				}
				e.IsDirectory, e.IsFile = fi.IsDir(), fi.Mode().IsRegular()
			} else if _, err := os.Stat(resolved); err != nil {
				continue // dangling, as Codex skips it
			}
		} else {
			e.IsDirectory, e.IsFile = de.IsDir(), de.Type().IsRegular()
		}
		entries = append(entries, e)
	}
	return execproto.FsReadDirectoryResponse{Entries: entries}, nil
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
	fi, err := t.link.lstat()
	if err != nil {
		if force && errors.Is(err, fs.ErrNotExist) {
			return execproto.FsRemoveResponse{}, nil
		}
		return execproto.FsRemoveResponse{}, placeError(err, t.given)
	}
	isDir := fi.IsDir()
	if err := s.protectRemoval(t.link.abs, isDir); err != nil {
		return execproto.FsRemoveResponse{}, err
	}
	switch {
	case !isDir, !recursive:
		err = t.link.remove()
	default:
		// RemoveAll removes symlinks inside the tree without following
		// them; mount points inside were refused above.
		err = t.link.removeAll()
	}
	if err != nil {
		return execproto.FsRemoveResponse{}, placeError(err, t.given)
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
	mounts, err := mountPoints(s.mountInfo)
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
