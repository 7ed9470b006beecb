package execserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"go.uber.org/goleak"

	"github.com/codexd/codexd/execproto"
	"github.com/codexd/codexd/execserver/procs"
	"github.com/codexd/codexd/jsonrpc"
	"github.com/codexd/codexd/sandbox"
)

func TestMain(m *testing.M) {
	// A process/start with a sandbox runs this binary as the sandbox helper.
	sandbox.RunHelperIfRequested()
	goleak.VerifyTestMain(m)
}

const deadline = 15 * time.Second

func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(deadline):
		t.Fatalf("%s: nothing within %v", what, deadline)
	}
	var zero T
	return zero
}

// client is a typed test client: a jsonrpc.Conn whose notifications land in
// channels.
type client struct {
	t       *testing.T
	conn    *jsonrpc.Conn
	output  chan execproto.ProcessOutputNotification
	exited  chan execproto.ProcessExitedNotification
	closed  chan execproto.ProcessClosedNotification
	missing chan execproto.FsMissingChangedNotification
	session string
}

func dial(t *testing.T, url string, header http.Header) (*client, error) {
	t.Helper()
	c := &client{
		t:       t,
		output:  make(chan execproto.ProcessOutputNotification, 2048),
		exited:  make(chan execproto.ProcessExitedNotification, 2048),
		closed:  make(chan execproto.ProcessClosedNotification, 2048),
		missing: make(chan execproto.FsMissingChangedNotification, 8),
	}
	mux := jsonrpc.NewMux()
	execproto.ProcessOutput.Register(mux, func(ctx context.Context, n execproto.ProcessOutputNotification) error {
		c.output <- n
		return nil
	})
	execproto.ProcessExited.Register(mux, func(ctx context.Context, n execproto.ProcessExitedNotification) error {
		c.exited <- n
		return nil
	})
	execproto.ProcessClosed.Register(mux, func(ctx context.Context, n execproto.ProcessClosedNotification) error {
		c.closed <- n
		return nil
	})
	execproto.FsMissingChanged.Register(mux, func(ctx context.Context, n execproto.FsMissingChangedNotification) error {
		c.missing <- n
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	st, err := jsonrpc.DialWebSocket(ctx, url, header, 0)
	if err != nil {
		return nil, err
	}
	c.conn = jsonrpc.NewConn(st, jsonrpc.Options{Handler: mux, CallTimeout: deadline})
	t.Cleanup(func() { c.conn.Close() })
	return c, nil
}

func connect(t *testing.T, url string, resume string) *client {
	t.Helper()
	c, err := dial(t, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.handshake(resume); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *client) handshake(resume string) error {
	p := execproto.InitializeParams{ClientName: "codexd-test"}
	if resume != "" {
		p.ResumeSessionID = &resume
	}
	res, err := execproto.Initialize.Call(context.Background(), c.conn, p)
	if err != nil {
		return err
	}
	c.session = res.SessionID
	return c.conn.Notify(context.Background(), execproto.MethodInitialized, nil)
}

func (c *client) start(id string, argv ...string) {
	c.t.Helper()
	_, err := execproto.ProcessStart.Call(context.Background(), c.conn, execproto.ProcessStartParams{
		ProcessID: id, Argv: argv, Cwd: execproto.PathURI(c.t.TempDir()),
		Env: map[string]string{"PATH": os.Getenv("PATH")}, PipeStdin: true,
	})
	if err != nil {
		c.t.Fatalf("start %s: %v", id, err)
	}
}

func rpcCode(err error) int64 {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func TestProcessNotificationsInOrder(t *testing.T) {
	_, url := newTestServer(t, Config{})
	c := connect(t, url, "")
	c.start("p", "sh", "-c", "printf out; printf err >&2; exit 3")
	var seqs []uint64
	got := map[execproto.OutputStream]string{}
	for len(got) < 2 {
		n := within(t, c.output, "output")
		got[n.Stream] += string(n.Chunk)
		seqs = append(seqs, n.Seq)
	}
	ex := within(t, c.exited, "exited")
	cl := within(t, c.closed, "closed")
	seqs = append(seqs, ex.Seq, cl.Seq)
	for i, s := range seqs {
		if s != uint64(i+1) {
			t.Fatalf("seqs = %v, want 1.. without gaps, closed last", seqs)
		}
	}
	if got["stdout"] != "out" || got["stderr"] != "err" || ex.ExitCode != 3 {
		t.Fatalf("output %v, exit %d", got, ex.ExitCode)
	}
}

func TestSessionResumeTakenAndUnknown(t *testing.T) {
	detached := make(chan string, 4)
	_, url := newTestServer(t, Config{}, func(s *Server) { s.testHookDetached = func(id string) { detached <- id } })
	a := connect(t, url, "")
	a.start("long", "sh", "-c", "echo one; read x; echo two")
	if n := within(t, a.output, "first line"); string(n.Chunk) != "one\n" {
		t.Fatalf("first output %q", n.Chunk)
	}
	a.conn.Close()
	within(t, detached, "detach")

	b := connect(t, url, a.session)
	if b.session != a.session {
		t.Fatalf("resumed session %s, want %s", b.session, a.session)
	}
	// The missed output is readable; nothing was lost.
	rd, err := execproto.ProcessRead.Call(context.Background(), b.conn, execproto.ProcessReadParams{ProcessID: "long"})
	if err != nil || len(rd.Chunks) != 1 || string(rd.Chunks[0].Chunk) != "one\n" {
		t.Fatalf("read after resume: %+v %v", rd, err)
	}
	// A third connection cannot take the attached session...
	cc, err := dial(t, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = cc.handshake(a.session)
	if rpcCode(err) != jsonrpc.CodeSessionTaken || !strings.Contains(err.Error(), "already attached") {
		t.Fatalf("resume of an attached session: %v", err)
	}
	// ...nor an unknown one, and it can still start a fresh session after.
	if err := cc.handshake("no-such-session"); rpcCode(err) != jsonrpc.CodeInvalidRequest || err.Error() != "unknown session id no-such-session" {
		t.Fatalf("unknown session: %v", err)
	}
	if err := cc.handshake(""); err != nil || cc.session == a.session {
		t.Fatalf("fresh session after failures: %v", err)
	}
	// The resumed connection drives the process on.
	wr, err := execproto.ProcessWrite.Call(context.Background(), b.conn, execproto.ProcessWriteParams{ProcessID: "long", Chunk: []byte("go\n"), WriteID: "w1"})
	if err != nil || wr.Status != "accepted" {
		t.Fatalf("write: %+v %v", wr, err)
	}
	if n := within(t, b.output, "second line"); string(n.Chunk) != "two\n" || n.Seq != 2 {
		t.Fatalf("second output %q seq %d", n.Chunk, n.Seq)
	}
	if cl := within(t, b.closed, "closed"); cl.Seq != 4 {
		t.Fatalf("closed seq %d", cl.Seq)
	}
}

func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// A zombie has ended; only its parent's reaping is left.
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

func TestSessionTTLKillsEveryProcessGroup(t *testing.T) {
	expired := make(chan string, 1)
	srv, url := newTestServer(t, Config{SessionTTL: 50 * time.Millisecond}, func(s *Server) {
		s.testHookExpired = func(id string) { expired <- id }
	})
	a := connect(t, url, "")
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pids")
	// A shell with a background grandchild: both must die with the session.
	a.start("tree", "sh", "-c", "sleep 300 & echo $! > "+pidfile+".tmp; echo $$ >> "+pidfile+".tmp; mv "+pidfile+".tmp "+pidfile+"; echo ready; wait")
	if n := within(t, a.output, "ready"); !strings.Contains(string(n.Chunk), "ready") {
		t.Fatalf("output %q", n.Chunk)
	}
	raw, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(raw)) {
		pid, _ := strconv.Atoi(f)
		pids = append(pids, pid)
	}
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("pid %d not running before the TTL", pid)
		}
	}
	a.conn.Close()
	within(t, expired, "session expiry")
	// Killed by then; dying may take a moment on a loaded machine (the
	// output is closed a little before the process is a zombie).
	for _, pid := range pids {
		if !diesWithin(t, pid, 5*time.Second) {
			t.Errorf("pid %d survived its session's TTL", pid)
		}
	}
	if n := srv.Sessions(); n != 0 {
		t.Fatalf("%d sessions left", n)
	}
}

func TestRootConfinementAndRemoveRefusal(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, url := newTestServer(t, Config{Roots: []string{root}})
	c := connect(t, url, "")
	ctx := context.Background()
	_, err := execproto.FsReadFile.Call(ctx, c.conn, execproto.FsReadFileParams{Path: execproto.PathURI(filepath.Join(outside, "secret"))})
	if rpcCode(err) != jsonrpc.CodeInvalidRequest {
		t.Fatalf("read outside the root: %v", err)
	}
	_, err = execproto.ProcessStart.Call(ctx, c.conn, execproto.ProcessStartParams{ProcessID: "x", Argv: []string{"true"}, Cwd: execproto.PathURI(outside), Env: map[string]string{}})
	if rpcCode(err) != jsonrpc.CodeInvalidRequest {
		t.Fatalf("cwd outside the root: %v", err)
	}
	// A path that resolves to "/": refused, and nothing is removed (the
	// server is confined to a temp dir, so even a bug could not delete
	// anything else).
	slash := "file://" + root + strings.Repeat("/..", strings.Count(root, "/")+2)
	_, err = execproto.FsRemove.Call(ctx, c.conn, execproto.FsRemoveParams{Path: slash})
	if rpcCode(err) != jsonrpc.CodeInvalidRequest {
		t.Fatalf("remove of %s: %v", slash, err)
	}
	if _, err := os.Stat(root); err != nil {
		t.Fatalf("root gone: %v", err)
	}
	// Inside the root, everything works.
	in := execproto.PathURI(filepath.Join(root, "f.txt"))
	if _, err := execproto.FsWriteFile.Call(ctx, c.conn, execproto.FsWriteFileParams{Path: in, DataBase64: "aGk="}); err != nil {
		t.Fatal(err)
	}
	rd, err := execproto.FsReadFile.Call(ctx, c.conn, execproto.FsReadFileParams{Path: in})
	if err != nil || rd.DataBase64 != "aGk=" {
		t.Fatalf("read back: %+v %v", rd, err)
	}
}

func TestLongPollDoesNotDelayOtherRequests(t *testing.T) {
	_, url := newTestServer(t, Config{})
	c := connect(t, url, "")
	c.start("sleeper", "sleep", "300")
	ctx := context.Background()
	pollDone := make(chan error, 1)
	go func() {
		wait := uint64(60_000)
		_, err := execproto.ProcessRead.Call(ctx, c.conn, execproto.ProcessReadParams{ProcessID: "sleeper", WaitMs: &wait})
		pollDone <- err
	}()
	f := filepath.Join(t.TempDir(), "x")
	if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	// While the long poll is parked, a read of a file is answered.
	for i := 0; i < 5; i++ {
		if _, err := execproto.FsReadFile.Call(ctx, c.conn, execproto.FsReadFileParams{Path: execproto.PathURI(f)}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-pollDone:
		t.Fatalf("the long poll ended early: %v", err)
	default:
	}
	res, err := execproto.ProcessTerminate.Call(ctx, c.conn, execproto.ProcessTerminateParams{ProcessID: "sleeper"})
	if err != nil || !res.Running {
		t.Fatalf("terminate: %+v %v", res, err)
	}
	if err := within(t, pollDone, "long poll"); err != nil {
		t.Fatal(err)
	}
	if ex := within(t, c.exited, "exited"); ex.ExitCode != 128+int32(syscall.SIGKILL) {
		t.Fatalf("exit code %d, want %d", ex.ExitCode, 128+int(syscall.SIGKILL))
	}
}

func TestHTTPListenerGuards(t *testing.T) {
	token := "s3cret"
	_, url := newTestServer(t, Config{AuthToken: token})
	httpURL := "http" + strings.TrimPrefix(url, "ws")
	get := func(path string, hdr map[string]string) int {
		req, _ := http.NewRequest("GET", httpURL+path, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("/readyz", nil); code != 200 {
		t.Fatalf("/readyz = %d", code)
	}
	if code := get("/healthz", nil); code != 200 {
		t.Fatalf("/healthz = %d", code)
	}
	if code := get("/readyz", map[string]string{"Origin": "https://evil.example"}); code != 403 {
		t.Fatalf("with Origin = %d, want 403", code)
	}
	if code := get("/", map[string]string{"Origin": "http://127.0.0.1"}); code != 403 {
		t.Fatalf("upgrade path with Origin = %d, want 403", code)
	}
	if _, err := dial(t, url, nil); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("dial without token: %v, want 401", err)
	}
	if _, err := dial(t, url, http.Header{"Authorization": {"Bearer wrong"}}); err == nil {
		t.Fatal("dial with a wrong token succeeded")
	}
	c, err := dial(t, url, http.Header{"Authorization": {"Bearer " + token}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.handshake(""); err != nil {
		t.Fatal(err)
	}
}

func TestWatchMissingNotifies(t *testing.T) {
	_, url := newTestServer(t, Config{})
	c := connect(t, url, "")
	target := filepath.Join(t.TempDir(), "later", "file")
	res, err := execproto.FsWatchMissing.Call(context.Background(), c.conn, execproto.FsWatchMissingParams{WatchID: 7, Missing: []string{execproto.PathURI(target)}})
	if err != nil || !res.Watching {
		t.Fatalf("watchMissing: %+v %v", res, err)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if n := within(t, c.missing, "fs/missingChanged"); n.WatchID != 7 {
		t.Fatalf("notification %+v", n)
	}
}

func TestHTTPRequest(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Seen", r.Method+" "+r.URL.Path)
		w.WriteHeader(201)
		fmt.Fprint(w, "made")
	}))
	defer upstream.Close()
	_, url := newTestServer(t, Config{})
	c := connect(t, url, "")
	res, err := execproto.HTTPRequest.Call(context.Background(), c.conn, execproto.HTTPRequestParams{Method: "POST", URL: upstream.URL + "/thing", RequestID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 201 || string(res.Body) != "made" {
		t.Fatalf("response %+v", res)
	}
	seen := ""
	for _, h := range res.Headers {
		if strings.EqualFold(h.Name, "X-Seen") {
			seen = h.Value
		}
	}
	if seen != "POST /thing" {
		t.Fatalf("headers %+v", res.Headers)
	}
}

func TestUnixAndStdioListeners(t *testing.T) {
	srv, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	sock := filepath.Join(t.TempDir(), "exec.sock")
	addr, _ := jsonrpc.ParseListenURL("unix://" + sock)
	l, err := srv.Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	if l.URL() != "unix://"+sock {
		t.Fatalf("URL %s", l.URL())
	}
	served := make(chan error, 1)
	go func() { served <- l.Serve(nil, nil) }()
	nc, err := (&netDialer{}).dial(sock)
	if err != nil {
		t.Fatal(err)
	}
	conn := jsonrpc.NewConn(jsonrpc.NewLineStream(nc, 0), jsonrpc.Options{})
	res, err := execproto.Initialize.Call(context.Background(), conn, execproto.InitializeParams{ClientName: "unix"})
	if err != nil || res.SessionID == "" {
		t.Fatalf("initialize over unix: %+v %v", res, err)
	}
	conn.Close()
	l.Close()
	if err := within(t, served, "serve"); err != nil {
		t.Fatal(err)
	}
}

type netDialer struct{}

func (netDialer) dial(path string) (net.Conn, error) { return net.Dial("unix", path) }

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestProcessChurnOverTheWire starts 1,000 short processes through one
// connection and checks that every one closes and that no descriptor is
// left behind; goleak (TestMain) checks the goroutines.
func TestProcessChurnOverTheWire(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 processes")
	}
	srv, url := newTestServer(t, Config{Procs: procsConfigForChurn()})
	c := connect(t, url, "")
	before := openFDs(t)
	const n = 1000
	const window = 50
	sem := make(chan struct{}, window)
	errs := make(chan error, n)
	go func() {
		for i := 0; i < n; i++ {
			sem <- struct{}{}
			_, err := execproto.ProcessStart.Call(context.Background(), c.conn, execproto.ProcessStartParams{
				ProcessID: fmt.Sprintf("churn-%d", i), Argv: []string{"true"}, Cwd: "file:///", Env: map[string]string{},
			})
			if err != nil {
				errs <- err
				return
			}
		}
	}()
	for i := 0; i < n; i++ {
		select {
		case <-c.closed:
			<-sem
		case err := <-errs:
			t.Fatal(err)
		case <-time.After(deadline):
			t.Fatalf("only %d of %d processes closed", i, n)
		}
	}
	c.conn.Close()
	srv.Close()
	if after := openFDs(t); after > before {
		t.Fatalf("%d descriptors open after the churn, %d before", after, before)
	}
}

// procsConfigForChurn keeps closed processes briefly, so that 1,000 of them
// do not all sit in the table; retention itself is tested in procs.
func procsConfigForChurn() procs.Config {
	return procs.Config{ClosedTTL: time.Second}
}

// TestTerminateGetsThroughBlockedWrites fills every handler slot with writes
// to children that never read their stdin; a terminate still gets through,
// and unblocks them.
func TestTerminateGetsThroughBlockedWrites(t *testing.T) {
	srv, url := newTestServer(t, Config{MaxConcurrency: 2})
	c := connect(t, url, "")
	ctx := context.Background()
	chunk := make([]byte, 64<<10)
	writesDone := make(chan error, 2)
	accepted := make(chan struct{}, 1024)
	// Writes to a child that is gone are accepted (and lost), as in Codex,
	// so the writers are told when to stop.
	stop := make(chan struct{})
	for _, id := range []string{"a", "b"} {
		c.start(id, "sleep", "300")
		go func(id string) {
			var err error
			for i := 0; err == nil && i < 400; i++ {
				select {
				case <-stop:
					writesDone <- nil
					return
				default:
				}
				var res execproto.ProcessWriteResponse
				res, err = execproto.ProcessWrite.Call(ctx, c.conn, execproto.ProcessWriteParams{ProcessID: id, Chunk: chunk, WriteID: fmt.Sprint(i)})
				if err == nil && res.Status != "accepted" {
					break // the child is gone
				}
				if err == nil {
					accepted <- struct{}{}
				}
			}
			writesDone <- err
		}(id)
	}
	// sleep never reads: once a child's pipe (64 KiB) and its stdin queue
	// (128 writes) are full, its next write parks in a handler slot. Wait
	// until both have filled theirs; terminate must not wait for a slot.
	for i := 0; i < 2*130; i++ {
		within(t, accepted, "accepted writes")
	}
	// Each writer has one write in flight at a time: two in flight now
	// means both are parked.
	waitFor(t, "both writes parked", func() bool {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		for conn := range srv.conns {
			return conn.InFlight() == 2
		}
		return false
	})
	for _, id := range []string{"a", "b"} {
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := execproto.ProcessTerminate.Call(tctx, c.conn, execproto.ProcessTerminateParams{ProcessID: id})
		cancel()
		if err != nil {
			t.Fatalf("terminate %s: %v", id, err)
		}
	}
	close(stop)
	for i := 0; i < 2; i++ {
		if err := within(t, writesDone, "writes end"); err != nil && rpcCode(err) == 0 {
			t.Fatalf("writes: %v", err)
		}
	}
}

// waitFor waits until cond holds, checking it on a ticker, for at most the
// test deadline. It waits for a state, not for time to pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	limit := time.After(deadline)
	for !cond() {
		select {
		case <-tick.C:
		case <-limit:
			t.Fatalf("%s: not within %v", what, deadline)
		}
	}
}

// TestPipelinedHandshake sends initialize, initialized and a request without
// waiting in between, which Codex (one message at a time) accepts.
func TestPipelinedHandshake(t *testing.T) {
	_, url := newTestServer(t, Config{})
	w := dialWS(t, url)
	w.send([]byte(`{"id":1,"method":"initialize","params":{"clientName":"pipelined"}}`))
	w.send([]byte(`{"method":"initialized"}`))
	w.send([]byte(`{"id":2,"method":"environment/status"}`))
	if got := string(w.recv()); !strings.HasPrefix(got, `{"id":1,"result":{"sessionId"`) {
		t.Fatalf("first answer %s", got)
	}
	if got := string(w.recv()); got != `{"id":2,"result":{"status":"ready"}}` {
		t.Fatalf("second answer %s", got)
	}
}

func TestOutputParamsEncodeLikeMarshal(t *testing.T) {
	for _, tc := range []execproto.ProcessOutputNotification{
		{ProcessID: "p-1", Seq: 7, Stream: "stdout", Chunk: []byte("hi\n")},
		{ProcessID: "quote\"and\\slash é", Seq: 1 << 40, Stream: "pty", Chunk: []byte{0, 255, 10}},
		{ProcessID: "", Seq: 1, Stream: "stderr", Chunk: []byte{}},
	} {
		want, err := json.Marshal(tc)
		if err != nil {
			t.Fatal(err)
		}
		qid, _ := jsontext.AppendQuote(nil, tc.ProcessID)
		got := appendOutputParams(nil, qid, tc.Seq, string(tc.Stream), tc.Chunk)
		if string(got) != string(want) {
			t.Errorf("hand encoding\n got %s\nwant %s", got, want)
		}
	}
}
