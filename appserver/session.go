package appserver

import (
	"errors"
	"slices"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/execserver/procs"
	"github.com/codexd/codexd/jsonrpc"
)

// peer is where a session's outbound messages go: a JSON connection or an
// in-process client. Each call may block while the peer's queue is full
// (backpressure, stdio only), but none writes to the transport itself: a
// background flusher does. So respond may be called under a thread's lock
// (handlers answer there, so that the answer precedes the thread's next
// notifications); notify and request are made by the listener after it
// released the lock.
type peer interface {
	// notify sends a notification.
	notify(n *note) error
	// request sends a server request under this connection's id.
	request(id int64, r *outRequest) error
	// respond answers the request id, whose handler deferred its answer.
	respond(id jsonrpc.ID, result any, err error) error
	// shutdown ends the connection; it does not wait.
	shutdown()
}

// note is a notification on its way to one or more sessions. It is
// encoded once, on first use, and the same bytes go to every JSON peer.
type note struct {
	method      string
	params      any
	emittedAtMs int64

	once sync.Once
	enc  []byte // the whole message
	err  error
}

func newNote(method string, params any) *note {
	return &note{method: method, params: params, emittedAtMs: nowMs()}
}

// encoded returns the message as Codex writes it:
// {"method":M,"params":P,"emittedAtMs":N}, emittedAtMs at the top level.
func (n *note) encoded() ([]byte, error) {
	n.once.Do(func() {
		params, err := json.Marshal(n.params)
		if err != nil {
			n.err = err
			return
		}
		b := make([]byte, 0, len(params)+len(n.method)+48)
		b = append(b, `{"method":`...)
		b, _ = jsontext.AppendQuote(b, n.method)
		b = append(b, `,"params":`...)
		b = append(b, params...)
		b = append(b, `,"emittedAtMs":`...)
		b = strconv.AppendInt(b, n.emittedAtMs, 10)
		n.enc = append(b, '}')
	})
	return n.enc, n.err
}

// outRequest is a server request on its way to the subscribers of a
// thread; each gets it under its own id.
type outRequest struct {
	method string
	params any

	once sync.Once
	enc  []byte
	err  error
}

func (r *outRequest) encoded() ([]byte, error) {
	r.once.Do(func() { r.enc, r.err = json.Marshal(r.params) })
	return r.enc, r.err
}

// session is one client connection.
//
// All of its in-flight state is in st and changes only in the methods of
// this file, under mu. Nothing else of the server is locked while mu is
// held.
type session struct {
	srv *Server
	id  uint64 // order of connection, for deterministic fan-out
	out peer

	// order is held while a notification goes to out, so that an answer
	// and the notification behind it go out as one run (answerThenAll).
	// It is a leaf: under it there is only out's own enqueueing.
	order sync.Mutex

	mu sync.Mutex
	st sessionState
}

type sessionState struct {
	initialized  bool
	experimental bool
	optOut       map[string]struct{}
	clientName   string
	// nextRequestID numbers this connection's server requests from 0.
	nextRequestID int64
	// requests are the server requests this connection was sent and has
	// not answered, by the id it knows them by.
	requests map[int64]*serverRequest
	// threads are the threads this connection is subscribed to.
	threads map[string]*thread
	// execs are its running command/exec processes, by process id.
	execs  map[string]*execProc
	procs  *procs.Manager
	closed bool
	slow   bool // disconnected for not reading
}

func newSession(srv *Server, id uint64, out peer) *session {
	return &session{srv: srv, id: id, out: out, st: sessionState{
		requests: make(map[int64]*serverRequest),
		threads:  make(map[string]*thread),
		execs:    make(map[string]*execProc),
	}}
}

func sortSessions(ss []*session) {
	slices.SortFunc(ss, func(a, b *session) int { return int(a.id) - int(b.id) })
}

// initialize records the client's capabilities; a second call fails.
func (s *session) initialize(p appproto.InitializeParams) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.initialized {
		return jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Already initialized")
	}
	s.st.initialized = true
	s.st.clientName = p.ClientInfo.Name
	if c := p.Capabilities; c != nil {
		s.st.experimental = c.ExperimentalAPI
		if len(c.OptOutNotificationMethods) > 0 {
			s.st.optOut = make(map[string]struct{}, len(c.OptOutNotificationMethods))
			for _, m := range c.OptOutNotificationMethods {
				s.st.optOut[m] = struct{}{}
			}
		}
	}
	return nil
}

func (s *session) isInitialized() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.initialized && !s.st.closed
}

func (s *session) experimental() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.experimental
}

// wants reports whether this connection takes notifications of method.
func (s *session) wants(method string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.closed || !s.st.experimental && appproto.IsExperimentalNotification(method) {
		return false
	}
	_, out := s.st.optOut[method]
	return !out
}

// send delivers n unless the connection opted out of it.
func (s *session) send(n *note) {
	s.order.Lock()
	defer s.order.Unlock()
	s.sendOrdered(n)
}

// sendOrdered is send, with order held.
func (s *session) sendOrdered(n *note) {
	if !s.wants(n.method) {
		return
	}
	if err := s.out.notify(n); err != nil {
		if errors.Is(err, jsonrpc.ErrSlowPeer) {
			s.slowPeer()
			return
		}
		s.srv.log.Debug("app-server: notification not sent", "method", n.method, "err", err)
	}
}

// issue records r as sent to this connection and returns its id here, or
// false when the connection has closed.
func (s *session) issue(r *serverRequest) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.closed {
		return 0, false
	}
	id := s.st.nextRequestID
	s.st.nextRequestID++
	s.st.requests[id] = r
	return id, true
}

// take removes and returns the server request this connection knows as id.
func (s *session) take(id int64) *serverRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.st.requests[id]
	delete(s.st.requests, id)
	return r
}

// forget drops id from this connection's server requests.
func (s *session) forget(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.st.requests, id)
}

// subscribe adds t to this connection's threads; false if it was there
// already or the connection closed.
func (s *session) subscribe(t *thread) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.closed || s.st.threads[t.id] != nil {
		return false
	}
	s.st.threads[t.id] = t
	return true
}

// unsubscribe removes t; false if it was not there.
func (s *session) unsubscribe(t *thread) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.threads[t.id] != t {
		return false
	}
	delete(s.st.threads, t.id)
	return true
}

// addExec registers a command/exec process id; false if it is in use.
func (s *session) addExec(e *execProc) (*procs.Manager, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.closed || s.st.execs[e.id] != nil {
		return nil, false
	}
	if s.st.procs == nil {
		s.st.procs = procs.NewManager(s.srv.cfg.Procs)
	}
	s.st.execs[e.id] = e
	return s.st.procs, true
}

func (s *session) exec(id string) *execProc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.execs[id]
}

func (s *session) removeExec(e *execProc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.execs[e.id] == e {
		delete(s.st.execs, e.id)
	}
}

// close ends the session's life on the server (once): its subscriptions
// and the server requests it was sent are handed to their threads'
// listeners, which withdraw what nobody else can answer, and its
// command/exec processes are killed.
func (s *session) close() {
	s.mu.Lock()
	if s.st.closed {
		s.mu.Unlock()
		return
	}
	s.st.closed = true
	threads := make([]*thread, 0, len(s.st.threads))
	for _, t := range s.st.threads {
		threads = append(threads, t)
	}
	clear(s.st.threads)
	clear(s.st.requests)
	pm := s.st.procs
	s.mu.Unlock()
	for _, t := range threads {
		t.post(cmdDropSession{sess: s})
	}
	if pm != nil {
		pm.Close()
	}
	s.srv.removeSession(s)
}

// slowPeer logs, once, that the connection is being closed for not
// reading what it subscribed to.
func (s *session) slowPeer() {
	s.mu.Lock()
	first := !s.st.slow
	s.st.slow = true
	name := s.st.clientName
	s.mu.Unlock()
	if first {
		s.srv.log.Warn("app-server: disconnecting a client too slow to read", "client", name)
	}
}
