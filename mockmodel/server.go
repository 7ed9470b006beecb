package mockmodel

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Server.
type Options struct {
	// Script's rules are tried before the built-in behaviour; nil means
	// none.
	Script *Script
	// Logf, if set, gets one line per request.
	Logf func(format string, args ...any)
	// ContextWindow, when positive, is the model's window in tokens: a
	// request estimated past it (a token for every 4 bytes of the body)
	// fails with context_length_exceeded. MOCK:window=N sets it per
	// request.
	ContextWindow int64
}

// Server is the mock model. It is an http.Handler; Start serves it on a
// listener of its own.
type Server struct {
	opts Options

	mu        sync.Mutex
	exchanges []*Exchange
	fired     []int             // how often each rule fired
	ids       map[string]int    // per id prefix
	limited   map[[32]byte]bool // bodies MOCK:429 has refused once
	arrived   chan struct{}     // closed and replaced when a request arrives

	closing  chan struct{}  // closed by Close, under mu
	handlers sync.WaitGroup // added to under mu while not closing
	srv      *http.Server
	served   chan struct{} // closed when srv.Serve returns
	url      string
}

// New returns a mock model server.
func New(opts Options) *Server {
	s := &Server{opts: opts, ids: map[string]int{}, limited: map[[32]byte]bool{}, arrived: make(chan struct{}), closing: make(chan struct{})}
	if opts.Script != nil {
		s.fired = make([]int, len(opts.Script.Rules))
	}
	return s
}

// Exchange is one request the server received and what became of it.
type Exchange struct {
	// N is the request's 1-based number on this server.
	N      int
	Method string
	Path   string
	Header http.Header
	Body   []byte
	// Answer names what answered: "rule 2 (name)", "MOCK:slow",
	// "default:exec", "default:answer", "default:text", "schema", or
	// "not found" / "bad request".
	Answer string
	// Status is the HTTP status sent.
	Status int

	done     chan struct{}
	gone     chan struct{}
	goneOnce sync.Once
	sent     atomic.Int64
}

// JSON decodes the request body.
func (e *Exchange) JSON() (map[string]any, error) {
	var m map[string]any
	err := json.Unmarshal(e.Body, &m)
	return m, err
}

// Done is closed when the server has finished with the request: the
// response ended, was cut, or the client left.
func (e *Exchange) Done() <-chan struct{} { return e.done }

// Gone is closed when the server noticed the client leave before the
// response was complete (an interrupted or abandoned stream).
func (e *Exchange) Gone() <-chan struct{} { return e.gone }

// ClientGone reports whether Gone is closed.
func (e *Exchange) ClientGone() bool {
	select {
	case <-e.gone:
		return true
	default:
		return false
	}
}

// EventsSent is how many SSE events were written so far.
func (e *Exchange) EventsSent() int { return int(e.sent.Load()) }

func (e *Exchange) markGone() { e.goneOnce.Do(func() { close(e.gone) }) }

// Requests returns the exchanges so far, oldest first.
func (s *Server) Requests() []*Exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Exchange(nil), s.exchanges...)
}

// WaitRequest waits until request n (1-based) has arrived and returns it.
func (s *Server) WaitRequest(ctx context.Context, n int) (*Exchange, error) {
	for {
		s.mu.Lock()
		if len(s.exchanges) >= n {
			e := s.exchanges[n-1]
			s.mu.Unlock()
			return e, nil
		}
		ch := s.arrived
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for request %d: %w", n, ctx.Err())
		}
	}
}

func (s *Server) next(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids[prefix]++
	return prefix + strconv.Itoa(s.ids[prefix])
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

// ServeHTTP answers POST /v1/responses and /responses.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	select {
	case <-s.closing:
		s.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, &ErrorBody{Message: "The mock model is shutting down."}, "", 0)
		return
	default:
	}
	s.handlers.Add(1)
	s.mu.Unlock()
	defer s.handlers.Done()
	body, _ := io.ReadAll(io.LimitReader(r.Body, 256<<20))
	ex := &Exchange{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body,
		done: make(chan struct{}), gone: make(chan struct{})}
	defer close(ex.done)

	s.mu.Lock()
	ex.N = len(s.exchanges) + 1
	s.exchanges = append(s.exchanges, ex)
	close(s.arrived)
	s.arrived = make(chan struct{})
	s.mu.Unlock()

	path := strings.TrimSuffix(r.URL.Path, "/")
	if path != "/v1/responses" && path != "/responses" {
		ex.Answer, ex.Status = "not found", http.StatusNotFound
		s.logf("mock-model: #%d %s %s: not found", ex.N, r.Method, r.URL.Path)
		writeError(w, http.StatusNotFound, &ErrorBody{Message: "The mock model serves POST /v1/responses only.", Type: "invalid_request_error"}, "", 0)
		return
	}
	if r.Method != http.MethodPost {
		ex.Answer, ex.Status = "bad request", http.StatusMethodNotAllowed
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, &ErrorBody{Message: "Use POST.", Type: "invalid_request_error"}, "", 0)
		return
	}
	req := parseRequest(ex.N, body)
	if !req.decoded {
		ex.Answer, ex.Status = "bad request", http.StatusBadRequest
		writeError(w, http.StatusBadRequest, &ErrorBody{Message: "We could not parse the JSON body of your request.", Type: "invalid_request_error"}, "", 0)
		return
	}

	resp, answer := s.choose(req)
	ex.Answer = answer
	s.logf("mock-model: #%d %s: %s", ex.N, strings.TrimSpace(firstLine(req.prompt())), answer)
	if resp.Status != 0 && resp.Status != http.StatusOK {
		ex.Status = resp.Status
		for k, v := range resp.Headers {
			w.Header().Set(k, v)
		}
		writeError(w, resp.Status, resp.Error, resp.RetryAfter, resp.RetryAfterMs)
		return
	}
	ex.Status = http.StatusOK
	model := req.model
	if model == "" {
		model = "mock-model"
	}
	s.stream(w, r, ex, resp, build(req, resp, model, s.next("resp_mock_"), s))
}

// choose picks the rule, or the built-in behaviour, that answers req.
func (s *Server) choose(req *request) (Response, string) {
	if sc := s.opts.Script; sc != nil {
		s.mu.Lock()
		for i := range sc.Rules {
			rule := &sc.Rules[i]
			if rule.Times > 0 && s.fired[i] >= rule.Times {
				continue
			}
			if rule.When.matches(req) {
				s.fired[i]++
				s.mu.Unlock()
				return rule.Respond, fmt.Sprintf("rule %d%s", i+1, ruleName(*rule))
			}
		}
		s.mu.Unlock()
	}
	if resp, label, ok := longContext(req, s.opts.ContextWindow); ok {
		return resp, label
	}
	resp, label := builtin(req)
	if label == "MOCK:429" {
		// Refuse a request once: its retry (the same body) is answered.
		sum := sha256.Sum256(req.body)
		s.mu.Lock()
		again := s.limited[sum]
		s.limited[sum] = true
		s.mu.Unlock()
		if again {
			return textResponse(HelloText, 3), "MOCK:429 (retried)"
		}
	}
	return resp, label
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return s
}

func writeError(w http.ResponseWriter, status int, e *ErrorBody, retryAfter string, retryAfterMs int) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	if retryAfterMs > 0 {
		w.Header().Set("Retry-After-Ms", strconv.Itoa(retryAfterMs))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(errorBody(status, e, retryAfter))
}

// stream writes events as server-sent events, flushing each, waiting the
// delays, and cutting or stalling where resp says.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, ex *Exchange, resp Response, events []event) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Request-Id", fmt.Sprintf("req_mock_%d", ex.N))
	for k, v := range resp.Headers {
		h.Set(k, v)
	}
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if rc.Flush() != nil {
		ex.markGone()
		return
	}
	ctx := r.Context()
	var buf bytes.Buffer
	for i, ev := range events {
		if resp.StallAfter > 0 && i == resp.StallAfter {
			select {
			case <-ctx.Done():
				ex.markGone()
			case <-s.closing:
			}
			return
		}
		if resp.CutAfter > 0 && i == resp.CutAfter {
			// Close the connection without ending the response, as a
			// dropped connection does.
			panic(http.ErrAbortHandler)
		}
		if ev.delay > 0 {
			t := time.NewTimer(ev.delay)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				ex.markGone()
				return
			case <-s.closing:
				t.Stop()
				return
			}
		}
		data, err := json.Marshal(ev.data)
		if err != nil {
			panic(err) // obj holds only marshalable values
		}
		buf.Reset()
		fmt.Fprintf(&buf, "event: %s\ndata: %s\n\n", ev.name, data)
		if _, err := w.Write(buf.Bytes()); err != nil {
			ex.markGone()
			return
		}
		if err := rc.Flush(); err != nil {
			ex.markGone()
			return
		}
		ex.sent.Add(1)
	}
}

// Start serves on addr ("127.0.0.1:0" picks a port) in the background
// and returns the base URL for a provider's base_url,
// "http://127.0.0.1:PORT/v1".
func (s *Server) Start(addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	return s.Serve(ln), nil
}

// Serve serves on ln in the background and returns the base URL.
func (s *Server) Serve(ln net.Listener) string {
	s.mu.Lock()
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.url = "http://" + ln.Addr().String() + "/v1"
	s.served = make(chan struct{})
	srv, served := s.srv, s.served
	s.mu.Unlock()
	go func() {
		defer close(served)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logf("mock-model: %v", err)
		}
	}()
	return s.url
}

// URL is the base URL Start returned ("" before).
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// Close ends every stream (stalled ones too), stops the listener if Start
// made one, and waits for the handlers to return.
func (s *Server) Close() error {
	s.mu.Lock()
	select {
	case <-s.closing:
	default:
		close(s.closing)
	}
	srv, served := s.srv, s.served
	s.mu.Unlock()
	var err error
	if srv != nil {
		err = srv.Close()
		<-served
	}
	s.handlers.Wait()
	return err
}
