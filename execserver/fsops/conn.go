package fsops

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"sync"
	"syscall"

	"github.com/codexd/codexd/execproto"
)

// NotifyFunc receives fs/missingChanged notifications. It is called from a
// goroutine of the ConnState, never while a lock of it is held, and never
// after Close has returned. It may run before the fs/watchMissing response
// that armed the watch has been written.
type NotifyFunc func(execproto.FsMissingChangedNotification)

// ConnState is what one connection owns: open file handles and
// missing-path watches. Close releases all of it.
type ConnState struct {
	svc    *Service
	notify NotifyFunc

	mu      sync.Mutex
	closed  bool
	handles map[string]*handle
	watches *watchSet
}

type handle struct {
	mu     sync.Mutex
	f      *os.File // nil while the open is in progress
	write  bool
	closed bool
}

// NewConnState returns the state of a new connection. notify may be nil
// when the connection does not want missing-path notifications.
func (s *Service) NewConnState(notify NotifyFunc) *ConnState {
	return &ConnState{svc: s, notify: notify, handles: make(map[string]*handle)}
}

// Close closes every handle and stops every watch. It is idempotent.
func (c *ConnState) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	handles := c.handles
	c.handles = nil
	ws := c.watches
	c.watches = nil
	c.mu.Unlock()
	for _, h := range handles {
		h.close()
	}
	if ws != nil {
		ws.close()
	}
	return nil
}

func (h *handle) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	if h.f != nil {
		h.f.Close()
	}
}

var errConnClosed = &Error{Code: CodeInternalError, Message: "connection is closed"}

func checkHandleID(id string) error {
	if len(id) > MaxHandleIDBytes {
		return invalidRequest("file handle ID must not exceed %d bytes", MaxHandleIDBytes)
	}
	return nil
}

// Open implements fs/open: "read" (the default) opens an existing regular
// file, "replace" creates or truncates one.
func (s *Service) Open(ctx context.Context, c *ConnState, p execproto.FsOpenParams) (execproto.FsOpenResponse, error) {
	if err := checkHandleID(p.HandleID); err != nil {
		return execproto.FsOpenResponse{}, err
	}
	var write bool
	switch p.Mode {
	case "", execproto.FsOpenRead:
	case execproto.FsOpenReplace:
		write = true
	default:
		return execproto.FsOpenResponse{}, invalidParams("unknown variant `%s`, expected `read` or `replace`", p.Mode)
	}
	h := &handle{write: write}
	// The slot is reserved before the open so that concurrent opens cannot
	// exceed the limit or share an id.
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		return execproto.FsOpenResponse{}, errConnClosed
	case c.handles[p.HandleID] != nil:
		c.mu.Unlock()
		return execproto.FsOpenResponse{}, invalidRequest("file handle `%s` already exists", p.HandleID)
	case len(c.handles) >= s.maxHandle:
		c.mu.Unlock()
		return execproto.FsOpenResponse{}, invalidRequest("at most %d file handles may be open per connection", s.maxHandle)
	}
	c.handles[p.HandleID] = h
	h.mu.Lock()
	c.mu.Unlock()

	f, err := s.openForHandle(p.Path, write)
	if err != nil {
		h.closed = true
		h.mu.Unlock()
		c.mu.Lock()
		if c.handles != nil && c.handles[p.HandleID] == h {
			delete(c.handles, p.HandleID)
		}
		c.mu.Unlock()
		return execproto.FsOpenResponse{}, err
	}
	// A Close racing with the open waits on h.mu and then closes f.
	h.f = f
	h.mu.Unlock()
	return execproto.FsOpenResponse{HandleID: p.HandleID}, nil
}

func (s *Service) openForHandle(uri string, write bool) (*os.File, error) {
	t, err := s.locate(uri, true, true)
	if err != nil {
		return nil, err
	}
	if !write {
		f, _, err := openRegular(t.path, false, t.given)
		return f, err
	}
	// O_NONBLOCK keeps a FIFO from hanging the open; it does not change
	// writes to a regular file.
	f, err := t.path.openFile(os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NONBLOCK, 0o666)
	if err != nil {
		return nil, placeError(err, t.given)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, osError(err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, invalidRequest("path `%s` is not a file", t.given)
	}
	return f, nil
}

// lookup returns the handle with its lock held.
func (c *ConnState) lookup(id string) (*handle, error) {
	c.mu.Lock()
	h := c.handles[id]
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return nil, errConnClosed
	}
	if h == nil {
		return nil, notFound("unknown file handle `%s`", id)
	}
	h.mu.Lock()
	if h.closed || h.f == nil {
		h.mu.Unlock()
		return nil, notFound("unknown file handle `%s`", id)
	}
	return h, nil
}

// ReadBlock implements fs/readBlock: up to Len bytes at Offset; EOF is set
// when fewer were available. As in Codex 0.169, a read that fails (the
// handle was opened for writing: EBADF; an offset the kernel refuses:
// EINVAL) also closes the handle.
func (s *Service) ReadBlock(ctx context.Context, c *ConnState, p execproto.FsReadBlockParams) (execproto.FsReadBlockResponse, error) {
	if err := checkHandleID(p.HandleID); err != nil {
		return execproto.FsReadBlockResponse{}, err
	}
	if p.Len < 1 || p.Len > uint64(s.maxBlock) {
		return execproto.FsReadBlockResponse{}, invalidRequest("file read block length must be between 1 and %d", s.maxBlock)
	}
	h, err := c.lookup(p.HandleID)
	if err != nil {
		return execproto.FsReadBlockResponse{}, err
	}
	res, err := h.readLocked(p)
	if err != nil {
		h.closed = true
		h.f.Close()
	}
	h.mu.Unlock()
	if err != nil {
		c.forget(p.HandleID, h)
	}
	return res, err
}

func (h *handle) readLocked(p execproto.FsReadBlockParams) (execproto.FsReadBlockResponse, error) {
	switch {
	case h.write:
		// The descriptor is write-only, and Codex reads it all the same.
		return execproto.FsReadBlockResponse{}, osError(syscall.EBADF)
	case p.Offset > math.MaxInt64:
		// Codex passes the offset to pread as a signed number.
		return execproto.FsReadBlockResponse{}, osError(syscall.EINVAL)
	}
	buf := make([]byte, p.Len)
	n, err := h.f.ReadAt(buf, int64(p.Offset))
	if err != nil && !errors.Is(err, io.EOF) {
		return execproto.FsReadBlockResponse{}, osError(err)
	}
	return execproto.FsReadBlockResponse{Chunk: buf[:n], EOF: uint64(n) < p.Len}, nil
}

// forget drops h from the handles if it is still there under id.
func (c *ConnState) forget(id string, h *handle) {
	c.mu.Lock()
	if c.handles != nil && c.handles[id] == h {
		delete(c.handles, id)
	}
	c.mu.Unlock()
}

// WriteBlock implements fs/writeBlock: Chunk is written at Offset. Unlike
// a failed read, a failed write leaves the handle open, as in Codex.
func (s *Service) WriteBlock(ctx context.Context, c *ConnState, p execproto.FsWriteBlockParams) (execproto.FsWriteBlockResponse, error) {
	if err := checkHandleID(p.HandleID); err != nil {
		return execproto.FsWriteBlockResponse{}, err
	}
	if len(p.Chunk) < 1 || len(p.Chunk) > s.maxBlock {
		return execproto.FsWriteBlockResponse{}, invalidRequest("file write block length must be between 1 and %d", s.maxBlock)
	}
	if p.Offset > math.MaxInt64-uint64(len(p.Chunk)) {
		return execproto.FsWriteBlockResponse{}, invalidRequest("file write range exceeds the signed 64-bit file offset limit")
	}
	h, err := c.lookup(p.HandleID)
	if err != nil {
		return execproto.FsWriteBlockResponse{}, err
	}
	defer h.mu.Unlock()
	if !h.write {
		return execproto.FsWriteBlockResponse{}, osError(syscall.EBADF)
	}
	if _, err := h.f.WriteAt(p.Chunk, int64(p.Offset)); err != nil {
		return execproto.FsWriteBlockResponse{}, osError(err)
	}
	return execproto.FsWriteBlockResponse{}, nil
}

// Close implements fs/close. Closing an unknown handle succeeds, as in
// Codex.
func (s *Service) Close(ctx context.Context, c *ConnState, p execproto.FsCloseParams) (execproto.FsCloseResponse, error) {
	if err := checkHandleID(p.HandleID); err != nil {
		return execproto.FsCloseResponse{}, err
	}
	c.mu.Lock()
	h := c.handles[p.HandleID]
	if h != nil {
		delete(c.handles, p.HandleID)
	}
	c.mu.Unlock()
	if h != nil {
		h.close()
	}
	return execproto.FsCloseResponse{}, nil
}
