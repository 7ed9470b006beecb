//go:build linux

package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/codexd/codexd/mockmodel"
)

// This file runs one app-server session of the corpus (appdiffcorpus_test.go)
// against one server: it starts the server with a CODEX_HOME, a work
// directory and a mock model of its own, plays the session's steps on one
// stdio client or on WebSocket clients, and records what they observed:
// per step the answers and server requests, per connection every
// notification.

// appSide is one server under test.
type appSide struct {
	name string // "codex" or "codexd"
	bin  string
}

// appObservation is what one run of a session showed, unmasked.
type appObservation struct {
	steps []appStepObs
	// notes[conn] are the connection's notifications, in arrival order.
	notes map[string][]map[string]any
	conns []string
	// vars are the values the session bound (thread ids, cursors...), to
	// mask them by name.
	vars  map[string]string
	dirs  appDirs
	log   string // the server's stderr, for reports
	fatal error
}

type appStepObs struct {
	line   int
	conn   string
	desc   string
	method string // the request's method, when the step sent one
	// msgs are the messages the step collected: answers and server
	// requests, decoded.
	msgs []any
}

// appDirs are one side's directories.
type appDirs struct{ home, work, tmp string }

// appConn is one client connection and everything it received.
type appConn struct {
	name  string
	write func([]byte) error
	stop  func()

	mu    sync.Mutex
	cond  chan struct{}
	msgs  []map[string]any // every message, in arrival order
	taken map[int]bool     // answers and requests a step has taken, notifications a wait consumed
	// waitFrom is where the next wait starts looking: a wait takes the
	// first notification of its method after the one the last wait took.
	waitFrom int
	ended    bool
	done     chan struct{}
}

func newAppConn(name string, write func([]byte) error, stop func()) *appConn {
	return &appConn{name: name, write: write, stop: stop, cond: make(chan struct{}), taken: map[int]bool{}, done: make(chan struct{})}
}

// add records one inbound message (a line or a frame).
func (c *appConn) add(b []byte) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if dec.Decode(&m) != nil {
		m = map[string]any{"unparsable": string(b)}
	}
	c.mu.Lock()
	c.msgs = append(c.msgs, m)
	c.signalLocked()
	c.mu.Unlock()
}

func (c *appConn) end() {
	c.mu.Lock()
	c.ended = true
	c.signalLocked()
	c.mu.Unlock()
}

func (c *appConn) isEnded() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ended
}

func (c *appConn) signalLocked() {
	close(c.cond)
	c.cond = make(chan struct{})
}

// take waits for the first message not yet taken for which f holds, marks
// it taken and returns it.
func (c *appConn) take(deadline time.Time, f func(m map[string]any) bool) (map[string]any, bool) {
	return c.takeFrom(deadline, false, f)
}

// takeFrom is take; with fromWait it looks only after what the last wait
// took, and moves that point past what it takes.
func (c *appConn) takeFrom(deadline time.Time, fromWait bool, f func(m map[string]any) bool) (map[string]any, bool) {
	for {
		c.mu.Lock()
		for i, m := range c.msgs {
			if fromWait && i < c.waitFrom {
				continue
			}
			if !c.taken[i] && f(m) {
				c.taken[i] = true
				if fromWait {
					c.waitFrom = i + 1
				}
				c.mu.Unlock()
				return m, true
			}
		}
		ended, ch := c.ended, c.cond
		c.mu.Unlock()
		if ended {
			return nil, false
		}
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
			return nil, false
		}
	}
}

// kind is "response", "request" (from the server) or "notification".
func msgKind(m map[string]any) string {
	_, hasMethod := m["method"]
	_, hasID := m["id"]
	switch {
	case hasMethod && hasID:
		return "request"
	case hasMethod:
		return "notification"
	case hasID:
		return "response"
	}
	return "other"
}

func idText(v any) string { return canon(v) }

// appRunner runs one session against one side.
type appRunner struct {
	side    appSide
	sess    *appSession
	dirs    appDirs
	model   *mockmodel.Server
	cmd     *exec.Cmd
	waited  chan error
	wsURL   string
	conns   map[string]*appConn
	obs     *appObservation
	stderr  *lockedBuffer
	syncN   int
	lastReq map[string]map[string]any // per connection, the server request a reply answers
	execs   []func()                  // stop the session's exec-servers
}

var wsURLRE = regexp.MustCompile(`ws://127\.0\.0\.1:[0-9]+`)

// runAppSession plays sess on side, in dirs (created, empty).
func runAppSession(side appSide, sess *appSession, dirs appDirs) *appObservation {
	r := &appRunner{side: side, sess: sess, dirs: dirs, conns: map[string]*appConn{},
		obs:     &appObservation{notes: map[string][]map[string]any{}, vars: map[string]string{}, dirs: dirs},
		stderr:  &lockedBuffer{},
		lastReq: map[string]map[string]any{}}
	r.obs.vars["W"] = dirs.work
	r.obs.vars["H"] = dirs.home
	r.obs.vars["TMPDIR"] = dirs.tmp // the server's $TMPDIR
	for name, text := range sess.texts {
		r.obs.vars[name] = text
	}
	for _, name := range sess.execs {
		if err := r.startExecServer(name); err != nil {
			r.obs.fatal = err
			r.stop()
			return r.obs
		}
	}
	if err := r.start(); err != nil {
		r.obs.fatal = err
		r.stop()
		return r.obs
	}
	for _, st := range sess.steps {
		if err := r.step(st); err != nil {
			r.obs.fatal = fmt.Errorf("line %d: %v", st.line, err)
			break
		}
	}
	r.stop()
	for _, name := range r.obs.conns {
		c := r.conns[name]
		c.mu.Lock()
		for _, m := range c.msgs {
			if msgKind(m) == "notification" {
				r.obs.notes[name] = append(r.obs.notes[name], m)
			}
		}
		c.mu.Unlock()
	}
	r.obs.log = r.stderr.String()
	return r.obs
}

// appMockScript adds to the mock's markers DIFF:hold, a response that
// starts (response.created, response.in_progress) and then holds its
// stream open without an item until the client leaves: a turn that is
// running but has shown nothing of the model yet, wherever the interrupt or
// the steer lands; and DIFF:ask, a request_user_input call (a question
// with two options), then "thanks" once it is answered.
const appMockScript = `{"rules":[{"name":"hold","when":{"userContains":"DIFF:hold"},
 "respond":{"output":[{"type":"message","text":"held","deltas":1}],"stallAfter":2}},
 {"name":"ask","when":{"userContains":"DIFF:ask","step":0},
 "respond":{"output":[{"type":"function_call","name":"request_user_input","callId":"call_ask",
  "arguments":{"questions":[{"id":"color","header":"Color","question":"Which color?",
   "options":[{"label":"red","description":"warm"},{"label":"blue","description":"cold"}]}]}}]}},
 {"name":"ask-answered","when":{"userContains":"DIFF:ask","step":1},
 "respond":{"output":[{"type":"message","text":"thanks","deltas":1}]}}]}`

// appConfig is the config.toml both sides get; only the mock's URL differs.
func appConfig(modelURL string) string {
	return fmt.Sprintf(`model = "mock-model"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false
[analytics]
enabled = false
[feedback]
enabled = false
[otel]
exporter = "none"
[features]
plugins = false
remote_plugin = false
apps = false
in_app_updates = false
tool_suggest = false
[model_providers.mock]
name = "mock"
base_url = %q
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`, modelURL)
}

func (r *appRunner) start() error {
	script, err := mockmodel.ParseScript([]byte(appMockScript))
	if err != nil {
		return err
	}
	r.model = mockmodel.New(mockmodel.Options{Script: script})
	url, err := r.model.Start("127.0.0.1:0")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(r.dirs.home, "config.toml"), []byte(appConfig(url)+strings.ReplaceAll(r.sess.mcp, "$MCPTEST", os.Getenv("CODEXD_APPDIFF_MCPTEST"))), 0o644); err != nil {
		return err
	}
	for _, f := range r.sess.files {
		p := filepath.Join(r.dirs.work, f.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(f.content), 0o644); err != nil {
			return err
		}
	}
	args := []string{"app-server"}
	if r.sess.transport == "ws" {
		args = append(args, "--listen", "ws://127.0.0.1:0")
	}
	cmd := exec.Command(r.side.bin, args...)
	cmd.Dir = r.dirs.work
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + r.dirs.home,
		"CODEX_HOME=" + r.dirs.home,
		"TMPDIR=" + r.dirs.tmp,
		"RUST_LOG=error",
		"NO_COLOR=1",
		"LANG=C.UTF-8",
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	r.cmd = cmd
	switch r.sess.transport {
	case "stdio":
		cmd.Stderr = r.stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			return err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("starting %s app-server: %v", r.side.name, err)
		}
		r.waited = make(chan error, 1)
		go func() { r.waited <- cmd.Wait() }()
		var wmu sync.Mutex
		c := newAppConn("A", func(b []byte) error {
			wmu.Lock()
			defer wmu.Unlock()
			_, err := in.Write(append(b, '\n'))
			return err
		}, func() { _ = in.Close() })
		go func() {
			defer close(c.done)
			br := bufio.NewReaderSize(out, 1<<20)
			for {
				line, err := br.ReadBytes('\n')
				if len(bytes.TrimSpace(line)) > 0 {
					c.add(bytes.TrimSpace(line))
				}
				if err != nil {
					c.end()
					return
				}
			}
		}()
		r.conns["A"] = c
		r.obs.conns = append(r.obs.conns, "A")
	case "ws":
		// Codex prints its URL on stderr, codexd on stdout: look at both.
		pr, pw := io.Pipe()
		cmd.Stdout, cmd.Stderr = pw, pw
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("starting %s app-server: %v", r.side.name, err)
		}
		r.waited = make(chan error, 1)
		go func() { err := cmd.Wait(); _ = pw.Close(); r.waited <- err }()
		urlc := make(chan string, 1)
		go func() {
			br := bufio.NewReader(pr)
			sent := false
			for {
				line, err := br.ReadString('\n')
				_, _ = r.stderr.Write([]byte(line))
				if u := wsURLRE.FindString(line); u != "" && !sent {
					urlc <- u
					sent = true
				}
				if err != nil {
					if !sent {
						close(urlc)
					}
					return
				}
			}
		}()
		select {
		case u, ok := <-urlc:
			if !ok {
				return fmt.Errorf("%s app-server exited without printing its URL: %s", r.side.name, clip(r.stderr.String(), 2000))
			}
			r.wsURL = u
		case <-time.After(awaitTimeout):
			return fmt.Errorf("%s app-server printed no ws:// URL within %s", r.side.name, awaitTimeout)
		}
	default:
		return fmt.Errorf("unknown transport %q", r.sess.transport)
	}
	return nil
}

// conn returns the named client, dialling it on first use (WebSocket).
func (r *appRunner) conn(name string) (*appConn, error) {
	if c := r.conns[name]; c != nil {
		return c, nil
	}
	if r.sess.transport != "ws" {
		return nil, fmt.Errorf("client %s: a stdio session has one client, A", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), awaitTimeout)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, r.wsURL, nil)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %v", r.wsURL, err)
	}
	ws.SetReadLimit(64 << 20)
	c := newAppConn(name, func(b []byte) error {
		ctx, cancel := context.WithTimeout(context.Background(), awaitTimeout)
		defer cancel()
		return ws.Write(ctx, websocket.MessageText, b)
	}, func() { ws.CloseNow() })
	go func() {
		defer close(c.done)
		for {
			_, b, err := ws.Read(context.Background())
			if err != nil {
				c.end()
				return
			}
			c.add(b)
		}
	}()
	r.conns[name] = c
	r.obs.conns = append(r.obs.conns, name)
	return c, nil
}

// stop ends the clients and the server, and waits for them.
func (r *appRunner) stop() {
	for _, name := range r.obs.conns {
		c := r.conns[name]
		c.stop()
	}
	if r.cmd != nil && r.cmd.Process != nil && r.waited != nil {
		select {
		case <-r.waited:
		case <-time.After(2 * time.Second):
			// A stdio server ends at EOF; a WebSocket one never does.
			_ = r.cmd.Process.Kill()
			<-r.waited
		}
	}
	for _, name := range r.obs.conns {
		<-r.conns[name].done
	}
	if r.model != nil {
		_ = r.model.Close()
	}
	for _, stop := range r.execs {
		stop()
	}
}

// startExecServer starts the exec-server $name of the session: a
// `codexd exec-server` process (not in this process: an exec-server
// refuses connections from its own descendants, which the app-server
// would be), on a loopback WebSocket, confined to a root of its own.
func (r *appRunner) startExecServer(name string) error {
	root := filepath.Join(r.dirs.tmp, "exec-"+strings.ToLower(name))
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	cmd := exec.Command(os.Getenv("CODEXD_APPDIFF_BIN"), "exec-server", "--listen", "ws://127.0.0.1:0", "--root", root)
	cmd.Dir = root
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + r.dirs.home, "TMPDIR=" + r.dirs.tmp, "LANG=C.UTF-8"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stderr = r.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting exec-server %s: %v", name, err)
	}
	waited := make(chan struct{})
	r.execs = append(r.execs, func() {
		_ = cmd.Process.Kill()
		<-waited
	})
	urls := make(chan string, 1)
	go func() {
		defer close(waited)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u := wsURLRE.FindString(sc.Text()); u != "" {
				select {
				case urls <- u:
				default:
				}
			}
		}
		_ = cmd.Wait()
	}()
	select {
	case u := <-urls:
		r.obs.vars[name] = u
		r.obs.vars[name+"_ROOT"] = root
		return nil
	case <-waited:
		return fmt.Errorf("exec-server %s ended before it listened", name)
	case <-time.After(30 * time.Second):
		return fmt.Errorf("exec-server %s printed no URL", name)
	}
}

var appVarRE = regexp.MustCompile(`\$([A-Z][A-Z0-9_]*)`)

// expand replaces $NAME by the side's value of NAME; a name not bound
// is left as it is (the server then sees it).
func (r *appRunner) expand(s string) string {
	return appVarRE.ReplaceAllStringFunc(s, func(v string) string {
		if x, ok := r.obs.vars[v[1:]]; ok {
			return x
		}
		return v
	})
}

// expandJSON expands the variables inside the strings of a JSON text.
func (r *appRunner) expandJSON(raw string) string {
	return appVarRE.ReplaceAllStringFunc(raw, func(v string) string {
		x, ok := r.obs.vars[v[1:]]
		if !ok {
			return v
		}
		b, _ := json.Marshal(x)
		return string(b[1 : len(b)-1])
	})
}

func (r *appRunner) record(so appStepObs) { r.obs.steps = append(r.obs.steps, so) }

func (r *appRunner) step(st appStep) error {
	c, err := r.conn(st.conn)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(awaitTimeout)
	so := appStepObs{line: st.line, conn: st.conn}
	switch st.op {
	case "init":
		caps := "null"
		if st.arg != "" {
			caps = st.arg
		}
		msg := fmt.Sprintf(`{"id":"init","method":"initialize","params":{"clientInfo":{"name":"codexd-appdiff","title":null,"version":"1.0.0"},"capabilities":%s}}`, caps)
		so.desc, so.method = "initialize", "initialize"
		if err := c.write([]byte(msg)); err != nil {
			return err
		}
		so.msgs = append(so.msgs, r.answer(c, `"init"`, deadline))
		if err := c.write([]byte(`{"method":"initialized"}`)); err != nil {
			return err
		}
		// Both servers then report remote control's status, Codex from a
		// task of its own: wait for it, so that it is in what a short
		// session saw.
		if _, ok := c.take(deadline, func(m map[string]any) bool {
			return msgKind(m) == "notification" && m["method"] == "remoteControl/status/changed"
		}); !ok {
			so.msgs = append(so.msgs, map[string]any{"timeout": "no remoteControl/status/changed after initialize"})
		}
	case "send", "nowait":
		msg := r.expandJSON(st.arg)
		so.desc = msg
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		isReq := json.Unmarshal([]byte(msg), &m) == nil && m.Method != "" && len(m.ID) > 0
		so.method = m.Method
		if err := c.write([]byte(msg)); err != nil {
			so.msgs = append(so.msgs, map[string]any{"notSent": "connection closed"})
			break
		}
		switch {
		case st.op == "nowait":
			if !isReq {
				return fmt.Errorf("nowait needs a request with an id")
			}
			so.desc = "nowait " + so.desc
		case isReq:
			var id any
			_ = json.Unmarshal(m.ID, &id)
			a := r.answer(c, idText(id), deadline)
			so.msgs = append(so.msgs, a)
			if err := r.bind(st, a); err != nil {
				return err
			}
		default:
			so.msgs = append(so.msgs, r.sync(c, deadline)...)
		}
	case "await":
		so.desc = "await " + st.arg
		var id any
		_ = json.Unmarshal([]byte(st.arg), &id)
		a := r.answer(c, idText(id), deadline)
		so.msgs = append(so.msgs, a)
		if err := r.bind(st, a); err != nil {
			return err
		}
	case "wait":
		so.desc = "wait " + st.arg
		thread := r.expand(st.thread)
		m, ok := c.takeFrom(deadline, true, func(m map[string]any) bool {
			if msgKind(m) != "notification" || m["method"] != st.arg {
				return false
			}
			if thread == "" {
				return true
			}
			p, _ := m["params"].(map[string]any)
			return p["threadId"] == thread
		})
		if !ok {
			so.msgs = append(so.msgs, map[string]any{"timeout": "no " + st.arg})
			r.record(so)
			return fmt.Errorf("no %s notification on %s within %s", st.arg, c.name, awaitTimeout)
		}
		if err := r.bind(st, m); err != nil {
			return err
		}
		// The step records nothing: notifications are compared per thread.
		return nil
	case "request":
		so.desc = "request " + st.arg
		m, ok := c.take(deadline, func(m map[string]any) bool {
			return msgKind(m) == "request" && m["method"] == st.arg
		})
		if !ok {
			so.msgs = append(so.msgs, map[string]any{"timeout": "no server request " + st.arg})
			r.record(so)
			return fmt.Errorf("no server request %s on %s within %s", st.arg, c.name, awaitTimeout)
		}
		r.lastReq[c.name] = m
		so.msgs = append(so.msgs, m)
		if err := r.bind(st, m); err != nil {
			return err
		}
	case "reply":
		req := r.lastReq[c.name]
		if req == nil {
			return fmt.Errorf("reply with no server request taken on %s", c.name)
		}
		id, _ := json.Marshal(req["id"])
		body := strings.TrimSpace(r.expandJSON(st.arg))
		msg := `{"id":` + string(id) + `,` + body[1:]
		so.desc = "reply " + body
		if err := c.write([]byte(msg)); err != nil {
			so.msgs = append(so.msgs, map[string]any{"notSent": "connection closed"})
		}
	case "close":
		so.desc = "close " + c.name
		c.stop()
		<-c.done
	default:
		return fmt.Errorf("unknown step %q", st.op)
	}
	r.record(so)
	return nil
}

// answer waits for the response with id; a response with id null (a
// message the server could not read) answers too.
func (r *appRunner) answer(c *appConn, id string, deadline time.Time) any {
	m, ok := c.take(deadline, func(m map[string]any) bool {
		return msgKind(m) == "response" && (idText(m["id"]) == id || m["id"] == nil)
	})
	if !ok {
		if c.isEnded() {
			return map[string]any{"noAnswer": "connection closed"}
		}
		return map[string]any{"noAnswer": "timeout"}
	}
	return m
}

// sync sends a probe and waits for its answer, and returns the answers
// that came before it (to what was sent before, which was not a request
// the runner waits for).
func (r *appRunner) sync(c *appConn, deadline time.Time) []any {
	r.syncN++
	id := fmt.Sprintf(`"sync-%d"`, r.syncN)
	if c.write([]byte(`{"id":`+id+`,"method":"thread/loaded/list","params":{}}`)) != nil {
		return []any{map[string]any{"sync": "connection closed"}}
	}
	var out []any
	got, ok := c.take(deadline, func(m map[string]any) bool {
		return msgKind(m) == "response" && idText(m["id"]) == id
	})
	_ = got
	c.mu.Lock()
	for i, m := range c.msgs {
		if !c.taken[i] && msgKind(m) == "response" {
			c.taken[i] = true
			out = append(out, m)
		}
	}
	c.mu.Unlock()
	if !ok {
		out = append(out, map[string]any{"sync": "no answer"})
	}
	return out
}

// bind stores the values a step's bind names, from the message m.
func (r *appRunner) bind(st appStep, m any) error {
	for name, path := range st.bind {
		name, optional := strings.CutSuffix(name, "?")
		v, ok := lookupPath(m, path)
		if !ok && optional {
			continue
		}
		if !ok {
			return fmt.Errorf("bind %s: %s is not in %s", name, path, clip(canon(m), 600))
		}
		switch v := v.(type) {
		case string:
			r.obs.vars[name] = v
		case nil:
			r.obs.vars[name] = "null"
		default:
			r.obs.vars[name] = canon(v)
		}
	}
	return nil
}

// lookupPath follows a dotted path (object members, array indices).
func lookupPath(v any, path string) (any, bool) {
	for _, part := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[part]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}
