package execserver

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"
	fastb64 "github.com/segmentio/asm/base64"

	"github.com/codexd/codexd/execproto"
	"github.com/codexd/codexd/execserver/procs"
	"github.com/codexd/codexd/jsonrpc"
)

// session owns the processes started through it. It outlives the connection
// that created it: when that connection drops, the session is detached and
// its processes keep running and buffering output, until a connection
// resumes it or its TTL expires, which kills every process group it started.
type session struct {
	id    string
	srv   *Server
	procs *procs.Manager

	mu       sync.Mutex
	owner    *connection // attached connection, or nil when detached
	expiry   *time.Timer // running while detached
	finished bool        // expired or closed: no connection may attach
}

func newSessionID() string { return uuid.NewString() } // version 4, as Codex's

// attach creates a session for c, or resumes the one named by resumeID.
func (s *Server) attach(c *connection, resumeID *string) (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "server is shutting down")
	}
	if resumeID == nil {
		sess := &session{
			id:    newSessionID(),
			srv:   s,
			procs: procs.NewManager(s.cfg.Procs),
			owner: c,
		}
		s.sessions[sess.id] = sess
		s.sessionsDone.Add(1)
		return sess, nil
	}
	sess := s.sessions[*resumeID]
	if sess == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "unknown session id "+*resumeID)
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.finished {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "unknown session id "+*resumeID)
	}
	if sess.owner != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeSessionTaken,
			fmt.Sprintf("session %s is already attached to another connection", sess.id))
	}
	if sess.expiry != nil {
		sess.expiry.Stop()
		sess.expiry = nil
	}
	sess.owner = c
	return sess, nil
}

// detach leaves the session to its processes for the TTL.
func (sess *session) detach(c *connection) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.owner != c || sess.finished {
		return
	}
	sess.owner = nil
	ttl := sess.srv.cfg.SessionTTL
	sess.expiry = time.AfterFunc(ttl, func() { sess.expire() })
	if hook := sess.srv.testHookDetached; hook != nil {
		hook(sess.id)
	}
}

// expire kills every process of a session that no connection resumed.
func (sess *session) expire() {
	sess.mu.Lock()
	if sess.owner != nil || sess.finished {
		sess.mu.Unlock()
		return
	}
	sess.finished = true
	sess.mu.Unlock()
	sess.srv.mu.Lock()
	delete(sess.srv.sessions, sess.id)
	sess.srv.mu.Unlock()
	sess.procs.Close()
	sess.srv.log.Debug("exec-server session expired", "session", sess.id)
	if hook := sess.srv.testHookExpired; hook != nil {
		hook(sess.id)
	}
	sess.srv.sessionsDone.Done()
}

// close kills the session's processes at server shutdown.
func (sess *session) close() {
	sess.mu.Lock()
	if sess.finished {
		sess.mu.Unlock()
		return
	}
	sess.finished = true
	if sess.expiry != nil {
		sess.expiry.Stop()
	}
	sess.mu.Unlock()
	sess.procs.Close()
	sess.srv.sessionsDone.Done()
}

func (sess *session) isOwner(c *connection) bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.owner == c
}

// pump sends the notifications of one process to conn in seq order, at the
// pace conn's writes allow. It never buffers beyond the process's ring: when
// the client stops reading, the pump blocks in Notify and output waits (and
// is eventually evicted) in the ring, so memory stays bounded.
func (c *connection) pump(ctx context.Context, conn *jsonrpc.Conn, sess *session, p *procs.Process, after uint64) {
	defer c.pumps.Done()
	// The caller holds the output for this pump (from before its answer
	// went out), so the child waits for this client instead of the ring
	// dropping what the client has not been sent: no seq is ever skipped
	// while a client is attached. The pump lets go when it ends.
	defer p.Release()
	id := p.ID()
	quotedID, _ := jsontext.AppendQuote(nil, id)
	for {
		// One batch of events goes out in one write. The batch is encoded
		// with the process locked, straight from its ring, whose buffers
		// are reused once their output has been sent.
		out := conn.Batch()
		closed := false
		var skipped uint64
		p.VisitEvents(after, 256<<10, func(batch procs.EventBatch) {
			if len(batch.Events) == 0 {
				// Only evicted output follows (possible once the process is
				// being stopped): skip it rather than wait for it.
				skipped = batch.Evicted
			}
			for _, ev := range batch.Events {
				switch ev.Kind {
				case procs.EventOutput:
					// The hot path of streamed output: encoded by hand, in
					// one buffer, with the same bytes json.Marshal would
					// produce.
					size := len(quotedID) + 64 + base64.StdEncoding.EncodedLen(len(ev.Data))
					out.NotifyAppend(execproto.MethodProcessOutput, size, func(dst []byte) []byte {
						return appendOutputParams(dst, quotedID, ev.Seq, string(ev.Stream), ev.Data)
					})
				case procs.EventExited:
					_ = out.Notify(execproto.MethodProcessExited, execproto.ProcessExitedNotification{
						ProcessID: id, Seq: ev.Seq, ExitCode: int32(ev.ExitCode),
					})
				case procs.EventClosed:
					_ = out.Notify(execproto.MethodProcessClosed, execproto.ProcessClosedNotification{
						ProcessID: id, Seq: ev.Seq,
					})
					closed = true
				}
				after = ev.Seq
			}
		})
		if out.Len() == 0 {
			if skipped > 0 {
				after += skipped
				continue
			}
			if err := p.Wait(ctx, after); err != nil {
				return
			}
			continue
		}
		if err := out.Send(); err != nil {
			return
		}
		p.Ack(after)
		if closed {
			return
		}
	}
}

// appendOutputParams encodes the params of a process/output notification
// as execproto.ProcessOutputNotification marshals them.
func appendOutputParams(dst, quotedID []byte, seq uint64, stream string, data []byte) []byte {
	dst = append(dst, `{"processId":`...)
	dst = append(dst, quotedID...)
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendUint(dst, seq, 10)
	dst = append(dst, `,"stream":"`...)
	dst = append(dst, stream...) // stdout, stderr or pty: nothing to escape
	dst = append(dst, `","chunk":"`...)
	// Every byte of output is base64-encoded on its way out; the vectorised
	// encoder of segmentio/asm does it several times faster than the
	// standard library's, with the same output.
	n := len(dst)
	dst = slices.Grow(dst, fastb64.StdEncoding.EncodedLen(len(data)))[:n+fastb64.StdEncoding.EncodedLen(len(data))]
	fastb64.StdEncoding.Encode(dst[n:], data)
	return append(dst, `"}`...)
}
