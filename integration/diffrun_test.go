package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// This file runs one sequence of the corpus against one server and records
// what a client can observe: per step, the answers (masked later), whether
// the server closed the connection; per process, its notifications.

// awaitTimeout bounds every wait of the runner. A long poll in the corpus
// (waitMs) stays well below it.
const awaitTimeout = 15 * time.Second

// side is one server under test.
type side struct {
	name string // "codex" or "codexd"
	url  string // ws://127.0.0.1:PORT
}

// observation is what one run of a sequence showed.
type observation struct {
	steps []stepObs
	// notes are notifications and end states, keyed for comparison:
	// "A process p1", "A fs/missingChanged", "A http r1", ...
	notes map[string]any
	// sent is each connection's process/start params by process id, to
	// know which processes ran on a tty.
	tty map[string]bool
	// violations are protocol invariants the server broke (seq order,
	// closed last, start answered before its notifications).
	violations []string
	// fatal is a failure of the runner itself (a refused message, a dial
	// error); the comparison is then meaningless.
	fatal error
}

// stepObs is what one step showed.
type stepObs struct {
	line    int
	conn    string // the connection it ran on
	desc    string // what was sent, for reports
	method  string // the method of the request the step waited for, if any
	answers []any  // masked answers, in the order the step collected them
	closed  bool   // the connection was closed by the server during this step
}

// wsConn is one client connection with its read loop.
type wsConn struct {
	name string
	c    *websocket.Conn

	mu      sync.Mutex
	cond    chan struct{} // closed and replaced whenever something arrives
	answers []json.RawMessage
	// arrivedAt[i] is the arrival index of answers[i]
	arrivedAt []int
	ended     bool
	// notifications, in arrival order
	notes   []json.RawMessage
	arrival int // count of every message, to order starts and notifications
	// startAnswered[processId] = arrival index of the process/start answer
	startAnswered map[string]int
	firstNote     map[string]int
	sid           string
	clientClosed  bool // the runner closed it (a close step)
	done          chan struct{}
}

func dialConn(ctx context.Context, url, name string) (*wsConn, error) {
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(256 << 20)
	w := &wsConn{name: name, c: c, cond: make(chan struct{}), done: make(chan struct{}),
		startAnswered: map[string]int{}, firstNote: map[string]int{}}
	go w.readLoop()
	return w, nil
}

func (w *wsConn) readLoop() {
	defer close(w.done)
	for {
		_, b, err := w.c.Read(context.Background())
		w.mu.Lock()
		if err != nil {
			w.ended = true
			w.signalLocked()
			w.mu.Unlock()
			return
		}
		w.arrival++
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProcessID string `json:"processId"`
			} `json:"params"`
		}
		_ = json.Unmarshal(b, &m)
		if m.Method != "" {
			w.notes = append(w.notes, b)
			if strings.HasPrefix(m.Method, "process/") {
				if _, ok := w.firstNote[m.Params.ProcessID]; !ok {
					w.firstNote[m.Params.ProcessID] = w.arrival
				}
			}
		} else {
			w.answers = append(w.answers, b)
			w.arrivedAt = append(w.arrivedAt, w.arrival)
		}
		w.signalLocked()
		w.mu.Unlock()
	}
}

func (w *wsConn) signalLocked() {
	close(w.cond)
	w.cond = make(chan struct{})
}

// waitFor waits until f (called with w.mu held) returns true, the
// connection ends, or the deadline passes; it reports f's last answer.
func (w *wsConn) waitFor(deadline time.Time, f func() bool) bool {
	for {
		w.mu.Lock()
		if f() {
			w.mu.Unlock()
			return true
		}
		ended, ch := w.ended, w.cond
		w.mu.Unlock()
		if ended {
			return false
		}
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
			return false
		}
	}
}

// takeAnswer removes and returns the first answer whose id is id, or a
// parse error (id -1): both servers read a connection's messages in order,
// so a parse error that arrives while the runner waits is the answer to
// the message it waits for, which the server could not read as a request.
// It also returns when the answer arrived.
func (w *wsConn) takeAnswer(id string, deadline time.Time) (json.RawMessage, int, bool) {
	var got json.RawMessage
	var at int
	ok := w.waitFor(deadline, func() bool {
		for i, a := range w.answers {
			if aid := answerID(a); aid == id || aid == "-1" {
				got, at = a, w.arrivedAt[i]
				w.removeAnswerLocked(i)
				return true
			}
		}
		return false
	})
	return got, at, ok
}

func (w *wsConn) removeAnswerLocked(i int) {
	w.answers = append(w.answers[:i:i], w.answers[i+1:]...)
	w.arrivedAt = append(w.arrivedAt[:i:i], w.arrivedAt[i+1:]...)
}

func answerID(a json.RawMessage) string {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(a, &m)
	return canonicalID(m.ID)
}

// canonicalID is the JSON text of an id, compacted; an integer is written
// the way a server that reads it as an integer echoes it ("-0" is "0").
func canonicalID(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	if n, err := strconv.ParseInt(b.String(), 10, 64); err == nil {
		return strconv.FormatInt(n, 10)
	}
	return b.String()
}

func (w *wsConn) send(typ websocket.MessageType, msg []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), awaitTimeout)
	defer cancel()
	return w.c.Write(ctx, typ, msg)
}

func (w *wsConn) isEnded() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ended
}

// runner runs one sequence against one side.
type runner struct {
	side    side
	seq     *sequence
	scratch string
	vars    map[string]string
	conns   map[string]*wsConn
	order   []string
	cur     *wsConn
	obs     *observation
	syncN   int
	pending map[*wsConn]map[string]int // ids sent with nowait, not yet awaited
	// started processes per session id, to clean them up.
	started map[string][]string
	// requestMethod remembers the method of each request id sent, per
	// connection, to mask its answer.
	requestMethod map[*wsConn]map[string][]string
}

func runSequence(s side, seq *sequence, scratch, httpURL string) *observation {
	r := &runner{
		side: s, seq: seq, scratch: scratch,
		vars:          map[string]string{"S": scratch, "HTTP": httpURL},
		conns:         map[string]*wsConn{},
		obs:           &observation{notes: map[string]any{}, tty: map[string]bool{}},
		pending:       map[*wsConn]map[string]int{},
		started:       map[string][]string{},
		requestMethod: map[*wsConn]map[string][]string{},
	}
	defer r.closeAll()
	if err := makeFixtures(scratch, seq.fixtures); err != nil {
		r.obs.fatal = fmt.Errorf("fixtures: %v", err)
		return r.obs
	}
	for _, st := range seq.steps {
		if err := r.step(st); err != nil {
			r.obs.fatal = fmt.Errorf("line %d (%s): %v", st.line, st.op, err)
			return r.obs
		}
	}
	r.cleanup()
	r.collectNotes()
	return r.obs
}

func (r *runner) conn(name string) (*wsConn, error) {
	if c := r.conns[name]; c != nil {
		return c, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), awaitTimeout)
	defer cancel()
	c, err := dialConn(ctx, r.side.url, name)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %v", r.side.url, err)
	}
	r.conns[name] = c
	r.order = append(r.order, name)
	r.pending[c] = map[string]int{}
	r.requestMethod[c] = map[string][]string{}
	return c, nil
}

func (r *runner) closeAll() {
	for _, c := range r.conns {
		c.c.CloseNow()
		<-c.done
	}
}

// msgInfo classifies a message the runner sends.
type msgInfo struct {
	isRequest bool // an object with a string method and a valid id
	id        string
	method    string
	params    json.RawMessage
}

func classify(msg []byte) msgInfo {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil {
		return msgInfo{}
	}
	var info msgInfo
	if json.Unmarshal(m["method"], &info.method) != nil {
		return msgInfo{}
	}
	info.params = m["params"]
	raw, ok := m["id"]
	if !ok {
		return info
	}
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) > 0 && raw[0] == '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			info.isRequest = true
		}
	default:
		if _, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			info.isRequest = true
		}
	}
	info.id = canonicalID(raw)
	return info
}

func (r *runner) step(st step) error {
	var err error
	switch st.op {
	case "conn":
		r.cur, err = r.conn(st.args[0])
		return err
	}
	if r.cur == nil {
		if r.cur, err = r.conn("A"); err != nil {
			return err
		}
	}
	c := r.cur
	switch st.op {
	case "init":
		if err := r.sendMsg(st, c, fmt.Sprintf(`{"id":"init-%s","method":"initialize","params":{"clientName":"codexd-differential"}}`, c.name), true, websocket.MessageText); err != nil {
			return err
		}
		return r.sendMsg(st, c, `{"method":"initialized"}`, true, websocket.MessageText)
	case "send":
		return r.sendMsg(st, c, st.msg, true, websocket.MessageText)
	case "nowait":
		return r.sendMsg(st, c, st.msg, false, websocket.MessageText)
	case "resume":
		return r.resume(st, c)
	case "raw":
		return r.sendMsg(st, c, st.msg, true, websocket.MessageText)
	case "binary":
		return r.sendMsg(st, c, st.msg, true, websocket.MessageBinary)
	case "await":
		so := stepObs{line: st.line, desc: "await " + st.args[0]}
		id := canonicalID([]byte(st.args[0]))
		r.awaitInto(c, id, &so)
		delete(r.pending[c], id)
		r.record(so)
		return nil
	case "sync":
		so := stepObs{line: st.line, desc: "sync"}
		r.sync(c, &so)
		r.record(so)
		return nil
	case "wait-output", "wait-exited", "wait-closed", "wait-body", "wait-missing":
		so := stepObs{line: st.line, desc: st.op + " " + strings.Join(st.args, " ")}
		if !c.waitFor(time.Now().Add(awaitTimeout), func() bool { return processHas(c.notes, st.op, st.args) }) {
			// Recorded, not fatal: one side may never notify.
			so.answers = append(so.answers, map[string]any{"timeout": st.op})
			if c.isEnded() {
				so.closed = true
			}
		}
		r.record(so)
		return nil
	case "close":
		c.mu.Lock()
		c.clientClosed = true
		c.mu.Unlock()
		c.c.CloseNow()
		<-c.done
		r.record(stepObs{line: st.line, desc: "close " + c.name})
		return nil
	}
	return fmt.Errorf("unknown step %q", st.op)
}

// processHas reports whether the notifications hold what a wait-* step
// waits for.
func processHas(notes []json.RawMessage, op string, args []string) bool {
	var out bytes.Buffer
	for _, n := range notes {
		var m struct {
			Method string `json:"method"`
			Params struct {
				ProcessID string      `json:"processId"`
				RequestID string      `json:"requestId"`
				Chunk     string      `json:"chunk"`
				Done      bool        `json:"done"`
				WatchID   json.Number `json:"watchId"`
			} `json:"params"`
		}
		if json.Unmarshal(n, &m) != nil {
			continue
		}
		if op == "wait-missing" {
			if m.Method == "fs/missingChanged" && m.Params.WatchID.String() == args[0] {
				return true
			}
			continue
		}
		if op == "wait-body" {
			if m.Method == "http/request/bodyDelta" && m.Params.RequestID == args[0] && m.Params.Done {
				return true
			}
			continue
		}
		if m.Params.ProcessID != args[0] {
			continue
		}
		switch {
		case op == "wait-exited" && m.Method == "process/exited",
			op == "wait-closed" && m.Method == "process/closed":
			return true
		case m.Method == "process/output":
			b, _ := base64.StdEncoding.DecodeString(m.Params.Chunk)
			out.Write(b)
		}
	}
	return op == "wait-output" && strings.Contains(out.String(), args[1])
}

// sendMsg sends msg on c and, when wait is set, waits for what it causes:
// the answer of a request, or (for anything else) a sync.
func (r *runner) sendMsg(st step, c *wsConn, text string, wait bool, typ websocket.MessageType) error {
	msg := []byte(expand(text, r.vars))
	if err := checkSafe(msg, r.scratch); err != nil {
		return fmt.Errorf("refusing to send %s: %v", msg, err)
	}
	so := stepObs{line: st.line, desc: string(msg)}
	if typ == websocket.MessageBinary {
		so.desc = "(binary) " + so.desc
	}
	info := classify(msg)
	if info.method == "process/start" {
		var p struct {
			ProcessID string `json:"processId"`
			Tty       bool   `json:"tty"`
		}
		if json.Unmarshal(info.params, &p) == nil && p.Tty {
			r.obs.tty[c.name+" "+p.ProcessID] = true
		}
	}
	if c.isEnded() {
		so.closed = true
		so.answers = append(so.answers, map[string]any{"notSent": "connection closed"})
		r.record(so)
		return nil
	}
	if info.isRequest {
		r.requestMethod[c][info.id] = append(r.requestMethod[c][info.id], info.method)
	}
	if err := c.send(typ, msg); err != nil {
		so.closed = true
		so.answers = append(so.answers, map[string]any{"notSent": "connection closed"})
		r.record(so)
		return nil
	}
	switch {
	case !wait:
		if !info.isRequest {
			return errors.New("nowait is only for requests with a valid id")
		}
		r.pending[c][info.id]++
		so.desc = "nowait " + so.desc
	case info.isRequest:
		so.method = info.method
		r.awaitInto(c, info.id, &so)
	default:
		r.sync(c, &so)
	}
	r.record(so)
	return nil
}

// record appends a step's observation.
func (r *runner) record(so stepObs) {
	if so.conn == "" && r.cur != nil {
		so.conn = r.cur.name
	}
	r.obs.steps = append(r.obs.steps, so)
}

// awaitInto waits for the answer with id and records it.
func (r *runner) awaitInto(c *wsConn, id string, so *stepObs) {
	a, at, ok := c.takeAnswer(id, time.Now().Add(awaitTimeout))
	if !ok {
		if c.isEnded() {
			so.closed = true
			so.answers = append(so.answers, map[string]any{"noAnswer": "connection closed"})
		} else {
			so.answers = append(so.answers, map[string]any{"noAnswer": "timeout"})
		}
		return
	}
	so.answers = append(so.answers, r.noteAnswer(c, id, a, at))
}

// noteAnswer learns what an answer tells the runner (session ids, started
// processes) and returns it decoded.
func (r *runner) noteAnswer(c *wsConn, id string, a json.RawMessage, arrival int) any {
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(a))
	dec.UseNumber()
	_ = dec.Decode(&v)
	methods := r.requestMethod[c][id]
	method := ""
	if len(methods) > 0 {
		method = methods[0]
		r.requestMethod[c][id] = methods[1:]
	}
	res, _ := v["result"].(map[string]any)
	switch {
	case res == nil:
	case method == "initialize":
		if sid, ok := res["sessionId"].(string); ok {
			c.sid = sid
			if c.name == "A" {
				r.vars["SID"] = sid
			}
			r.vars["SID_"+c.name] = sid
		}
	case method == "process/start":
		if pid, ok := res["processId"].(string); ok && c.sid != "" {
			r.started[c.sid] = append(r.started[c.sid], pid)
			c.mu.Lock()
			c.startAnswered[pid] = arrival
			c.mu.Unlock()
		}
	}
	return map[string]any{"method": method, "answer": v}
}

// sync sends a probe and waits for its answer; answers that came before it
// (to frames that did not parse, id -1) are recorded.
func (r *runner) sync(c *wsConn, so *stepObs) {
	r.syncN++
	id := fmt.Sprintf(`"sync-%d"`, r.syncN)
	probe := fmt.Sprintf(`{"id":%s,"method":"environment/status"}`, id)
	r.requestMethod[c][id] = append(r.requestMethod[c][id], "environment/status")
	if err := c.send(websocket.MessageText, []byte(probe)); err != nil {
		// The connection is closing; whatever came before is still read.
		c.waitFor(time.Now().Add(awaitTimeout), func() bool { return false })
	} else {
		c.waitFor(time.Now().Add(awaitTimeout), func() bool {
			for _, a := range c.answers {
				if answerID(a) == id {
					return true
				}
			}
			return false
		})
	}
	c.mu.Lock()
	var got []json.RawMessage
	var gotAt []int
	found := false
	for i := 0; i < len(c.answers); {
		a := c.answers[i]
		aid := answerID(a)
		switch {
		case aid == id:
			found = true
		case r.pending[c][aid] > 0:
			i++
			continue
		default:
			got = append(got, a)
			gotAt = append(gotAt, c.arrivedAt[i])
		}
		c.removeAnswerLocked(i)
	}
	ended := c.ended
	c.mu.Unlock()
	for i, a := range got {
		so.answers = append(so.answers, r.noteAnswer(c, answerID(a), a, gotAt[i]))
	}
	if !found {
		so.closed = ended
		if ended {
			so.answers = append(so.answers, map[string]any{"sync": "connection closed"})
		} else {
			so.answers = append(so.answers, map[string]any{"sync": "timeout"})
		}
	}
}

// resume sends an initialize that resumes a session, again while the
// server answers -32010 (it has not yet seen the previous connection go).
func (r *runner) resume(st step, c *wsConn) error {
	deadline := time.Now().Add(awaitTimeout)
	for attempt := 0; ; attempt++ {
		before := len(r.obs.steps)
		if err := r.sendMsg(st, c, st.msg, true, websocket.MessageText); err != nil {
			return err
		}
		last := r.obs.steps[len(r.obs.steps)-1]
		if len(last.answers) != 1 || !isSessionTaken(last.answers[0]) || time.Now().After(deadline) {
			return nil
		}
		// The server has not noticed the old connection's end yet: wait
		// for it as a client would, then ask again.
		r.obs.steps = r.obs.steps[:before]
		select {
		case <-time.After(time.Duration(attempt+1) * 5 * time.Millisecond):
		case <-time.After(time.Until(deadline)):
		}
	}
}

func isSessionTaken(a any) bool {
	m, _ := a.(map[string]any)
	ans, _ := m["answer"].(map[string]any)
	e, _ := ans["error"].(map[string]any)
	code, _ := e["code"].(json.Number)
	return code == "-32010"
}

// cleanup terminates what the sequence left running on open connections,
// and waits for the closes, so that every process's notifications are
// complete before they are compared.
func (r *runner) cleanup() {
	so := stepObs{line: 0, desc: "cleanup"}
	for _, name := range r.order {
		c := r.conns[name]
		if c.isEnded() || c.sid == "" {
			continue
		}
		for _, pid := range r.started[c.sid] {
			c.mu.Lock()
			closed := processHas(c.notes, "wait-closed", []string{pid})
			c.mu.Unlock()
			if closed {
				continue
			}
			r.syncN++
			id := fmt.Sprintf(`"cleanup-%d"`, r.syncN)
			pidJSON, _ := json.Marshal(pid)
			msg := fmt.Sprintf(`{"id":%s,"method":"process/terminate","params":{"processId":%s}}`, id, pidJSON)
			r.requestMethod[c][id] = append(r.requestMethod[c][id], "process/terminate")
			if c.send(websocket.MessageText, []byte(msg)) != nil {
				break
			}
			r.awaitInto(c, id, &so)
			if !c.waitFor(time.Now().Add(awaitTimeout), func() bool { return processHas(c.notes, "wait-closed", []string{pid}) }) {
				so.answers = append(so.answers, map[string]any{"timeout": "closed of " + pid + " after terminate"})
			}
		}
	}
	if len(so.answers) > 0 {
		r.record(so)
	}
}

// collectNotes summarises each connection's notifications and leftovers.
func (r *runner) collectNotes() {
	for _, name := range r.order {
		c := r.conns[name]
		c.mu.Lock()
		notes := append([]json.RawMessage(nil), c.notes...)
		left := append([]json.RawMessage(nil), c.answers...)
		leftAt := append([]int(nil), c.arrivedAt...)
		ended := c.ended && !c.clientClosed
		starts, firsts := c.startAnswered, c.firstNote
		c.mu.Unlock()
		procsSeen := summariseNotes(name, notes, r.obs)
		for pid := range procsSeen {
			if s, ok := starts[pid]; ok && firsts[pid] != 0 && firsts[pid] < s {
				r.obs.violations = append(r.obs.violations,
					fmt.Sprintf("connection %s: a notification of process %q came before the process/start answer", name, pid))
			}
		}
		if len(left) > 0 {
			var l []any
			for i, a := range left {
				l = append(l, r.noteAnswer(c, answerID(a), a, leftAt[i]))
			}
			r.obs.notes[name+" unawaited answers"] = l
		}
		if ended {
			r.obs.notes[name+" closed by the server"] = true
		}
	}
}
