package appserver

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"go.uber.org/goleak"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/jsonrpc"
	"github.com/codexd/codexd/sandbox"
)

func TestMain(m *testing.M) {
	// command/exec confines its commands by re-running this binary as the
	// sandbox helper.
	sandbox.RunHelperIfRequested()
	agenttest.CloseGrace = 100 * time.Millisecond
	goleak.VerifyTestMain(m)
}

// wait is how long a test waits for something that must happen.
const wait = 10 * time.Second

// env is a server over a scripted core.
type env struct {
	t    *testing.T
	core testCore
	srv  *Server
}

func newEnv(t *testing.T, opts agenttest.Options, cfg Config) *env {
	t.Helper()
	return newEnvWith(t, agenttest.New(opts), cfg)
}

// testCore is a core a test can reach into.
type testCore interface {
	agent.Core
	Thread(id string) *agenttest.Thread
	SetTurn(agenttest.TurnFunc)
	SetTurnKind(string)
}

func newEnvWith(t *testing.T, core testCore, cfg Config) *env {
	t.Helper()
	cfg.Core = core
	if cfg.Logger == nil {
		cfg.Logger = discardLogger()
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, core: core, srv: srv}
	t.Cleanup(func() {
		srv.Close()
		core.Close()
	})
	return e
}

// --- A JSON client over a pipe. ---

// wmsg is a message the server sent, as it arrived.
type wmsg struct {
	raw         []byte
	Method      string         `json:"method"`
	ID          jsontext.Value `json:"id"`
	Params      jsontext.Value `json:"params"`
	Result      jsontext.Value `json:"result"`
	rawError    jsontext.Value
	Error       *wireErr `json:"error"`
	EmittedAtMs *int64   `json:"emittedAtMs"`
}

type wireErr struct {
	Code    int64          `json:"code"`
	Message string         `json:"message"`
	Data    jsontext.Value `json:"data"`
}

func (m *wmsg) String() string { return string(m.raw) }

// param decodes the params member at path (a JSON pointer) into v.
func (m *wmsg) param(path string, v any) error { return pointer(m.Params, path, v) }

func pointer(doc jsontext.Value, path string, v any) error {
	var cur any
	if err := json.Unmarshal(doc, &cur); err != nil {
		return err
	}
	if path != "" {
		for _, tok := range strings.Split(path[1:], "/") {
			switch x := cur.(type) {
			case map[string]any:
				next, ok := x[tok]
				if !ok {
					return fmt.Errorf("%s not found", path)
				}
				cur = next
			case []any:
				i, err := strconv.Atoi(tok)
				if err != nil || i < 0 || i >= len(x) {
					return fmt.Errorf("%s not found", path)
				}
				cur = x[i]
			default:
				return fmt.Errorf("%s not found", path)
			}
		}
	}
	b, err := json.Marshal(cur)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// str returns the string at path in m's params (or result).
func (m *wmsg) str(t testing.TB, path string) string {
	t.Helper()
	doc := m.Params
	if doc == nil {
		doc = m.Result
	}
	var s string
	if err := pointer(doc, path, &s); err != nil {
		t.Fatalf("%v in %s", err, m.raw)
	}
	return s
}

type jclient struct {
	t    testing.TB
	name string
	conn io.Closer
	done chan struct{}
	// recv reads one message; write sends one.
	recv  func() ([]byte, error)
	write func([]byte) error

	mu      sync.Mutex
	queue   []*wmsg
	log     []*wmsg
	methods map[string]string // request id → method
	nextID  int
	changed chan struct{}
	readErr error // why reading stopped
	paused  chan struct{}
	// unchecked skips the schema check of notifications (see the WebSocket
	// test: they are the very bytes another client checked).
	unchecked bool
	// patience, if set, replaces wait as the silence next tolerates (a
	// test whose requests are megabytes long, which a -race build on a
	// loaded machine takes many seconds to decode).
	patience time.Duration
}

// readPause stops the reader before its next read, as a client that stops
// reading; the returned func resumes it.
func (c *jclient) readPause() (resume func()) {
	ch := make(chan struct{})
	c.mu.Lock()
	c.paused = ch
	c.mu.Unlock()
	return func() { close(ch) }
}

// dial connects a JSON client over a pipe.
func (e *env) dial(name string) *jclient {
	e.t.Helper()
	srvSide, cliSide := net.Pipe()
	return e.dialOn(name, srvSide, cliSide, e.srv.ServeStream, nil)
}

// dialOn connects a JSON client on cliSide to the server, which serves
// srvSide with serve. At the end of the test, beforeClose (if any) runs,
// then the client hangs up and both sides are waited for.
func (e *env) dialOn(name string, srvSide, cliSide net.Conn, serve func(jsonrpc.Stream) error, beforeClose func()) *jclient {
	e.t.Helper()
	c := newJClient(e.t, name, cliSide)
	r := bufio.NewReaderSize(cliSide, 1<<20)
	c.recv = func() ([]byte, error) {
		line, err := r.ReadBytes('\n')
		return bytes.TrimSpace(line), err
	}
	c.write = func(b []byte) error {
		_, err := cliSide.Write(append(b, '\n'))
		return err
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = serve(jsonrpc.NewLineStream(srvSide, 0))
	}()
	go c.read()
	e.t.Cleanup(func() {
		if beforeClose != nil {
			beforeClose()
		}
		cliSide.Close()
		<-c.done
		<-served
	})
	return c
}

func newJClient(t testing.TB, name string, conn io.Closer) *jclient {
	return &jclient{t: t, name: name, conn: conn, done: make(chan struct{}), methods: map[string]string{},
		nextID: 1, changed: make(chan struct{}, 1)}
}

func (c *jclient) read() {
	defer close(c.done)
	for {
		c.mu.Lock()
		p := c.paused
		c.paused = nil
		c.mu.Unlock()
		if p != nil {
			<-p
		}
		line, err := c.recv()
		if err != nil {
			c.mu.Lock()
			c.readErr = err
			c.mu.Unlock()
			return
		}
		m := &wmsg{raw: line}
		if err := json.Unmarshal(line, m); err != nil {
			c.t.Errorf("%s: server sent a line that is not a message: %v: %s", c.name, err, line)
			continue
		}
		if m.Error != nil {
			var w struct {
				Error jsontext.Value `json:"error"`
			}
			_ = json.Unmarshal(line, &w)
			m.rawError = w.Error
		}
		c.mu.Lock()
		method := ""
		if m.Method == "" {
			method = c.methods[string(m.ID)]
		}
		c.queue = append(c.queue, m)
		c.log = append(c.log, m)
		unchecked := c.unchecked && m.Method != "" && m.ID == nil
		c.mu.Unlock()
		if !unchecked {
			checkSchema(c.t, m, method)
		}
		select {
		case c.changed <- struct{}{}:
		default:
		}
	}
}

// send writes one raw line.
func (c *jclient) send(line string) {
	c.t.Helper()
	if err := c.write([]byte(line)); err != nil {
		c.t.Fatalf("%s: write: %v", c.name, err)
	}
}

// requestID sends method with the given id (a JSON value) and params.
func (c *jclient) requestID(id string, method string, params any) {
	c.t.Helper()
	c.mu.Lock()
	c.methods[id] = method
	c.mu.Unlock()
	msg := `{"method":` + strconv.Quote(method) + `,"id":` + id
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			c.t.Fatal(err)
		}
		msg += `,"params":` + string(b)
	}
	c.send(msg + "}")
}

// request sends method with the next numeric id and returns the id.
func (c *jclient) request(method string, params any) string {
	c.t.Helper()
	c.mu.Lock()
	id := strconv.Itoa(c.nextID)
	c.nextID++
	c.mu.Unlock()
	c.requestID(id, method, params)
	return id
}

// next removes and returns the first queued message that match accepts,
// waiting for it.
func (c *jclient) next(what string, match func(*wmsg) bool) *wmsg {
	c.t.Helper()
	patience := wait
	if c.patience > 0 {
		patience = c.patience
	}
	deadline := time.NewTimer(patience)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		for i, m := range c.queue {
			if match(m) {
				c.queue = append(c.queue[:i:i], c.queue[i+1:]...)
				c.mu.Unlock()
				return m
			}
		}
		c.mu.Unlock()
		select {
		case <-c.changed:
			// Waiting is for liveness: as long as messages keep coming,
			// a slow machine is not a failure.
			deadline.Reset(patience)
		case <-c.done:
			c.t.Fatalf("%s: connection closed while waiting for %s", c.name, what)
		case <-deadline.C:
			c.t.Fatalf("%s: timed out waiting for %s; have %v", c.name, what, c.pending())
		}
	}
}

func (c *jclient) pending() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, m := range c.queue {
		raw := string(m.raw)
		if len(raw) > 300 {
			raw = raw[:300] + "..."
		}
		out = append(out, raw)
	}
	if len(out) > 8 {
		out = append(out[:4], append([]string{fmt.Sprintf("... %d more ...", len(out)-8)}, out[len(out)-4:]...)...)
	}
	return out
}

// response waits for the answer to id.
func (c *jclient) response(id string) *wmsg {
	c.t.Helper()
	return c.next("the response to "+id, func(m *wmsg) bool { return m.Method == "" && string(m.ID) == id })
}

// note waits for a notification of method.
func (c *jclient) note(method string) *wmsg {
	c.t.Helper()
	return c.next("notification "+method, func(m *wmsg) bool { return m.Method == method && m.ID == nil })
}

// serverRequest waits for a server request of method.
func (c *jclient) serverRequest(method string) *wmsg {
	c.t.Helper()
	return c.next("server request "+method, func(m *wmsg) bool { return m.Method == method && m.ID != nil })
}

// call sends a request and waits for its answer, which must be a result.
func (c *jclient) call(method string, params any) *wmsg {
	c.t.Helper()
	m := c.response(c.request(method, params))
	if m.Error != nil {
		c.t.Fatalf("%s: %s failed: %d %s", c.name, method, m.Error.Code, m.Error.Message)
	}
	return m
}

// callErr sends a request and returns its error, which it must be.
func (c *jclient) callErr(method string, params any) *wireErr {
	c.t.Helper()
	m := c.response(c.request(method, params))
	if m.Error == nil {
		c.t.Fatalf("%s: %s succeeded, want an error: %s", c.name, method, m.raw)
	}
	return m.Error
}

// barrier makes a round trip: everything the server queued for this
// connection before it is then in the queue.
func (c *jclient) barrier() {
	c.t.Helper()
	c.call(appproto.MethodThreadLoadedList, map[string]any{})
}

// has reports whether a queued message matches.
func (c *jclient) has(match func(*wmsg) bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.queue {
		if match(m) {
			return true
		}
	}
	return false
}

// logged returns every message received so far, in order.
func (c *jclient) logged() []*wmsg {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*wmsg(nil), c.log...)
}

func (c *jclient) initialize(caps map[string]any) *wmsg {
	c.t.Helper()
	p := map[string]any{"clientInfo": map[string]any{"name": c.name, "title": nil, "version": "1.0"}}
	if caps != nil {
		p["capabilities"] = caps
	}
	return c.call(appproto.MethodInitialize, p)
}

// startThread starts a thread and returns its id (its thread/started is
// left in the queue).
func (c *jclient) startThread(params map[string]any) string {
	c.t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	return c.call(appproto.MethodThreadStart, params).str(c.t, "/thread/id")
}

func (c *jclient) startTurn(thread, text string) string {
	c.t.Helper()
	return c.call(appproto.MethodTurnStart, map[string]any{"threadId": thread,
		"input": []any{map[string]any{"type": "text", "text": text, "text_elements": []any{}}}}).str(c.t, "/turn/id")
}

func text(s string) []map[string]any {
	return []map[string]any{{"type": "text", "text": s, "text_elements": []any{}}}
}

func discardLogger() *slogLogger { return slogDiscard }

func methodsOf(ms []*wmsg) []string {
	var out []string
	for _, m := range ms {
		switch {
		case m.Method != "" && m.ID != nil:
			out = append(out, "request:"+m.Method)
		case m.Method != "":
			out = append(out, m.Method)
		case m.Error != nil:
			out = append(out, "error:"+string(m.ID))
		default:
			out = append(out, "response:"+string(m.ID))
		}
	}
	return out
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

var _ = context.Background
var _ = strings.Contains

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// joinText is the input of the first turn that join runs; plainFirst
// plays it with agenttest.DefaultTurn.
const joinText = "a first turn, so that the thread has a rollout"

// plainFirst plays join's first turn with agenttest.DefaultTurn and every
// other turn with f (DefaultTurn if nil), so that a test's own script runs
// only in the turns it is about.
func plainFirst(f agenttest.TurnFunc) agenttest.TurnFunc {
	return func(tn *agenttest.Turn) {
		if in := tn.Input(); f == nil || len(in) == 1 && in[0].Text == joinText {
			agenttest.DefaultTurn(tn)
			return
		}
		f(tn)
	}
}

// join subscribes other to owner's new thread as a client of Codex can:
// thread/resume needs the thread's rollout, which a thread has from its
// first user message on, so owner first runs a turn (joinText) to its end,
// then other resumes. What both clients received until then is forgotten
// (queue and log), so that the test sees only what follows.
func join(owner, other *jclient, thread string) {
	owner.t.Helper()
	owner.startTurn(thread, joinText)
	owner.next("the end of join's first turn", func(m *wmsg) bool {
		return m.Method == "turn/completed" && strings.Contains(string(m.Params), thread)
	})
	other.call(appproto.MethodThreadResume, map[string]any{"threadId": thread})
	for _, c := range []*jclient{owner, other} {
		c.barrier()
		c.mu.Lock()
		c.queue, c.log = nil, nil
		c.mu.Unlock()
	}
}
