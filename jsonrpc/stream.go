package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"

	"github.com/coder/websocket"
)

// DefaultMaxMessage is the default limit on the size of one inbound message,
// for every transport.
const DefaultMaxMessage = 128 << 20

// A Stream's Read may return a *DecodeError for a message it refused while
// reading it (over the size limit, or caught by the guard); it has then
// skipped that message and can go on reading, and the Conn answers it like
// any invalid message. A WebSocket stream closes with status 1009 (message
// too big) for a message over its limit instead, as the protocol prescribes.

// lineStream frames messages as newline-delimited JSON: one message per line,
// as Codex does on stdio and Unix sockets.
type lineStream struct {
	r      *bufio.Reader
	w      *bufio.Writer
	closer io.Closer
	limit  int64
	lim    Limits
	guard  guard

	closeOnce sync.Once
	closeErr  error
}

// NewLineStream frames rwc as newline-delimited JSON, rejecting lines longer
// than maxMessage bytes (0 means DefaultMaxMessage).
func NewLineStream(rwc io.ReadWriteCloser, maxMessage int64) Stream {
	return NewLineStreamRW(rwc, rwc, rwc, maxMessage)
}

// NewLineStreamRW is NewLineStream over separate halves, such as stdin and
// stdout. closer (which may be nil) is closed by Close.
func NewLineStreamRW(r io.Reader, w io.Writer, closer io.Closer, maxMessage int64) Stream {
	if maxMessage <= 0 {
		maxMessage = DefaultMaxMessage
	}
	return &lineStream{
		r:      bufio.NewReaderSize(r, 64<<10),
		w:      bufio.NewWriterSize(w, 64<<10),
		closer: closer,
		limit:  maxMessage,
	}
}

func (s *lineStream) Read() ([]byte, error) {
	for {
		line, err := s.readLine()
		if err != nil {
			return nil, err
		}
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue // blank lines are keep-alives, not messages
		}
		return line, nil
	}
}

// readLine returns one line, without its newline, in a buffer of its own.
//
// A line that fits the reader's buffer is copied out once. A longer one is
// gathered in reused chunks as it arrives and joined once complete (see
// assembler): it costs at most about twice its size. The guard refuses a
// hostile line while it is still arriving: after the limit is crossed, the
// rest of the line is skipped without being kept.
func (s *lineStream) readLine() ([]byte, error) {
	frag, err := s.r.ReadSlice('\n')
	if err == nil {
		if int64(len(frag)-1) > s.limit {
			return nil, tooLarge(int64(len(frag)-1), s.limit)
		}
		out := make([]byte, len(frag)-1)
		copy(out, frag)
		return out, nil
	}
	var a assembler
	s.guard.reset(s.lim)
	for errors.Is(err, bufio.ErrBufferFull) {
		total := a.total + int64(len(frag))
		if total > s.limit {
			a.abandon()
			s.skipLine()
			return nil, tooLarge(total, s.limit)
		}
		if gerr := s.guard.scan(frag); gerr != nil {
			a.abandon()
			s.skipLine()
			return nil, gerr
		}
		a.add(frag)
		frag, err = s.r.ReadSlice('\n')
	}
	last := frag
	switch {
	case err == nil:
		last = frag[:len(frag)-1]
	case errors.Is(err, io.EOF) && a.total+int64(len(frag)) > 0:
		// A final message without a newline still counts.
	default:
		a.abandon()
		return nil, err
	}
	if total := a.total + int64(len(last)); total > s.limit {
		a.abandon()
		return nil, tooLarge(total, s.limit)
	}
	return a.finish(last), nil
}

// assembler builds a message longer than a transport's read buffer from the
// pieces it arrives in: they are gathered in 64 KiB chunks and joined at the
// end into one buffer of the exact size. A message of n bytes holds at most
// n + 64 KiB of chunks and its n bytes, and a refused one only the chunks
// of what arrived before the refusal.
type assembler struct {
	g     *gather
	total int64
}

func (a *assembler) add(p []byte) {
	a.total += int64(len(p))
	if a.g == nil {
		a.g = gatherFree.get()
	}
	a.g.add(p)
}

// finish returns the message, whose last piece is last.
func (a *assembler) finish(last []byte) []byte {
	out := make([]byte, 0, a.total+int64(len(last)))
	if a.g != nil {
		out = a.g.appendTo(out)
		a.g = nil
	}
	return append(out, last...)
}

// abandon drops a refused message.
func (a *assembler) abandon() {
	if a.g != nil {
		a.g.release()
		a.g = nil
	}
}

// gather keeps the pieces of a long message in 64 KiB chunks. Gathers are
// kept, with their chunks, in a free list that survives garbage
// collections (large messages cause many), so that a connection that
// carries large messages one after another allocates only their results.
// At most gatherFree.max gathers of gatherKeptBytes each stay held.
type gather struct {
	chunks [][]byte // each of capacity gatherChunk; the first n are in use
	n      int
}

const (
	gatherChunk     = 64 << 10
	gatherKeptBytes = 2 << 20 // chunks a kept gather keeps
)

var gatherFree = freeList[gather]{max: 2}

func (g *gather) add(p []byte) {
	for len(p) > 0 {
		if g.n == 0 || len(g.chunks[g.n-1]) == gatherChunk {
			if g.n == len(g.chunks) {
				g.chunks = append(g.chunks, make([]byte, 0, gatherChunk))
			}
			g.chunks[g.n] = g.chunks[g.n][:0]
			g.n++
		}
		cur := g.chunks[g.n-1]
		k := min(len(p), gatherChunk-len(cur))
		g.chunks[g.n-1] = append(cur, p[:k]...)
		p = p[k:]
	}
}

// appendTo appends the gathered bytes to dst and releases g.
func (g *gather) appendTo(dst []byte) []byte {
	for _, c := range g.chunks[:g.n] {
		dst = append(dst, c...)
	}
	g.release()
	return dst
}

// release gives g back to the free list; g must not be used after.
func (g *gather) release() {
	if keep := gatherKeptBytes / gatherChunk; len(g.chunks) > keep {
		clear(g.chunks[keep:])
		g.chunks = g.chunks[:keep]
	}
	g.n = 0
	gatherFree.put(g)
}

func tooLarge(size, limit int64) error {
	return &DecodeError{Offset: size, Reason: fmt.Sprintf("message larger than the limit of %d bytes", limit)}
}

// skipLine discards the rest of a refused line so reading can resume at the
// next message.
func (s *lineStream) skipLine() {
	for {
		_, err := s.r.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

func (s *lineStream) setLimits(lim Limits) { s.lim = lim }

func (s *lineStream) Write(msg []byte) error {
	if _, err := s.w.Write(msg); err != nil {
		return err
	}
	if err := s.w.WriteByte('\n'); err != nil {
		return err
	}
	return s.w.Flush()
}

// writeBatch writes several messages with one flush: one system call for
// what the Conn queued while the previous write was under way.
func (s *lineStream) writeBatch(msgs [][]byte) error {
	for _, m := range msgs {
		if _, err := s.w.Write(m); err != nil {
			return err
		}
		if err := s.w.WriteByte('\n'); err != nil {
			return err
		}
	}
	return s.w.Flush()
}

func (s *lineStream) Close() error {
	s.closeOnce.Do(func() {
		if s.closer != nil {
			s.closeErr = s.closer.Close()
		}
	})
	return s.closeErr
}

// wsStream carries one message per WebSocket text frame.
type wsStream struct {
	c       *websocket.Conn
	lim     Limits
	guard   guard
	scratch []byte
	gather  *gatherConn // nil on dialled connections
}

func (s *wsStream) setLimits(lim Limits) { s.lim = lim }

// NewWebSocketStream wraps an open WebSocket connection, limiting inbound
// messages to maxMessage bytes (0 means DefaultMaxMessage).
func NewWebSocketStream(c *websocket.Conn, maxMessage int64) Stream {
	if maxMessage <= 0 {
		maxMessage = DefaultMaxMessage
	}
	c.SetReadLimit(maxMessage)
	return &wsStream{c: c}
}

// DialWebSocket connects to a WebSocket JSON-RPC server at url (ws://...).
// header may carry, for example, an Authorization bearer token.
func DialWebSocket(ctx context.Context, url string, header http.Header, maxMessage int64) (Stream, error) {
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{
		HTTPHeader:      header,
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		return nil, err
	}
	return NewWebSocketStream(c, maxMessage), nil
}

// AcceptWebSocket upgrades an HTTP request to a WebSocket JSON-RPC stream.
// Callers vet the request (origin, auth) before calling it.
func AcceptWebSocket(w http.ResponseWriter, r *http.Request, maxMessage int64) (Stream, error) {
	var gather *gatherConn
	if hj, ok := w.(http.Hijacker); ok {
		gather = &gatherConn{}
		w = bigWriteBuffer{w, hj, gather}
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		// The caller has already decided; browsers' cross-origin requests
		// are refused before we get here.
		InsecureSkipVerify: true,
		CompressionMode:    websocket.CompressionDisabled,
	})
	if err != nil {
		return nil, err
	}
	st := NewWebSocketStream(c, maxMessage).(*wsStream)
	if gather != nil && gather.Conn != nil {
		st.gather = gather
	}
	return st, nil
}

func (s *wsStream) Read() ([]byte, error) {
	for {
		_, r, err := s.c.Reader(context.Background())
		if err != nil {
			return nil, err
		}
		data, err := s.readMessage(r)
		if refused, ok := err.(*DecodeError); ok {
			// Skip the rest of the refused message without keeping it.
			if _, err := io.Copy(io.Discard, r); err != nil {
				return nil, err
			}
			return nil, refused
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		return data, nil
	}
}

// readMessage reads one message as the line stream reads a line: a short
// one is copied out once; a long one is gathered in pieces under the guard
// and joined once complete.
func (s *wsStream) readMessage(r io.Reader) ([]byte, error) {
	if s.scratch == nil {
		s.scratch = make([]byte, 32<<10)
	}
	n, err := io.ReadFull(r, s.scratch)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return bytes.Clone(s.scratch[:n]), nil
	}
	if err != nil {
		return nil, err
	}
	s.guard.reset(s.lim)
	var a assembler
	for {
		if gerr := s.guard.scan(s.scratch[:n]); gerr != nil {
			a.abandon()
			return nil, gerr
		}
		a.add(s.scratch[:n])
		n, err = io.ReadFull(r, s.scratch)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			a.abandon()
			return nil, err
		}
	}
	if gerr := s.guard.scan(s.scratch[:n]); gerr != nil {
		a.abandon()
		return nil, gerr
	}
	return a.finish(s.scratch[:n]), nil
}

func (s *wsStream) Write(msg []byte) error {
	return s.c.Write(context.Background(), websocket.MessageText, msg)
}

// writeBatch sends each message as its own frame, as the protocol requires,
// but, on a connection accepted here, gathers the frames and hands them to
// the socket in one write.
func (s *wsStream) writeBatch(msgs [][]byte) error {
	if s.gather == nil || len(msgs) == 1 {
		for _, m := range msgs {
			if err := s.Write(m); err != nil {
				return err
			}
		}
		return nil
	}
	s.gather.start()
	var err error
	for _, m := range msgs {
		if err = s.Write(m); err != nil {
			break
		}
	}
	if ferr := s.gather.finish(); err == nil {
		err = ferr
	}
	return err
}

func (s *wsStream) Close() error {
	return s.c.Close(websocket.StatusNormalClosure, "")
}

// CloseWithStatus closes with a close frame carrying status and reason
// (cut to the 123 bytes a close frame has room for).
func (s *wsStream) CloseWithStatus(status int, reason string) error {
	if len(reason) > maxCloseReason {
		reason = reason[:maxCloseReason]
	}
	return s.c.Close(websocket.StatusCode(status), reason)
}

// maxCloseReason is the room for a reason in a close frame: 125 bytes of
// payload less the 2-byte status.
const maxCloseReason = 123

// bigWriteBuffer gives the hijacked connection a write buffer that holds a
// whole output notification: net/http's is 4 KiB, which makes the WebSocket
// library write every larger frame in two system calls.
type bigWriteBuffer struct {
	http.ResponseWriter
	hj     http.Hijacker
	gather *gatherConn
}

func (b bigWriteBuffer) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, brw, err := b.hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	if err := brw.Writer.Flush(); err != nil {
		nc.Close()
		return nil, nil, err
	}
	b.gather.Conn = nc
	return nc, bufio.NewReadWriter(brw.Reader, bufio.NewWriterSize(b.gather, 32<<10)), nil
}

// gatherConn sits under the WebSocket library's writer. Outside a batch it
// writes through; during one (start to finish) it keeps the frames the
// library flushes, and finish writes them to the socket at once. Frames the
// library writes on its own during a batch (a pong) just go out with it.
type gatherConn struct {
	net.Conn
	mu     sync.Mutex
	gather bool
	buf    []byte
}

func (g *gatherConn) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gather {
		g.buf = append(g.buf, p...)
		return len(p), nil
	}
	return g.Conn.Write(p)
}

func (g *gatherConn) start() {
	g.mu.Lock()
	g.gather = true
	g.mu.Unlock()
}

func (g *gatherConn) finish() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gather = false
	if len(g.buf) == 0 {
		return nil
	}
	_, err := g.Conn.Write(g.buf)
	if cap(g.buf) > 1<<20 {
		g.buf = nil // do not keep a burst's buffer for the connection's life
	} else {
		g.buf = g.buf[:0]
	}
	return err
}
