package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/coder/websocket"
)

// DefaultMaxMessage is the default limit on the size of one inbound message,
// for every transport.
const DefaultMaxMessage = 128 << 20

// TooLargeError is returned by Stream.Read for a message over the limit. A
// line stream has skipped the message and can go on reading; the Conn
// reports the error to the peer and continues. A WebSocket stream closes
// with status 1009 (message too big) instead, as the protocol prescribes.
type TooLargeError struct {
	Size  int64 // bytes seen before giving up (at least Limit+1)
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("message larger than the limit of %d bytes", e.Limit)
}

// lineStream frames messages as newline-delimited JSON: one message per line,
// as Codex does on stdio and Unix sockets.
type lineStream struct {
	r      *bufio.Reader
	w      *bufio.Writer
	closer io.Closer
	limit  int64

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
func (s *lineStream) readLine() ([]byte, error) {
	frag, err := s.r.ReadSlice('\n')
	if err == nil {
		if int64(len(frag)-1) > s.limit {
			return nil, &TooLargeError{Size: int64(len(frag) - 1), Limit: s.limit}
		}
		out := make([]byte, len(frag)-1)
		copy(out, frag)
		return out, nil
	}
	var acc []byte
	for errors.Is(err, bufio.ErrBufferFull) {
		if int64(len(acc)+len(frag)) > s.limit {
			return nil, s.skipLine(int64(len(acc) + len(frag)))
		}
		acc = append(acc, frag...)
		frag, err = s.r.ReadSlice('\n')
	}
	if err != nil {
		if errors.Is(err, io.EOF) && len(acc)+len(frag) > 0 {
			// A final message without a newline still counts.
			if int64(len(acc)+len(frag)) > s.limit {
				return nil, &TooLargeError{Size: int64(len(acc) + len(frag)), Limit: s.limit}
			}
			return append(acc, frag...), nil
		}
		return nil, err
	}
	if int64(len(acc)+len(frag)-1) > s.limit {
		return nil, &TooLargeError{Size: int64(len(acc) + len(frag) - 1), Limit: s.limit}
	}
	acc = append(acc, frag[:len(frag)-1]...)
	return acc, nil
}

// skipLine discards the rest of an oversized line so reading can resume at
// the next message.
func (s *lineStream) skipLine(seen int64) error {
	for {
		frag, err := s.r.ReadSlice('\n')
		seen += int64(len(frag))
		if err == nil {
			return &TooLargeError{Size: seen - 1, Limit: s.limit}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

func (s *lineStream) Write(msg []byte) error {
	if _, err := s.w.Write(msg); err != nil {
		return err
	}
	if err := s.w.WriteByte('\n'); err != nil {
		return err
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
	c *websocket.Conn
}

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
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		// The caller has already decided; browsers' cross-origin requests
		// are refused before we get here.
		InsecureSkipVerify: true,
		CompressionMode:    websocket.CompressionDisabled,
	})
	if err != nil {
		return nil, err
	}
	return NewWebSocketStream(c, maxMessage), nil
}

func (s *wsStream) Read() ([]byte, error) {
	for {
		_, data, err := s.c.Read(context.Background())
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		return data, nil
	}
}

func (s *wsStream) Write(msg []byte) error {
	return s.c.Write(context.Background(), websocket.MessageText, msg)
}

func (s *wsStream) Close() error {
	return s.c.Close(websocket.StatusNormalClosure, "")
}
